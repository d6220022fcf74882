#include "experiments/experiment_kind.hpp"

#include "support/plugins.hpp"

namespace mutwo::experiments {

void register_builtin_experiment_kinds(ExperimentKindRegistry& registry) {
  Plugins<ExperimentKindRegistry>::register_all(registry);
}

const ExperimentKindRegistry& builtin_experiment_kinds() {
  static const ExperimentKindRegistry registry = [] {
    ExperimentKindRegistry r;
    register_builtin_experiment_kinds(r);
    return r;
  }();
  return registry;
}

}  // namespace mutwo::experiments
