#pragma once
// The device and cost-model flags `simulate` and `search` share (--gpu, --memory, --h2d-gbps,
// --d2h-gbps, --half-duplex, --cost-source, --trace), and turning them into a device and a cost model.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "costmodel/cost_setup.hpp"
#include "costmodel/device_spec.hpp"
#include "costmodel/op_cost_model.hpp"
#include "io/trace_file.hpp"
#include "ir/graph.hpp"
#include "support/text_file.hpp"

namespace mutwo::cli {

struct DeviceFlags {
  std::string gpu = "a100-40gb";
  bool gpu_given = false;  // --gpu on the command line (else a measured trace may pick the device)
  std::string memory;      // "16GiB"; empty: the device's memory
  double h2d_gbps = 0;     // 0: the device's link
  double d2h_gbps = 0;
  bool half_duplex = false;
  double host_optimizer_gbps = 0;  // 0: the catalog's
  std::string cost_source = costmodel::kDefaultCostSource;
  bool cost_source_given = false;
  std::vector<std::string> traces;  // --trace FILE (repeatable): measured traces for `measured`
  std::string trace_format;         // --format (simulate): mutwo, kineto, et, dtr; empty: by content
  std::vector<std::string> profiles;  // --profile FILE (repeatable): calibration profiles
  bool traces_are_step = false;       // simulate --trace alone: the traces are the step to simulate
  // The --trace files, imported once (costmodel::read_cost_inputs), their warnings printed to stderr.
  mutable std::optional<costmodel::CostInputs> loaded_inputs;
};

// The flags as the one cost setup the library assembles (costmodel/cost_setup.hpp): --gpu (when
// given; else its default is the setup's default_gpu, after a measured trace's device), the
// overrides, --cost-source, --trace and --format.
costmodel::CostSetup cost_setup(const DeviceFlags& flags);

// The --trace files as Traces (read on first use; any format io::import_trace reads).
const std::vector<ir::Trace>& measured_traces(const DeviceFlags& flags);

// The files the flags name (--gpu's device file, --trace, --profile), for
// support::check_output_paths: an output that is one of them is refused.
support::FlagPaths input_files(const DeviceFlags& flags);

// Adds the flags to a subcommand; help texts list the catalog's devices and cost sources.
void add_device_flags(CLI::App* cmd, DeviceFlags& flags);

// costmodel::resolve_device of the flags' cost setup: --gpu's, or, for a source that reads
// measured traces and no --gpu given, the catalog device the first trace was measured on. Throws
// UnknownNameError for an unknown source or GPU, mutwo::Error naming a bad value, --trace given to
// a source that does not read it, or a trace file that cannot be read.
costmodel::DeviceSpec resolve_device(const DeviceFlags& flags);

// costmodel::make_cost_model of the flags' cost setup on that device, given the --trace files
// (read once per command); throws what resolve_device throws, and mutwo::Error when traces were
// measured on different devices.
std::unique_ptr<costmodel::OpCostModel> make_cost_model(const DeviceFlags& flags,
                                                        const costmodel::DeviceSpec& device);

// One line for reports (OpCostModel::describe): "analytic", or "measured (1180 of 1256 ops from 1
// trace on NVIDIA H100 80GB HBM3; rest analytic)" with the coverage of `graph`.
std::string describe_cost_source(const costmodel::OpCostModel& cost, const ir::Graph& graph);

}  // namespace mutwo::cli
