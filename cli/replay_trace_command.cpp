// `mutwo replay-trace FILE`: a PyTorch profiler trace replayed at the CUDA-runtime level
// (sim/runtime_replay.hpp): the profiled step beside the replayed one, what-ifs beside it (the host
// infinitely fast, kernels k times faster, collectives without their wait), and where the time went.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/kernel_transfer.hpp"
#include "io/kineto_op_records.hpp"
#include "io/kineto_runtime.hpp"
#include "sim/runtime_other_gpu.hpp"
#include "sim/runtime_replay.hpp"
#include "sim/runtime_timeline.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/percent.hpp"
#include "support/text_file.hpp"

namespace mutwo::cli {
namespace {

struct ReplayTraceOptions {
  std::string trace;
  std::string step;  // N, "all", or empty: the last
  double kernel_speedup = 2.0;
  bool json = false;
  std::string timeline;          // write the replay's timeline (Chrome trace) here
  std::string timeline_what_if;  // ... of this what-if instead (its label)
  std::vector<std::string> what_if_gpus;  // the work moved to each of these GPUs (names or device files)
  std::string what_if_source = "waves";   // ... priced by this source where the trace has shapes
  std::string trace_gpu;  // the catalog GPU the trace ran on, when its deviceProperties do not say
};

// The catalog GPU the trace ran on: --trace-gpu, else its deviceProperties' name; nullopt when neither.
std::optional<costmodel::DeviceSpec> traced_gpu(const ir::RuntimeTrace& t, const ReplayTraceOptions& opts) {
  if (!opts.trace_gpu.empty()) return costmodel::find_device(opts.trace_gpu);
  if (const std::optional<std::string> gpu = costmodel::match_device(t.device))
    return costmodel::find_device(*gpu);
  return std::nullopt;
}

// The what-ifs "work moved to another GPU", one per --what-if-gpu, with what each rule covered.
struct OtherGpuRun {
  std::string gpu;
  sim::OtherGpuWork work;
};

std::vector<sim::RuntimeReplay> replay_with_what_ifs(const ir::RuntimeTrace& t,
                                                     const ReplayTraceOptions& opts,
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

// Each --what-if-gpu's work, moved from the GPU the trace ran on.
std::vector<OtherGpuRun> move_to_other_gpus(const ir::RuntimeTrace& t, const nlohmann::json& doc,
                                            const ReplayTraceOptions& opts) {
  std::vector<OtherGpuRun> out;
  if (opts.what_if_gpus.empty()) return out;
  const std::optional<costmodel::DeviceSpec> origin = traced_gpu(t, opts);
  if (!origin)
    throw Error(
        fmt::format("--what-if-gpu: the trace's GPU '{}' is not a catalog device; name the GPU it ran on "
                    "with --trace-gpu",
                    t.device.empty() ? "(none named)" : t.device));
  const io::KinetoOpRecords records = io::kineto_op_records_if_shaped(doc, t.source);
  for (const std::string& name : opts.what_if_gpus) {
    const costmodel::DeviceSpec destination = costmodel::find_device(name);
    out.push_back(
        {destination.name, sim::move_work_to_gpu(t, records, *origin, destination, opts.what_if_source)});
  }
  return out;
}

// What each rule covered when the work moved (the same for every destination but the priced ratios).
std::string other_gpu_coverage(const OtherGpuRun& o) {
  std::vector<std::string> parts;
  for (size_t r = 0; r < o.work.work_by_rule.size(); ++r) {
    if (o.work.work_by_rule[r] == 0) continue;
    parts.push_back(fmt::format("{} {} ({})", o.work.work_by_rule[r],
                                costmodel::transfer_rule_name(static_cast<costmodel::TransferRule>(r)),
                                human_duration(o.work.traced_ns_by_rule[r])));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

nlohmann::ordered_json replay_json(const ir::RuntimeTrace& t, const std::vector<sim::RuntimeReplay>& runs,
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
    for (size_t r = 0; r < o.work.work_by_rule.size(); ++r)
      rules.push_back({{"rule", costmodel::transfer_rule_name(static_cast<costmodel::TransferRule>(r))},
                       {"work", o.work.work_by_rule[r]},
                       {"traced_ns", o.work.traced_ns_by_rule[r]}});
    moved.push_back({{"gpu", o.gpu}, {"rules", rules}});
  }
  if (!other_gpus.empty()) j["moved_to_gpus"] = moved;
  return j;
}

void print_replay(const ir::RuntimeTrace& t, const std::vector<sim::RuntimeReplay>& runs,
                  const std::vector<OtherGpuRun>& other_gpus) {
  const sim::RuntimeReplay& r = runs.front();
  std::cout << fmt::format(
      "window         {}{}\n", t.window,
      t.annotated ? "" : " (the trace has no ProfilerStep annotation: replayed as one window)");
  std::cout << fmt::format(
      "recorded       {} runtime calls on {} threads, {} pieces of device work on {} streams\n",
      t.calls.size(), t.threads.size(), t.work.size(), t.streams.size());
  std::cout << fmt::format("profiled step  {}\n", human_duration(t.window_ns));
  std::cout << fmt::format("replayed step  {} ({} of the profiled)\n", human_duration(r.step_ns),
                           support::signed_percent(static_cast<double>(r.step_ns - t.window_ns) /
                                                   static_cast<double>(std::max<int64_t>(t.window_ns, 1))));
  std::cout << fmt::format(
      "cross-stream   {} waits from the trace's event records, {} inferred from timing\n", r.recorded_waits,
      r.inferred_waits);
  std::cout << fmt::format("host blocked   {} in syncs and blocking copies\n",
                           human_duration(r.host_blocked_ns));
  if (r.collective_ns > 0)
    std::cout << fmt::format(
        "communication  {} in collectives, of which {} above each one's floor (waiting)\n",
        human_duration(r.collective_ns), human_duration(r.collective_wait_ns));
  Table streams(
      {{"stream", Align::right}, {"busy", Align::right}, {"idle waiting on the host", Align::right}});
  for (size_t s = 0; s < t.streams.size(); ++s)
    streams.add_row({std::to_string(t.streams[s]), human_duration(r.stream_busy_ns[s]),
                     human_duration(r.stream_waiting_on_host_ns[s])});
  std::cout << "\n" << streams.render();
  Table what_ifs({{"what if", Align::left}, {"step", Align::right}, {"vs replay", Align::right}});
  for (const sim::RuntimeReplay& w : runs)
    what_ifs.add_row({w.label, human_duration(w.step_ns),
                      support::signed_percent(static_cast<double>(w.step_ns - r.step_ns) /
                                              static_cast<double>(std::max<int64_t>(r.step_ns, 1)))});
  std::cout << "\n" << what_ifs.render();
  if (!other_gpus.empty())
    std::cout << fmt::format(
        "moved to another GPU: {} (costmodel/kernel_transfer.hpp; collectives and the host as measured)\n",
        other_gpu_coverage(other_gpus.front()));
  if (!r.critical_path_top.empty()) {
    Table path({{"critical path: longest device work", Align::left},
                {"stream", Align::right},
                {"time", Align::right}});
    for (const auto& s : r.critical_path_top)
      path.add_row({s.name.substr(0, 70), std::to_string(t.streams[static_cast<size_t>(s.stream)]),
                    human_duration(s.duration_ns)});
    std::cout << "\n" << path.render();
  }
}

void run_replay_trace(const ReplayTraceOptions& opts) {
  const std::string source = std::filesystem::path(opts.trace).filename().string();
  const nlohmann::json doc = support::parse_json_document(support::read_text_file(opts.trace), source);
  std::optional<int64_t> step;
  const bool all = opts.step == "all";
  if (!all && !opts.step.empty()) {
    size_t used = 0;
    int64_t n = -1;
    try {
      n = std::stoll(opts.step, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != opts.step.size() || n < 0)
      throw Error(fmt::format("--step: '{}' is not a step number or 'all'", opts.step));
    step = n;
  }
  // One window from the trace's first step to the one replayed: the steps before warm it up.
  const ir::RuntimeTrace trace = io::read_kineto_runtime(doc, source, step);
  const std::map<std::string, int64_t> floors = sim::collective_floors(trace);
  const std::vector<OtherGpuRun> other_gpus = move_to_other_gpus(trace, doc, opts);
  const std::vector<sim::RuntimeReplay> runs = replay_with_what_ifs(trace, opts, floors, other_gpus);
  const sim::RuntimeReplay& replay = runs.front();
  if (!opts.timeline.empty()) {
    const sim::RuntimeReplay* shown = &replay;
    if (!opts.timeline_what_if.empty()) {
      shown = nullptr;
      std::vector<std::string> labels;
      for (const sim::RuntimeReplay& r : runs) {
        labels.push_back(r.label);
        if (r.label == opts.timeline_what_if) shown = &r;
      }
      if (shown == nullptr)
        throw UnknownNameError(fmt::format("--timeline-what-if: unknown what-if '{}'; valid: {}",
                                           opts.timeline_what_if, fmt::join(labels, ", ")));
    }
    support::write_file_atomic(opts.timeline, sim::runtime_chrome_trace_json(trace, *shown), "timeline");
  }
  std::vector<double> errors;
  for (const auto& st : replay.steps)
    errors.push_back(static_cast<double>(st.replayed_ns - st.profiled_ns) /
                     static_cast<double>(std::max<int64_t>(st.profiled_ns, 1)));
  double mean = 0;
  double spread = 0;
  for (const double e : errors) mean += e / static_cast<double>(errors.size());
  for (const double e : errors) spread = std::max(spread, std::abs(e - mean));
  if (opts.json) {
    nlohmann::ordered_json j;
    j["trace"] = source;
    j["replay"] = replay_json(trace, runs, other_gpus);
    nlohmann::ordered_json steps = nlohmann::ordered_json::array();
    for (const auto& st : replay.steps)
      steps.push_back({{"step", st.name}, {"profiled_ns", st.profiled_ns}, {"replayed_ns", st.replayed_ns}});
    j["steps"] = steps;
    if (all) {
      j["mean_error"] = mean;
      j["spread"] = spread;
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("trace          {}\n", source);
  print_replay(trace, runs, other_gpus);
  if (all || replay.steps.size() > 1) {
    Table steps({{all ? "step" : "step (the earlier ones warm the replay up)", Align::left},
                 {"profiled", Align::right},
                 {"replayed", Align::right},
                 {"error", Align::right}});
    for (size_t k = 0; k < replay.steps.size(); ++k) {
      const auto& st = replay.steps[k];
      steps.add_row({st.name, human_duration(st.profiled_ns), human_duration(st.replayed_ns),
                     support::signed_percent(errors[k])});
    }
    std::cout << "\n" << steps.render();
    if (all)
      std::cout << fmt::format("{} steps: replayed vs profiled, mean {}, spread {} around it\n",
                               replay.steps.size(), support::signed_percent(mean), support::percent(spread));
  }
}

}  // namespace

void add_replay_trace_command(CLI::App& app) {
  auto opts = std::make_shared<ReplayTraceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay-trace",
      "Replay a PyTorch profiler trace at the CUDA-runtime level (every host call, stream, sync and "
      "collective) and print the replayed step beside the profiled one, what-ifs and a breakdown");
  cmd->add_option("trace", opts->trace, "PyTorch profiler trace (Chrome-trace JSON, .gz accepted)")
      ->required();
  cmd->add_option("--step", opts->step, "ProfilerStep number to replay, or all (default: the last)");
  cmd->add_option("--kernel-speedup", opts->kernel_speedup, "The what-if's kernel speed-up")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option(
      "--what-if-gpu", opts->what_if_gpus,
      "What if the work ran on this GPU (catalog name or device file; repeatable): kernels with "
      "recorded shapes priced on both GPUs, others by Habitat's wave scaling, copies by bandwidth");
  cmd->add_option("--what-if-source", opts->what_if_source,
                  "With --what-if-gpu: the source that prices kernels with recorded shapes")
      ->capture_default_str()
      ->check(CLI::IsMember(costmodel::kernel_pricing_sources()));
  cmd->add_option("--trace-gpu", opts->trace_gpu,
                  "The catalog GPU the trace ran on, when its deviceProperties do not name one");
  cmd->add_flag("--json", opts->json, "Print the replay as JSON");
  cmd->add_option("--timeline", opts->timeline,
                  "Write the replayed timeline (Chrome trace: host threads and streams) to this file");
  cmd->add_option(
      "--timeline-what-if", opts->timeline_what_if,
      "With --timeline: the timeline of this what-if instead (its label, as the table prints it)");
  cmd->callback([opts] { run_replay_trace(*opts); });
}

}  // namespace mutwo::cli
