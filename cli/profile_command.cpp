// `mutwo profile`: times every op of a model array's training step on LibTorch (1 warm-up + 3
// measured steps by default, the median per op, as μ-TWO profiles) and writes a measured trace the
// simulator's `measured` cost source replays; optionally stores the op times in the results
// database beside the analytic model's prediction of each op. The pipeline is
// experiments::profile_pipeline; this file parses flags, loads the executor and prints.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/profile.hpp"
#include "cli/array_flags.hpp"
#include "cli/commands.hpp"
#include "cli/device_flags.hpp"
#include "cli/exec_flags.hpp"
#include "cli/number_flags.hpp"
#include "cli/table.hpp"
#include "experiments/executor_loader.hpp"
#include "experiments/profile_pipeline.hpp"
#include "ir/executor.hpp"
#include "ir/op_kind.hpp"
#include "support/error.hpp"
#include "support/percent.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::ir;

struct ProfileOptions {
  ArrayFlags array;
  ExecFlags exec;
  DeviceFlags device;  // the catalog GPU of the stored op predictions
  int32_t warmup = 1;
  int32_t iterations = 3;
  std::string output;
  std::string db;  // empty: not stored
  int32_t top = 8;
  bool json = false;
  bool host_times = false;  // the host issue times on the cpu too
};

void run_profile(const ProfileOptions& opts) {
  if (!opts.exec.memory_cap.empty())
    throw Error("profile: --memory-cap applies to `mutwo run`, not to profiling");
  experiments::ProfileRequest request;
  request.source = schedule_source(opts.array);
  request.device = opts.exec.device;
  request.seed = opts.exec.seed;
  request.warmup_iterations = opts.warmup;
  request.measured_iterations = opts.iterations;
  request.time_host = opts.host_times;
  request.output = opts.output;
  request.db = opts.db;
  if (opts.device.gpu_given) request.gpu = opts.device.gpu;
  experiments::check_profile_outputs(request);  // refused whether or not this mutwo has LibTorch
  const std::unique_ptr<Executor> executor = experiments::load_executor("'mutwo profile'");
  const experiments::ProfileOutcome out = experiments::profile_pipeline(request, *executor);
  const Trace& trace = out.trace;
  const experiments::ExecTarget& target = out.target;
  const std::optional<int64_t>& run_id = out.run_id;

  const Graph& g = trace.graph;
  if (opts.json) {
    std::cout << api::profile_json(out, opts.output, opts.top).dump(2) << "\n";
    return;
  }
  const api::ProfileSummary summary = api::summarize_profile(trace, opts.top);
  const auto& phase_ns = summary.phase_ns;
  const int64_t total_ns = summary.total_ns;
  const int64_t host_ns = summary.host_ns;
  const std::vector<size_t>& order = summary.slowest_ops;
  std::cout << fmt::format("profiled {} on {}: {} ops, {} warm-up + {} measured steps, median per op\n",
                           g.name, target.label, g.ops.size(), opts.warmup, opts.iterations);
  std::cout << fmt::format("sum of op times {} (forward {}, backward {}, optimizer {})\n",
                           human_duration(total_ns), human_duration(phase_ns[0]), human_duration(phase_ns[1]),
                           human_duration(phase_ns[2]));
  if (!trace.op_host_ns.empty()) {
    std::cout << fmt::format("sum of op host issue times {} (dispatch and launches, the executor's own)\n",
                             human_duration(host_ns));
  }
  Table t({{"op", Align::left}, {"kind", Align::left}, {"time", Align::right}, {"share", Align::right}});
  for (size_t k : order) {
    t.add_row({g.ops[k].name, std::string(kind_name(g.ops[k].kind)), human_duration(trace.op_duration_ns[k]),
               support::percent_of(trace.op_duration_ns[k], total_ns)});
  }
  std::cout << t.render();
  std::cout << fmt::format("wrote {} (replay it: mutwo simulate --cost-source measured --trace {} ...)\n",
                           opts.output, opts.output);
  if (run_id) std::cout << fmt::format("stored as run {} in {}\n", *run_id, opts.db);
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto opts = std::make_shared<ProfileOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Measure every op of a model array's training step on LibTorch and write a measured trace");
  add_array_flags(cmd, opts->array, "Profile the ops of this schedule file instead of a model array");
  add_exec_flags(cmd, opts->exec);
  cmd->add_option("--warmup", opts->warmup, "Untimed steps first")
      ->check(CLI::Range(0, ir::kMaxProfileSteps))
      ->capture_default_str();
  cmd->add_option("--iters", opts->iterations, "Measured steps; each op's time is its median over them")
      ->check(CLI::Range(1, ir::kMaxProfileSteps))
      ->capture_default_str();
  cmd->add_option("-o,--output", opts->output, "Measured trace to write (mutwo-trace JSON)")->required();
  CLI::Option* db = cmd->add_option("--db", opts->db, "Also store the op times in this results database");
  // Without --db no prediction is stored: --gpu would change nothing (an unknown name passed unread).
  cmd->add_option("--gpu", opts->device.gpu,
                  "Catalog GPU of the analytic op predictions stored with --db (default: the CUDA device's, "
                  "else a100-40gb)")
      ->each([opts](const std::string&) { opts->device.gpu_given = true; })
      ->needs(db);
  // 0 or a negative count listed no op and exited 0.
  cmd->add_option("--top", opts->top, "Slowest ops to list")->check(kPositiveNumber)->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print the summary as JSON");
  cmd->add_flag("--host-times", opts->host_times,
                "Record each op's host issue time on the cpu too (on a GPU always: the trace's op_host_ns, "
                "which the measured cost source charges the host timeline); on the cpu an op's issue includes "
                "its work");
  cmd->callback([opts] {
    require_model_or_schedule(opts->array, "profile");
    run_profile(*opts);
  });
}

}  // namespace mutwo::cli
