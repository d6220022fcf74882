#include "policies/policy_registry.hpp"

namespace mutwo::policies {

void register_builtin_policies(PolicyRegistry& registry) {
  register_none_policy(registry);
  register_checkpoint_policy(registry);
  register_vdnn_policy(registry);
  register_capuchin_policy(registry);
  register_mutwo_policy(registry);
  register_dtr_policy(registry);
#ifdef MUTWO_WITH_CBC
  register_checkmate_policy(registry);
#endif
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
