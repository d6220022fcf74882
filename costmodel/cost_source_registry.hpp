#pragma once
// Op cost sources by name: factory from a device (and measured traces), one-line description and
// the work it follows.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibration_profile.hpp"
#include "costmodel/op_cost_model.hpp"
#include "costmodel/wave_model.hpp"
#include "io/trace_file.hpp"
#include "support/registry.hpp"

namespace mutwo::costmodel {

// What a source may need beyond the device; sources ignore what they do not read.
struct CostSourceInputs {
  std::vector<ir::Trace> measured_traces;  // `measured`: traces with op_duration_ns
  // `calibrated` (and `measured` across GPUs): profiles given (--profile), looked up before the
  // shipped ones by find_calibration_profile.
  std::vector<CalibrationProfile> calibration_profiles{};
  // `waves`: a wave model to price with (a fit of one's own); null: the shipped one.
  std::shared_ptr<const WaveModel> wave_model{};
};

struct CostSourceInfo {
  std::string name;         // "analytic"
  std::string description;  // one line, for --help
  std::string citation;     // the paper or method it implements
  // Builds the source on `device` (memory, host link and any analytic pricing come from it).
  std::function<std::unique_ptr<OpCostModel>(const DeviceSpec&, const CostSourceInputs&)> create;
  // The inputs it takes, so that the command line and experiment specs check them without naming
  // sources: reads CostSourceInputs::measured_traces, and cannot price anything without one.
  bool reads_measured_traces = false;
  bool requires_measured_traces = false;
  bool reads_calibration_profiles{false};  // reads CostSourceInputs::calibration_profiles
};

// Adds throw Error on a duplicate name, a missing name or factory; find and create throw
// UnknownNameError "unknown cost source 'x'; valid: analytic, ...".
class CostSourceRegistry : public Registry<CostSourceInfo> {
 public:
  CostSourceRegistry() : Registry("cost source") {}
  const std::vector<CostSourceInfo>& sources() const { return entries(); }  // in registration order
  // find(name).create(device, inputs)
  std::unique_ptr<OpCostModel> create(std::string_view name, const DeviceSpec& device,
                                      const CostSourceInputs& inputs = {}) const {
    return find(name).create(device, inputs);
  }
  // Names of the sources that read measured traces, in registration order.
  std::vector<std::string> trace_readers() const;
  // Names of the sources that read calibration profiles, in registration order.
  std::vector<std::string> profile_readers() const;
};

// Every source registered by its own file under costmodel/sources/ (support/plugins.hpp), in rank
// order: waves 10 (the default), analytic 20, measured 30, calibrated 40.
void register_builtin_cost_sources(CostSourceRegistry& registry);
// A registry with the built-ins, built once.
const CostSourceRegistry& builtin_cost_sources();

}  // namespace mutwo::costmodel
