// Data-movement kinds: embedding, ViT class token, token select.
#include "profiles/kind_rules.hpp"

namespace mutwo::profiles {

void register_data_kinds(KindRulesTable& table) { (void)table; }

}  // namespace mutwo::profiles
