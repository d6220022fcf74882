#include "cli/device_flags.hpp"

#include <algorithm>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/table.hpp"

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "profiles/error.hpp"
#include "profiles/trace_file.hpp"
#include "profiles/trace_import.hpp"

namespace mutwo::cli {
namespace {

const costmodel::CostSourceInfo& cost_source(const DeviceFlags& flags) {
  return costmodel::builtin_cost_sources().find(flags.cost_source);
}

// Errors about one file name the file first, as trace and schedule read errors do.
profiles::Trace read_measured_trace(const std::string& path, const std::string& format) {
  std::optional<profiles::TraceFormat> expected;
  if (!format.empty()) expected = profiles::parse_trace_format(format);
  profiles::TraceImport imported = profiles::import_trace(path, expected);
  for (const std::string& w : imported.warnings) std::cerr << "warning: " << w << "\n";
  try {
    costmodel::validate_measured_trace(imported.trace);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
  return std::move(imported.trace);
}

std::string device_or_unnamed(const std::string& device) {
  return device.empty() ? std::string("an unnamed device") : device;
}

}  // namespace

const std::vector<profiles::Trace>& measured_traces(const DeviceFlags& flags) {
  if (!flags.loaded_traces) {
    std::vector<profiles::Trace> traces;
    for (const std::string& path : flags.traces)
      traces.push_back(read_measured_trace(path, flags.trace_format));
    flags.loaded_traces = std::move(traces);
  }
  return *flags.loaded_traces;
}

void add_device_flags(CLI::App* cmd, DeviceFlags& flags) {
  cmd->add_option("--gpu", flags.gpu, "Device: " + joined(costmodel::builtin_devices().names()))
      ->capture_default_str()
      ->each([&flags](const std::string&) { flags.gpu_given = true; });
  cmd->add_option("--memory", flags.memory, "Memory limit, e.g. 16GiB, 40GB (default: the device's memory)");
  cmd->add_option("--h2d-gbps", flags.h2d_gbps,
                  "Host-to-device bandwidth in GB/s (default: the device's link)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--d2h-gbps", flags.d2h_gbps,
                  "Device-to-host bandwidth in GB/s (default: the device's link)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--half-duplex", flags.half_duplex, "One copy engine: the two directions serialise");
  cmd->add_option("--cost-source", flags.cost_source,
                  "Op cost source: " + joined(costmodel::builtin_cost_sources().names()))
      ->capture_default_str()
      ->each([&flags](const std::string&) { flags.cost_source_given = true; });
  cmd->add_option(
         "--trace", flags.traces,
         "Measured trace for --cost-source measured (`mutwo profile -o FILE`, a PyTorch profiler trace "
         "or a DTR log); repeatable. Without --gpu, the device it was measured on is simulated")
      ->take_all()
      ->allow_extra_args(false);
}

costmodel::DeviceSpec resolve_device(const DeviceFlags& flags) {
  std::string gpu = flags.gpu;
  if (!flags.gpu_given && !flags.traces.empty() && cost_source(flags).reads_measured_traces) {
    // A trace from "cpu" or an unknown GPU says nothing of memory or links: keep the default.
    if (const std::optional<std::string> matched =
            costmodel::match_device(measured_traces(flags).front().device)) {
      gpu = *matched;
    }
  }
  costmodel::DeviceOverrides overrides;
  if (!flags.memory.empty()) overrides.memory_bytes = costmodel::parse_memory_size(flags.memory);
  if (flags.h2d_gbps > 0) overrides.h2d_gbps = flags.h2d_gbps;
  if (flags.d2h_gbps > 0) overrides.d2h_gbps = flags.d2h_gbps;
  if (flags.half_duplex) overrides.half_duplex = true;
  return costmodel::apply_overrides(costmodel::find_device(gpu), overrides);
}

std::unique_ptr<costmodel::OpCostModel> make_cost_model(const DeviceFlags& flags,
                                                        const costmodel::DeviceSpec& device) {
  const costmodel::CostSourceInfo& info = cost_source(flags);
  costmodel::CostSourceInputs inputs;
  if (!flags.traces.empty()) {
    if (!info.reads_measured_traces) {
      std::vector<std::string> readers;
      for (const costmodel::CostSourceInfo& s : costmodel::builtin_cost_sources().sources()) {
        if (s.reads_measured_traces) readers.push_back(s.name);
      }
      throw Error(fmt::format("--trace is read only by --cost-source {}; cost source '{}' ignores it",
                              fmt::join(readers, ", "), info.name));
    }
    const std::vector<profiles::Trace>& traces = measured_traces(flags);
    for (size_t i = 0; i < traces.size(); ++i) {
      if (traces[i].device != traces.front().device) {
        throw Error(fmt::format("--trace files measured on different devices: {} on '{}', {} on '{}'",
                                flags.traces.front(), traces.front().device, flags.traces[i],
                                traces[i].device));
      }
      inputs.measured_traces.push_back(traces[i]);
    }
  }
  return info.create(device, inputs);
}

std::string describe_cost_source(const costmodel::OpCostModel& cost, const profiles::Graph& graph) {
  const auto* measured = dynamic_cast<const costmodel::MeasuredCostModel*>(&cost);
  if (measured == nullptr) return std::string(cost.name());
  const costmodel::MeasuredCoverage coverage = costmodel::measured_coverage(*measured, graph);
  std::vector<std::string> devices;
  for (const costmodel::MeasuredTraceSummary& t : measured->traces()) {
    const std::string d = device_or_unnamed(t.device);
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  const size_t traces = measured->traces().size();
  std::string rest;
  if (coverage.measured_ops < coverage.ops) rest = fmt::format("; rest {}", measured->fallback().name());
  return fmt::format("{} ({} of {} ops from {} trace{} on {}{})", cost.name(), coverage.measured_ops,
                     coverage.ops, traces, traces == 1 ? "" : "s", fmt::join(devices, ", "), rest);
}

}  // namespace mutwo::cli
