// Recommendation-model kinds (DLRM): embedding bag, concat, dot interaction, BCE with logits.
#include "profiles/kind_rules.hpp"

namespace mutwo::profiles {

void register_recsys_kinds(KindRulesTable& table) { (void)table; }

}  // namespace mutwo::profiles
