#include "costmodel/cost_setup.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "io/execution_trace_join.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

void check_cost_setup(const CostSetup& setup) {
  const CostSourceInfo& info = builtin_cost_sources().find(setup.cost_source);
  if (!setup.trace_files.empty() && !info.reads_measured_traces && !setup.traces_are_step) {
    throw Error(fmt::format("{} is read only by --cost-source {}; cost source '{}' ignores it", setup.traces_name,
                            fmt::join(builtin_cost_sources().trace_readers(), ", "), info.name));
  }
  // A trace given twice weighed its durations twice in the measured medians; a profile twice is
  // one profile.
  if (const auto twice = support::first_repeated_file(setup.trace_files)) {
    throw Error(fmt::format("{} '{}' is given already as '{}'; give each file once", setup.traces_name,
                            setup.trace_files[twice->second], setup.trace_files[twice->first]));
  }
  if (const auto twice = support::first_repeated_file(setup.profile_files)) {
    throw Error(fmt::format("--profile '{}' is given already as '{}'; give each file once",
                            setup.profile_files[twice->second], setup.profile_files[twice->first]));
  }
  if (!setup.profile_files.empty() && !info.reads_calibration_profiles) {
    throw Error(fmt::format("--profile is read only by --cost-source {}; cost source '{}' ignores it",
                            fmt::join(builtin_cost_sources().profile_readers(), ", "), info.name));
  }
}

CostInputs read_cost_inputs(const CostSetup& setup) {
  CostInputs inputs;
  for (size_t k = 0; k < setup.trace_files.size(); ++k) {
    const std::string& file = setup.trace_files[k];
    io::TraceImport imported = io::import_trace(file, setup.trace_format);
    const bool durations_read = builtin_cost_sources().find(setup.cost_source).reads_measured_traces;
    if (imported.needs_profile && setup.traces_are_step && !durations_read && k + 1 == setup.trace_files.size()) {
      // The step alone, priced by a source that reads no durations: they stay 0, unread.
      imported.trace.op_duration_ns.assign(imported.trace.graph.ops.size(), 0);
      std::erase_if(imported.warnings, [](const std::string& w) { return w.find("has no durations") != std::string::npos; });
    } else if (imported.needs_profile) {
      // An execution trace takes its durations from the profiler trace given after it.
      if (k + 1 == setup.trace_files.size()) {
        throw Error(fmt::format("{}: an execution trace has no durations; give the profiler trace of the same step "
                                "after it ({} {} {} PROFILE.json)",
                                file, setup.traces_name, file, setup.traces_name));
      }
      io::join_profiler_file(imported, setup.trace_files[++k],
                             std::filesystem::path(file).filename().string());
    }
    inputs.warnings.insert(inputs.warnings.end(), imported.warnings.begin(), imported.warnings.end());
    try {
      validate_measured_trace(imported.trace);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", file, e.what()));
    }
    inputs.traces.push_back(std::move(imported.trace));
  }
  for (const std::string& file : setup.profile_files) inputs.profiles.push_back(read_calibration_profile(file));
  return inputs;
}

DeviceSpec resolve_device(const CostSetup& setup, const CostInputs& inputs) {
  std::string gpu = setup.gpu;
  if (gpu.empty() && !inputs.traces.empty() && builtin_cost_sources().find(setup.cost_source).reads_measured_traces) {
    // A trace from "cpu" or an unknown GPU says nothing of memory or links: keep the default.
    if (const std::optional<std::string> matched = match_device(inputs.traces.front().device)) gpu = *matched;
  }
  if (gpu.empty() && inputs.traces.empty() && !inputs.profiles.empty() &&
      builtin_cost_sources().find(setup.cost_source).reads_calibration_profiles) {
    gpu = inputs.profiles.front().device;
  }
  if (gpu.empty()) gpu = setup.default_gpu;
  return apply_overrides(find_device(gpu), setup.overrides);
}

std::unique_ptr<OpCostModel> make_cost_model(const CostSetup& setup, const CostInputs& inputs,
                                             const DeviceSpec& device) {
  check_cost_setup(setup);
  const std::vector<ir::Trace>& traces = inputs.traces;
  for (size_t i = 1; i < traces.size(); ++i) {
    if (traces[i].device != traces.front().device) {
      const auto file = [&](size_t k) { return k < setup.trace_files.size() ? setup.trace_files[k] : traces[k].graph.name; };
      throw Error(fmt::format("{} files measured on different devices: {} on '{}', {} on '{}'", setup.traces_name,
                              file(0), traces.front().device, file(i), traces[i].device));
    }
  }
  CostSourceInputs source_inputs;
  source_inputs.measured_traces = traces;
  source_inputs.calibration_profiles = inputs.profiles;
  return builtin_cost_sources().create(setup.cost_source, device, source_inputs);
}

std::unique_ptr<OpCostModel> make_cost_model(const CostSetup& setup, const CostInputs& inputs) {
  return make_cost_model(setup, inputs, resolve_device(setup, inputs));
}

std::unique_ptr<OpCostModel> make_cost_model(const CostSetup& setup) {
  check_cost_setup(setup);
  return make_cost_model(setup, read_cost_inputs(setup));
}

}  // namespace mutwo::costmodel
