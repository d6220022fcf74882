#include "cli/device_flags.hpp"
#include "cli/number_flags.hpp"

#include <iostream>
#include <optional>

#include "cli/table.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_file.hpp"
#include "costmodel/device_overrides.hpp"
#include "io/trace_import.hpp"

namespace mutwo::cli {

support::FlagPaths input_files(const DeviceFlags& flags) {
  support::FlagPaths files;
  if (costmodel::is_device_path(flags.gpu)) files.emplace_back("--gpu", flags.gpu);
  for (const std::string& t : flags.traces) files.emplace_back("--trace", t);
  for (const std::string& p : flags.profiles) files.emplace_back("--profile", p);
  return files;
}

costmodel::CostSetup cost_setup(const DeviceFlags& flags) {
  costmodel::CostSetup setup;
  if (flags.gpu_given) {
    setup.gpu = flags.gpu;
  } else {
    setup.default_gpu = flags.gpu;
  }
  if (!flags.memory.empty()) setup.overrides.memory_bytes = costmodel::parse_memory_size(flags.memory);
  if (flags.h2d_gbps > 0) setup.overrides.h2d_gbps = flags.h2d_gbps;
  if (flags.d2h_gbps > 0) setup.overrides.d2h_gbps = flags.d2h_gbps;
  if (flags.half_duplex) setup.overrides.half_duplex = true;
  if (flags.host_optimizer_gbps > 0) setup.overrides.host_optimizer_gbps = flags.host_optimizer_gbps;
  setup.cost_source = flags.cost_source;
  setup.trace_files = flags.traces;
  setup.profile_files = flags.profiles;
  setup.traces_are_step = flags.traces_are_step;
  if (!flags.trace_format.empty()) setup.trace_format = io::parse_trace_format(flags.trace_format);
  return setup;
}

namespace {

// The --trace files, read once per command; the importers' warnings go to stderr.
const costmodel::CostInputs& cost_inputs(const DeviceFlags& flags, const costmodel::CostSetup& setup) {
  if (!flags.loaded_inputs) {
    costmodel::CostInputs inputs = costmodel::read_cost_inputs(setup);
    for (const std::string& w : inputs.warnings) std::cerr << "warning: " << w << "\n";
    flags.loaded_inputs = std::move(inputs);
  }
  return *flags.loaded_inputs;
}

}  // namespace

const std::vector<ir::Trace>& measured_traces(const DeviceFlags& flags) {
  return cost_inputs(flags, cost_setup(flags)).traces;
}

void add_device_flags(CLI::App* cmd, DeviceFlags& flags) {
  cmd->add_option("--gpu", flags.gpu,
                  "Device: a catalog GPU (" + joined(costmodel::builtin_devices().names()) +
                      ") or the path of a device file (TOML, costmodel/device_file.hpp)")
      ->capture_default_str()
      ->each([&flags](const std::string&) { flags.gpu_given = true; });
  cmd->add_option("--memory", flags.memory, "Memory limit, e.g. 16GiB, 40GB (default: the device's memory)");
  cmd->add_option("--h2d-gbps", flags.h2d_gbps,
                  "Host-to-device bandwidth in GB/s (default: the device's link)")
      ->check(kPositiveNumber);
  cmd->add_option("--d2h-gbps", flags.d2h_gbps,
                  "Device-to-host bandwidth in GB/s (default: the device's link)")
      ->check(kPositiveNumber);
  cmd->add_flag("--half-duplex", flags.half_duplex, "One copy engine: the two directions serialise");
  cmd->add_option("--host-optimizer-gbps", flags.host_optimizer_gbps,
                  "Host optimizer update rate in GB/s of bytes read and written (default: the catalog's, "
                  "measured on the development host)")
      ->check(kPositiveNumber);
  cmd->add_option("--cost-source", flags.cost_source,
                  "Op cost source: " + joined(costmodel::builtin_cost_sources().names()))
      ->capture_default_str()
      ->each([&flags](const std::string&) { flags.cost_source_given = true; });
  cmd->add_option(
         "--trace", flags.traces,
         "Measured trace for --cost-source " + joined(costmodel::builtin_cost_sources().trace_readers()) +
             " (`mutwo profile -o FILE`, a PyTorch profiler trace or a DTR log); repeatable. Without --gpu, "
             "the device it was measured on is simulated")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_option("--profile", flags.profiles,
                  "Calibration profile (`mutwo calibrate -o FILE`) for --cost-source " +
                      joined(costmodel::builtin_cost_sources().profile_readers()) +
                      "; repeatable; devices without one use the shipped profiles")
      ->allow_extra_args(false);
}

costmodel::DeviceSpec resolve_device(const DeviceFlags& flags) {
  const costmodel::CostSetup setup = cost_setup(flags);
  costmodel::check_cost_setup(setup);
  return costmodel::resolve_device(setup, cost_inputs(flags, setup));
}

std::unique_ptr<costmodel::OpCostModel> make_cost_model(const DeviceFlags& flags,
                                                        const costmodel::DeviceSpec& device) {
  const costmodel::CostSetup setup = cost_setup(flags);
  costmodel::check_cost_setup(setup);
  return costmodel::make_cost_model(setup, cost_inputs(flags, setup), device);
}

std::string describe_cost_source(const costmodel::OpCostModel& cost, const ir::Graph& graph) {
  return cost.describe(graph);
}

}  // namespace mutwo::cli
