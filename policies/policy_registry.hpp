#pragma once
// Swap/recompute policies by name: factory, one-line description and the paper it implements.
// Adding a policy: one file under policies/impl/ and one line in register_builtin_policies.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policies/memory_policy.hpp"

namespace mutwo::policies {

struct PolicyInfo {
  std::string name;         // "capuchin"
  std::string description;  // one line, for --help
  std::string citation;     // "Peng et al., ASPLOS 2020"
  std::function<std::unique_ptr<MemoryPolicy>()> create;
};

class PolicyRegistry {
 public:
  void add(PolicyInfo info);  // throws Error on a duplicate name or a missing factory
  // Throws UnknownNameError: "unknown policy 'x'; valid: none, checkpoint, ...".
  const PolicyInfo& find(std::string_view name) const;
  bool contains(std::string_view name) const;
  const std::vector<PolicyInfo>& policies() const { return policies_; }  // in registration order
  std::vector<std::string> names() const;
  std::unique_ptr<MemoryPolicy> create(std::string_view name) const;  // find(name).create()

 private:
  std::vector<PolicyInfo> policies_;
};

// One registration function per file under policies/impl/.
void register_none_policy(PolicyRegistry& registry);        // impl/none.cpp
void register_checkpoint_policy(PolicyRegistry& registry);  // impl/checkpoint.cpp
void register_vdnn_policy(PolicyRegistry& registry);        // impl/vdnn.cpp
void register_capuchin_policy(PolicyRegistry& registry);    // impl/capuchin.cpp
void register_mutwo_policy(PolicyRegistry& registry);       // impl/mutwo.cpp
void register_dtr_policy(PolicyRegistry& registry);         // impl/dtr.cpp
void register_checkmate_policy(PolicyRegistry& registry);   // impl/checkmate.cpp

// Calls every register_*_policy above, in that order.
void register_builtin_policies(PolicyRegistry& registry);
// A registry with the built-ins, built once.
const PolicyRegistry& builtin_policies();

}  // namespace mutwo::policies
