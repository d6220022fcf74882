// The `analytic` cost source, the roofline with per-category efficiencies
// (costmodel/analytic_cost_model.hpp): registered by this file (support/plugins.hpp).
#include <memory>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "support/plugins.hpp"

namespace mutwo::costmodel {
namespace {

void register_source(CostSourceRegistry& registry) {
  registry.add({"analytic",
                "roofline on the catalog's per-dtype peaks and HBM bandwidth, per-category efficiency rising "
                "with work per kernel, plus launch overhead",
                "Williams, Waterman, Patterson, Roofline: An Insightful Visual Performance Model, CACM 2009",
                [](const DeviceSpec& device, const CostSourceInputs&) {
                  return std::make_unique<AnalyticCostModel>(device);
                }});
}

[[maybe_unused]] const bool kRegistered = Plugins<CostSourceRegistry>::add(20, register_source);

}  // namespace
}  // namespace mutwo::costmodel
