#include "api/replay_trace.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/kernel_transfer.hpp"
#include "io/kineto_op_records.hpp"
#include "io/kineto_runtime.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::api {
namespace {

// The catalog GPU the trace ran on: --trace-gpu, else its deviceProperties' name; nullopt when neither.
std::optional<costmodel::DeviceSpec> traced_gpu(const ir::RuntimeTrace& t, const ReplayTraceRequest& opts) {
  if (!opts.trace_gpu.empty()) return costmodel::find_device(opts.trace_gpu);
  if (const std::optional<std::string> gpu = costmodel::match_device(t.device))
    return costmodel::find_device(*gpu);
  return std::nullopt;
}

std::vector<sim::RuntimeReplay> replay_with_what_ifs(const ir::RuntimeTrace& t,
                                                     const ReplayTraceRequest& opts,
                                                     const std::map<std::string, int64_t>& floors,
                                                     const std::vector<OtherGpuRun>& other_gpus) {
  std::vector<sim::RuntimeReplay> out;
  out.push_back(sim::replay_runtime(t));
  sim::RuntimeWhatIf host;
  host.label = "host infinitely fast";
  host.host_free = true;
  out.push_back(sim::replay_runtime(t, host));
  // The device's graph per-node cost from the catalog GPU the trace ran on.
  if (const std::optional<costmodel::DeviceSpec> gpu = traced_gpu(t, opts)) {
    sim::RuntimeWhatIf graph;
    graph.label = "CUDA graph";
    graph.graph_node_ns = gpu->host.graph_kernel_ns;
    out.push_back(sim::replay_runtime(t, graph));
  }
  sim::RuntimeWhatIf faster;
  faster.label = fmt::format("kernels {:g}x faster", opts.kernel_speedup);
  faster.kernel_speedup = opts.kernel_speedup;
  out.push_back(sim::replay_runtime(t, faster));
  if (!floors.empty()) {
    sim::RuntimeWhatIf floor;
    floor.label = "collectives without their wait";
    floor.collectives_at_floor = true;
    floor.collective_floor_ns = &floors;
    out.push_back(sim::replay_runtime(t, floor));
  }
  for (const OtherGpuRun& o : other_gpus) {
    sim::RuntimeWhatIf moved;
    moved.label = fmt::format("on {} ({})", o.gpu, opts.what_if_source);
    moved.work_scale = &o.work.work_scale;
    out.push_back(sim::replay_runtime(t, moved));
  }
  return out;
}

// The --what-if-gpu devices, each once: a GPU named twice (by its name, or by a device file of
// that name) was replayed and printed twice.
std::vector<costmodel::DeviceSpec> what_if_devices(const ReplayTraceRequest& opts) {
  std::vector<costmodel::DeviceSpec> devices;
  std::vector<std::string> names;
  for (const std::string& given : opts.what_if_gpus) {
    devices.push_back(costmodel::find_device(given));
    names.push_back(devices.back().name);
  }
  if (const auto twice = support::first_repeat(names)) {
    throw Error(fmt::format("--what-if-gpu '{}' is the GPU '{}', given already as '{}'; give each GPU once",
                            opts.what_if_gpus[twice->second], names[twice->second],
                            opts.what_if_gpus[twice->first]));
  }
  return devices;
}

// Each --what-if-gpu's work, moved from the GPU the trace ran on.
std::vector<OtherGpuRun> move_to_other_gpus(const ir::RuntimeTrace& t, const nlohmann::json& doc,
                                            const ReplayTraceRequest& opts,
                                            const std::vector<costmodel::DeviceSpec>& destinations) {
  std::vector<OtherGpuRun> out;
  if (destinations.empty()) return out;
  const std::optional<costmodel::DeviceSpec> origin = traced_gpu(t, opts);
  if (!origin)
    throw Error(
        fmt::format("--what-if-gpu: the trace's GPU '{}' is not a catalog device; name the GPU it ran on "
                    "with --trace-gpu",
                    t.device.empty() ? "(none named)" : t.device));
  const io::KinetoOpRecords records = io::kineto_op_records_if_shaped(doc, t.source);
  for (const costmodel::DeviceSpec& destination : destinations) {
    out.push_back(
        {destination.name, sim::move_work_to_gpu(t, records, *origin, destination, opts.what_if_source)});
  }
  return out;
}

nlohmann::ordered_json runs_json(const ir::RuntimeTrace& t, const std::vector<sim::RuntimeReplay>& runs,
                                 const std::vector<OtherGpuRun>& other_gpus) {
  nlohmann::ordered_json j;
  j["window"] = t.window;
  j["annotated"] = t.annotated;
  j["profiled_step_ns"] = t.window_ns;
  j["calls"] = t.calls.size();
  j["device_work"] = t.work.size();
  j["streams"] = t.streams;
  j["device"] = t.device;
  const sim::RuntimeReplay& r = runs.front();
  j["replayed_step_ns"] = r.step_ns;
  j["error"] =
      t.window_ns > 0 ? static_cast<double>(r.step_ns - t.window_ns) / static_cast<double>(t.window_ns) : 0.0;
  nlohmann::ordered_json b;
  b["stream_busy_ns"] = r.stream_busy_ns;
  b["stream_waiting_on_host_ns"] = r.stream_waiting_on_host_ns;
  b["host_blocked_ns"] = r.host_blocked_ns;
  b["queue_held_ns"] = r.queue_held_ns;
  b["queue_held_calls"] = r.queue_held_calls;
  b["collective_ns"] = r.collective_ns;
  b["collective_wait_ns"] = r.collective_wait_ns;
  b["recorded_waits"] = r.recorded_waits;
  b["inferred_waits"] = r.inferred_waits;
  nlohmann::ordered_json path = nlohmann::ordered_json::array();
  for (const auto& s : r.critical_path_top)
    path.push_back({{"name", s.name},
                    {"stream", t.streams[static_cast<size_t>(s.stream)]},
                    {"duration_ns", s.duration_ns}});
  b["critical_path_top"] = path;
  j["breakdown"] = b;
  nlohmann::ordered_json w = nlohmann::ordered_json::array();
  for (size_t k = 1; k < runs.size(); ++k)
    w.push_back({{"what_if", runs[k].label}, {"step_ns", runs[k].step_ns}});
  j["what_ifs"] = w;
  nlohmann::ordered_json moved = nlohmann::ordered_json::array();
  for (const OtherGpuRun& o : other_gpus) {
    nlohmann::ordered_json rules = nlohmann::ordered_json::array();
    for (size_t k = 0; k < o.work.work_by_rule.size(); ++k)
      rules.push_back({{"rule", costmodel::transfer_rule_name(static_cast<costmodel::TransferRule>(k))},
                       {"work", o.work.work_by_rule[k]},
                       {"traced_ns", o.work.traced_ns_by_rule[k]}});
    moved.push_back({{"gpu", o.gpu}, {"rules", rules}});
  }
  if (!other_gpus.empty()) j["moved_to_gpus"] = moved;
  return j;
}

}  // namespace

