#include "profiles/models/model_registry.hpp"

namespace mutwo::profiles {

void register_dlrm_models(ModelRegistry& registry) { (void)registry; }

}  // namespace mutwo::profiles
