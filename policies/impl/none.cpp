// none: the base schedule unchanged (every op once, each tensor freed after its last reader). The
// baseline every other policy is measured against.
#include <utility>

#include "policies/policy_registry.hpp"
#include "policies/policy_result.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

namespace {

class NonePolicy : public MemoryPolicy {
 public:
  std::string_view name() const override { return "none"; }
  PolicyResult plan(const PolicyInput& input) const override {
    check_policy_input(input, name());
    ir::Schedule s = *input.base;
    s.policy = "none";
    return evaluate_schedule(std::move(s), input, "no swaps, no recomputation");
  }
};

}  // namespace

namespace {

void register_none_policy(PolicyRegistry& registry) {
  registry.add({"none", "keep every tensor on the device (no swaps, no recomputation)", "baseline",
                [] { return std::make_unique<NonePolicy>(); }});
}

[[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(10, register_none_policy);

}  // namespace

}  // namespace mutwo::policies
