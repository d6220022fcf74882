// `mutwo replay-trace FILE`: a PyTorch profiler trace replayed at the CUDA-runtime level
// (sim/runtime_replay.hpp): the profiled step beside the replayed one, what-ifs beside it (the host
// infinitely fast, kernels k times faster, collectives without their wait), and where the time went.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/replay_trace.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "costmodel/kernel_transfer.hpp"
#include "sim/runtime_replay.hpp"
#include "sim/runtime_timeline.hpp"
#include "support/error.hpp"
#include "support/percent.hpp"
#include "support/text_file.hpp"

namespace mutwo::cli {
namespace {

struct ReplayTraceOptions {
  api::ReplayTraceRequest request;
  std::string step;  // N, "all", or empty: the last
  bool json = false;
  std::string timeline;          // write the replay's timeline (Chrome trace) here
  std::string timeline_what_if;  // ... of this what-if instead (its label)
};

using api::OtherGpuRun;

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

void run_replay_trace(ReplayTraceOptions opts) {
  api::ReplayTraceRequest& request = opts.request;
  request.all = opts.step == "all";
  if (!request.all && !opts.step.empty()) {
    size_t used = 0;
    int64_t n = -1;
    try {
      n = std::stoll(opts.step, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != opts.step.size() || n < 0)
      throw Error(fmt::format("--step: '{}' is not a step number or 'all'", opts.step));
    request.step = n;
  }
  // Before the trace is replayed: the timeline is not the trace it replays (it overwrote it).
  support::check_output_paths({{"--timeline", opts.timeline}}, {}, {{"trace", request.trace}});
  const api::ReplayTraceResult result = api::replay_trace(request);
  const ir::RuntimeTrace& trace = result.trace;
  const std::vector<sim::RuntimeReplay>& runs = result.runs;
  const sim::RuntimeReplay& replay = runs.front();
  const bool all = request.all;
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
  if (opts.json) {
    std::cout << api::replay_trace_json(result).dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("trace          {}\n", result.source);
  print_replay(trace, runs, result.other_gpus);
  if (all || replay.steps.size() > 1) {
    Table steps({{all ? "step" : "step (the earlier ones warm the replay up)", Align::left},
                 {"profiled", Align::right},
                 {"replayed", Align::right},
                 {"error", Align::right}});
    for (size_t k = 0; k < replay.steps.size(); ++k) {
      const auto& st = replay.steps[k];
      steps.add_row({st.name, human_duration(st.profiled_ns), human_duration(st.replayed_ns),
                     support::signed_percent(result.step_errors[k])});
    }
    std::cout << "\n" << steps.render();
    if (all)
      std::cout << fmt::format("{} steps: replayed vs profiled, mean {}, spread {} around it\n",
                               replay.steps.size(), support::signed_percent(result.mean_error),
                               support::percent(result.spread));
  }
}

}  // namespace

void add_replay_trace_command(CLI::App& app) {
  auto opts = std::make_shared<ReplayTraceOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay-trace",
      "Replay a PyTorch profiler trace at the CUDA-runtime level (every host call, stream, sync and "
      "collective) and print the replayed step beside the profiled one, what-ifs and a breakdown");
  cmd->add_option("trace", opts->request.trace, "PyTorch profiler trace (Chrome-trace JSON, .gz accepted)")
      ->required();
  cmd->add_option("--step", opts->step, "ProfilerStep number to replay, or all (default: the last)");
  cmd->add_option("--kernel-speedup", opts->request.kernel_speedup, "The what-if's kernel speed-up")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option(
      "--what-if-gpu", opts->request.what_if_gpus,
      "What if the work ran on this GPU (catalog name or device file; repeatable): kernels with "
      "recorded shapes priced on both GPUs, others by Habitat's wave scaling, copies by bandwidth");
  CLI::Option* what_if_gpu = cmd->get_option("--what-if-gpu");
  cmd->add_option("--what-if-source", opts->request.what_if_source,
                  "With --what-if-gpu: the source that prices kernels with recorded shapes")
      ->capture_default_str()
      ->check(CLI::IsMember(costmodel::kernel_pricers().names()))
      ->needs(what_if_gpu);
  cmd->add_option("--trace-gpu", opts->request.trace_gpu,
                  "The catalog GPU the trace ran on, when its deviceProperties do not name one");
  cmd->add_flag("--json", opts->json, "Print the replay as JSON");
  cmd->add_option("--timeline", opts->timeline,
                  "Write the replayed timeline (Chrome trace: host threads and streams) to this file");
  cmd->add_option("--timeline-what-if", opts->timeline_what_if,
                  "With --timeline: the timeline of this what-if instead (its label, as the table prints it)")
      ->needs(cmd->get_option("--timeline"));
  cmd->callback([opts] { run_replay_trace(*opts); });
}

}  // namespace mutwo::cli
