#include "policies/policy_registry.hpp"

#include "support/plugins.hpp"

namespace mutwo::policies {

void register_builtin_policies(PolicyRegistry& registry) {
  Plugins<PolicyRegistry>::register_all(registry);
}

const PolicyRegistry& builtin_policies() {
  static const PolicyRegistry registry = [] {
    PolicyRegistry r;
    register_builtin_policies(r);
    return r;
  }();
  return registry;
}

}  // namespace mutwo::policies
