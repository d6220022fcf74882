#include "costmodel/cost_source_registry.hpp"

#include "support/plugins.hpp"

namespace mutwo::costmodel {

std::vector<std::string> CostSourceRegistry::trace_readers() const {
  std::vector<std::string> out;
  for (const CostSourceInfo& s : entries()) {
    if (s.reads_measured_traces) out.push_back(s.name);
  }
  return out;
}

std::vector<std::string> CostSourceRegistry::profile_readers() const {
  std::vector<std::string> out;
  for (const CostSourceInfo& s : entries()) {
    if (s.reads_calibration_profiles) out.push_back(s.name);
  }
  return out;
}

void register_builtin_cost_sources(CostSourceRegistry& registry) {
  Plugins<CostSourceRegistry>::register_all(registry);
}

const CostSourceRegistry& builtin_cost_sources() {
  static const CostSourceRegistry registry = [] {
    CostSourceRegistry r;
    register_builtin_cost_sources(r);
    return r;
  }();
  return registry;
}

}  // namespace mutwo::costmodel
