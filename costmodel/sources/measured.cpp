// The `measured` cost source, profiled per-op durations (costmodel/measured_cost_model.hpp): registered by
// this file (support/plugins.hpp).
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::costmodel {
namespace {

// Cross-GPU scaling of a trace measured on another catalog GPU than `device`, when both have a
// calibration profile; nullopt otherwise (the trace's times are used as measured).
std::optional<CrossDeviceScaling> cross_device_scaling(const DeviceSpec& device,
                                                       const CostSourceInputs& inputs) {
  if (inputs.measured_traces.empty()) return std::nullopt;
  const std::optional<std::string> measured_on = match_device(inputs.measured_traces.front().device);
  if (!measured_on || *measured_on == device.name) return std::nullopt;
  const DeviceSpec from_device = find_device(*measured_on);
  std::optional<CalibrationProfile> from = find_calibration_profile(from_device, inputs.calibration_profiles);
  std::optional<CalibrationProfile> to = find_calibration_profile(device, inputs.calibration_profiles);
  if (!from || !to || from->device == to->device) return std::nullopt;
  CrossDeviceScaling scaling;
  scaling.from = std::make_shared<CalibratedCostModel>(from_device, std::move(*from), AnalyticOptions{},
                                                       inputs.wave_model);
  scaling.to =
      std::make_shared<CalibratedCostModel>(device, std::move(*to), AnalyticOptions{}, inputs.wave_model);
  return scaling;
}

void register_source(CostSourceRegistry& registry) {
  // Ops without a measurement: analytic on the same device, which prices every catalog device
  // (docs/ARCHITECTURE.md "Cost model").
  registry.add({"measured",
                "per-op durations measured by `mutwo profile` (median over iterations), matched by op "
                "signature; ops not measured fall back to analytic",
                "Purandare et al., \"μ-TWO: 3x Faster Multi-Model Training with Orchestration and Memory "
                "Optimization\", MLSys 2023 (per-op profiling over a few iterations)",
                [](const DeviceSpec& device, const CostSourceInputs& inputs) -> std::unique_ptr<OpCostModel> {
                  if (inputs.measured_traces.empty()) {
                    throw Error("cost source 'measured' needs at least one measured trace (--trace FILE)");
                  }
                  auto model = std::make_unique<MeasuredCostModel>(
                      inputs.measured_traces, std::make_unique<AnalyticCostModel>(device));
                  if (std::optional<CrossDeviceScaling> s = cross_device_scaling(device, inputs)) {
                    model->set_cross_device_scaling(std::move(*s));
                  }
                  return model;
                },
                /*reads_measured_traces=*/true, /*requires_measured_traces=*/true,
                /*reads_calibration_profiles=*/true});
}

[[maybe_unused]] const bool kRegistered = Plugins<CostSourceRegistry>::add(30, register_source);

}  // namespace
}  // namespace mutwo::costmodel
