#pragma once
// Swap/recompute policies by name: factory, one-line description and the paper it implements.
// Adding a policy: one file under policies/impl/ that registers itself (support/plugins.hpp), and its
// line in policies/CMakeLists.txt.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "policies/memory_policy.hpp"
#include "support/registry.hpp"

namespace mutwo::policies {

struct PolicyInfo {
  std::string name;         // "capuchin"
  std::string description;  // one line, for --help
  std::string citation;     // "Peng et al., ASPLOS 2020"
  std::function<std::unique_ptr<MemoryPolicy>()> create;
  // Tried by `mutwo search` when no --policies are given (default_search_policies); a policy that
  // is too slow for every sub-array of a sweep says false in its own registration.
  bool in_default_search = true;
  // Decides before the step runs (a fixed schedule). Dynamic policies (DTR) decide while it runs at
  // a budget; the search does not wrap them in static model-state offload (state_offload.hpp).
  bool static_plan = true;
};

// Adds throw Error on a duplicate name, a missing name or factory; find and create throw
// UnknownNameError "unknown policy 'x'; valid: none, checkpoint, ...".
class PolicyRegistry : public Registry<PolicyInfo> {
 public:
  PolicyRegistry() : Registry("policy") {}
  const std::vector<PolicyInfo>& policies() const { return entries(); }  // in registration order
};

// Every policy registered by its own file (support/plugins.hpp; the built-ins under policies/impl/,
// ranked none 10, checkpoint 20, vdnn 30, capuchin 40, mutwo 50, dtr 60, checkmate 70), in rank order.
void register_builtin_policies(PolicyRegistry& registry);
// A registry with the built-ins, built once.
const PolicyRegistry& builtin_policies();

}  // namespace mutwo::policies
