// The `calibrated` cost source, a GPU's calibration profile (costmodel/calibrated_cost_model.hpp): registered
// by this file (support/plugins.hpp).
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::costmodel {
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
  return std::make_unique<CalibratedCostModel>(device, std::move(*profile), AnalyticOptions{},
                                               inputs.wave_model);
}

void register_source(CostSourceRegistry& registry) {
  registry.add(
      {"calibrated",
       "per-kernel wave quantization and saturating efficiency per kernel and precision, fitted by least "
       "squares to measured kernel times (a device's calibration profile: --profile, or the shipped "
       "one); kernels the profile has not timed are priced by waves",
       "Yu et al., Habitat: A Runtime-Based Computational Performance Predictor for Deep Neural Network "
       "Training, USENIX ATC 2021 (wave scaling); measured times from Baidu DeepBench",
       make_calibrated, /*reads_measured_traces=*/false, /*requires_measured_traces=*/false,
       /*reads_calibration_profiles=*/true});
}

[[maybe_unused]] const bool kRegistered = Plugins<CostSourceRegistry>::add(40, register_source);

}  // namespace
}  // namespace mutwo::costmodel
