#pragma once
// One assembly of a run's cost model, for the command line (simulate, search, run, profile, trace)
// and experiment specs alike: a catalog GPU with per-run overrides, and a cost source by name with
// the inputs its registry entry says it reads (measured traces). Nothing here names a source: what
// a source takes is declared in its CostSourceInfo.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/calibration_profile.hpp"
#include "costmodel/device_overrides.hpp"
#include "costmodel/device_spec.hpp"
#include "costmodel/op_cost_model.hpp"
#include "io/trace_file.hpp"
#include "io/trace_import.hpp"

namespace mutwo::costmodel {

// The catalog GPU a setup names when nothing else picks one (`mutwo search` with no arguments).
inline constexpr const char* kDefaultGpu = "a100-40gb";
// The cost source a setup takes when none is named: the wave model (waves_cost_model.hpp).
inline constexpr const char* kDefaultCostSource = "waves";

struct CostSetup {
  // Catalog name. Empty: for a source that reads measured traces, the catalog GPU the first trace
  // was measured on (match_device; a trace from "cpu" or an unknown GPU names none); else
  // default_gpu.
  std::string gpu;
  std::string default_gpu = kDefaultGpu;         // `mutwo run`: the catalog GPU of the executing device
  DeviceOverrides overrides;                     // memory limit, host link, ...
  std::string cost_source = kDefaultCostSource;  // builtin_cost_sources() name
  // Measured traces (any format io::import_trace reads), for sources that read them; paths
  // as the caller resolved them (specs: against the spec's folder). Messages name them as given.
  std::vector<std::string> trace_files;
  std::optional<io::TraceFormat> trace_format;  // nullopt: each file's format by content
  // How messages name the traces input: "--trace" on the command line, "'sweep.traces'" in a spec.
  std::string traces_name = "--trace";
  // Calibration profiles (`mutwo calibrate -o`) for sources that read them (calibrated; measured
  // across GPUs); the shipped profiles are used for devices none of these calibrates. With no GPU
  // named and no trace, the first profile's device is simulated.
  std::vector<std::string> profile_files;
  // The traces are the step to simulate (`mutwo simulate --trace`), not only measurements: any cost
  // source may price them, and an execution trace needs no profiler trace when the source does not
  // read measured durations.
  bool traces_are_step = false;
};

// A setup's inputs, read once: the measured traces in trace_files order, and what their importers
// assumed (warnings, each naming its file) for the caller to show.
struct CostInputs {
  std::vector<ir::Trace> traces;
  std::vector<std::string> warnings;
  std::vector<CalibrationProfile> profiles{};  // profile_files, in order
};

// Checks names and inputs without reading a file: throws UnknownNameError for an unknown source,
// mutwo::Error when traces are given to a source that does not read them ("--trace is read only
// by --cost-source measured; cost source 'analytic' ignores it") and when a trace or profile file
// is given twice (support::first_repeated_file).
void check_cost_setup(const CostSetup& setup);

// Reads trace_files (call check_cost_setup first to refuse them for a source that does not read
// them): throws mutwo::Error naming the file when one cannot be read or serve as a measurement.
CostInputs read_cost_inputs(const CostSetup& setup);

// The setup's GPU (see CostSetup::gpu) with the overrides applied; throws UnknownNameError for an
// unknown GPU, mutwo::Error for an override out of range.
DeviceSpec resolve_device(const CostSetup& setup, const CostInputs& inputs);

// The setup's cost source on `device` (a caller that changed the resolved device passes its own).
// Throws what check_cost_setup throws, mutwo::Error when the traces were measured on different
// devices, or what the source's factory throws (measured without a trace: "cost source 'measured'
// needs at least one measured trace (--trace FILE)").
std::unique_ptr<OpCostModel> make_cost_model(const CostSetup& setup, const CostInputs& inputs,
                                             const DeviceSpec& device);
// make_cost_model on resolve_device(setup, inputs).
std::unique_ptr<OpCostModel> make_cost_model(const CostSetup& setup, const CostInputs& inputs);

// check_cost_setup, read_cost_inputs and make_cost_model in one call (the importers' warnings are
// dropped); the model's device() is the resolved device.
std::unique_ptr<OpCostModel> make_cost_model(const CostSetup& setup);

}  // namespace mutwo::costmodel