ReplayTraceResult replay_trace(const ReplayTraceRequest& request) {
  ReplayTraceResult out;
  out.source = std::filesystem::path(request.trace).filename().string();
  out.all = request.all;
  // A GPU named twice is refused before the trace is read.
  const std::vector<costmodel::DeviceSpec> destinations = what_if_devices(request);
  const nlohmann::json doc = support::parse_json_document(support::read_text_file(request.trace), out.source);
  // One window from the trace's first step to the one replayed: the steps before warm it up.
  out.trace = io::read_kineto_runtime(doc, out.source, request.step);
  const std::map<std::string, int64_t> floors = sim::collective_floors(out.trace);
  out.other_gpus = move_to_other_gpus(out.trace, doc, request, destinations);
  out.runs = replay_with_what_ifs(out.trace, request, floors, out.other_gpus);
  for (const auto& st : out.runs.front().steps)
    out.step_errors.push_back(static_cast<double>(st.replayed_ns - st.profiled_ns) /
                              static_cast<double>(std::max<int64_t>(st.profiled_ns, 1)));
  for (const double e : out.step_errors) out.mean_error += e / static_cast<double>(out.step_errors.size());
  for (const double e : out.step_errors) out.spread = std::max(out.spread, std::abs(e - out.mean_error));
  return out;
}

nlohmann::ordered_json replay_trace_json(const ReplayTraceResult& result) {
  nlohmann::ordered_json j;
  j["trace"] = result.source;
  j["replay"] = runs_json(result.trace, result.runs, result.other_gpus);
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const auto& st : result.runs.front().steps)
    steps.push_back({{"step", st.name}, {"profiled_ns", st.profiled_ns}, {"replayed_ns", st.replayed_ns}});
  j["steps"] = steps;
  if (result.all) {
    j["mean_error"] = result.mean_error;
    j["spread"] = result.spread;
  }
  return j;
}

}  // namespace mutwo::api
