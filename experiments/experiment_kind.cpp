#include "experiments/experiment_kind.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "profiles/error.hpp"

namespace mutwo::experiments {

void ExperimentKindRegistry::add(std::unique_ptr<ExperimentKind> kind) {
  for (const auto& k : kinds_) {
    if (k->name() == kind->name())
      throw Error(fmt::format("experiment kind '{}' registered twice", kind->name()));
  }
  kinds_.push_back(std::move(kind));
}

const ExperimentKind& ExperimentKindRegistry::find(std::string_view name) const {
  for (const auto& k : kinds_) {
    if (k->name() == name) return *k;
  }
  throw UnknownNameError(
      fmt::format("unknown experiment kind '{}'; valid: {}", name, fmt::join(names(), ", ")));
}

std::vector<std::string> ExperimentKindRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& k : kinds_) out.emplace_back(k->name());
  return out;
}

void register_builtin_experiment_kinds(ExperimentKindRegistry& registry) {
  register_strategies_kind(registry);
  register_policies_kind(registry);
  register_dtr_kind(registry);
  register_measured_kind(registry);
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
