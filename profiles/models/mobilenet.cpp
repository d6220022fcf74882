#include "profiles/models/model_registry.hpp"

namespace mutwo::profiles {

void register_mobilenet_models(ModelRegistry& registry) { (void)registry; }

}  // namespace mutwo::profiles
