#include "costmodel/cost_source_registry.hpp"

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "profiles/error.hpp"

namespace mutwo::costmodel {

std::vector<std::string> CostSourceRegistry::trace_readers() const {
  std::vector<std::string> out;
  for (const CostSourceInfo& s : entries()) {
    if (s.reads_measured_traces) out.push_back(s.name);
  }
  return out;
}

void register_builtin_cost_sources(CostSourceRegistry& registry) {
  registry.add({"analytic",
                "roofline on the catalog's per-dtype peaks and HBM bandwidth, per-category efficiency rising "
                "with work per kernel, plus launch overhead",
                "Williams, Waterman, Patterson, Roofline: An Insightful Visual Performance Model, CACM 2009",
                [](const DeviceSpec& device, const CostSourceInputs&) {
                  return std::make_unique<AnalyticCostModel>(device);
                }});
  // DESIGN.md falls back to the calibrated source; until it exists, analytic on the same device.
  registry.add({"measured",
                "per-op durations measured by `mutwo profile` (median over iterations), matched by op "
                "signature; ops not measured fall back to analytic",
                "Purandare et al., \"μ-TWO: 3x Faster Multi-Model Training with Orchestration and Memory "
                "Optimization\", MLSys 2023 (per-op profiling over a few iterations)",
                [](const DeviceSpec& device, const CostSourceInputs& inputs) -> std::unique_ptr<OpCostModel> {
                  if (inputs.measured_traces.empty()) {
                    throw Error("cost source 'measured' needs at least one measured trace (--trace FILE)");
                  }
                  return std::make_unique<MeasuredCostModel>(inputs.measured_traces,
                                                             std::make_unique<AnalyticCostModel>(device));
                },
                /*reads_measured_traces=*/true, /*requires_measured_traces=*/true});
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
