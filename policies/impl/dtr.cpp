// Work in progress this session: registers nothing until the policy lands.
#include "policies/policy_registry.hpp"

namespace mutwo::policies {

void register_dtr_policy(PolicyRegistry&) {}

}  // namespace mutwo::policies
