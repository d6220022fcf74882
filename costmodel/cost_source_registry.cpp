#include "costmodel/cost_source_registry.hpp"

#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "costmodel/waves_cost_model.hpp"
#include "support/error.hpp"

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

namespace {

// `calibrated` on `device`: its profile among those given, else the shipped one.
std::unique_ptr<OpCostModel> make_calibrated(const DeviceSpec& device, const CostSourceInputs& inputs) {
  std::optional<CalibrationProfile> profile = find_calibration_profile(device, inputs.calibration_profiles);
  if (!profile) {
    std::vector<std::string> shipped;
    for (const CalibrationProfile& p : shipped_calibration_profiles()) shipped.push_back(p.device);
    throw Error(
        fmt::format("cost source 'calibrated': no calibration profile for device '{}' (shipped: {}); fit one "
                    "with `mutwo calibrate ... -o PROFILE.json` and pass --profile PROFILE.json",
                    device.name, fmt::join(shipped, ", ")));
  }
  return std::make_unique<CalibratedCostModel>(device, std::move(*profile));
}

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
  scaling.from = std::make_shared<CalibratedCostModel>(from_device, std::move(*from));
  scaling.to = std::make_shared<CalibratedCostModel>(device, std::move(*to));
  return scaling;
}

}  // namespace

void register_builtin_cost_sources(CostSourceRegistry& registry) {
  registry.add(
      {"waves",
       "each kernel by the wave model: waves of tiles on the SMs, the tail wave, memory-bound kernels from "
       "HBM or L2, per-kernel cost; fitted across GPUs on measured kernels (NeuSight, DeepBench) and "
       "priced from the GPU's datasheet, refined by its own kernels where measured",
       "Lee et al., NeuSight, ASPLOS 2025 (tiles and waves across GPUs); Yu et al., Habitat, USENIX ATC "
       "2021 (wave scaling); measured kernels from NeuSight and Baidu DeepBench",
       [](const DeviceSpec& device, const CostSourceInputs& inputs) -> std::unique_ptr<OpCostModel> {
         std::shared_ptr<const WaveModel> model =
             inputs.wave_model
                 ? inputs.wave_model
                 : std::shared_ptr<const WaveModel>(&shipped_wave_model(), [](const WaveModel*) {});
         return std::make_unique<WaveCostModel>(device, std::move(model));
       }});
  registry.add({"analytic",
                "roofline on the catalog's per-dtype peaks and HBM bandwidth, per-category efficiency rising "
                "with work per kernel, plus launch overhead",
                "Williams, Waterman, Patterson, Roofline: An Insightful Visual Performance Model, CACM 2009",
                [](const DeviceSpec& device, const CostSourceInputs&) {
                  return std::make_unique<AnalyticCostModel>(device);
                }});
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
  registry.add(
      {"calibrated",
       "per-kernel wave quantization and saturating efficiency per kernel and precision, fitted by least "
       "squares to measured kernel times (a device's calibration profile: --profile, or the shipped "
       "one); ops without calibration data fall back to analytic",
       "Yu et al., Habitat: A Runtime-Based Computational Performance Predictor for Deep Neural Network "
       "Training, USENIX ATC 2021 (wave scaling); measured times from Baidu DeepBench",
       make_calibrated, /*reads_measured_traces=*/false, /*requires_measured_traces=*/false,
       /*reads_calibration_profiles=*/true});
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
