// `mutwo run`: executes a schedule (a file, or a model array planned with a policy) on LibTorch,
// measures it (median step time over timed steps after warm-up, peak memory, losses), simulates
// the same schedule on the matching catalog GPU, and stores both in the results database. The
// pipeline is experiments::run_pipeline; this file parses flags, loads the executor and prints.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "api/run.hpp"
#include "cli/array_flags.hpp"
#include "cli/commands.hpp"
#include "cli/device_flags.hpp"
#include "cli/exec_flags.hpp"
#include "cli/table.hpp"
#include "experiments/executor_loader.hpp"
#include "experiments/run_pipeline.hpp"
#include "ir/executor.hpp"
#include "policies/policy_registry.hpp"
#include "sim/host_mode.hpp"
#include "support/error.hpp"
#include "support/percent.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::ir;

struct RunOptions {
  ArrayFlags array;
  std::string policy = "none";
  std::string order = "best";
  DeviceFlags device;
  ExecFlags exec;
  int32_t iterations = 20;
  int32_t warmup = 3;
  bool cuda_graph = false;
  bool sync_each_step = false;
  bool wrap = false;
  std::string db = "results.db";
  bool no_db = false;
  bool allow_oom = false;
  bool state_offload = false;
  std::string optimizer_on = "best";
  std::string save_schedule;
  std::string host_mode;  // the prediction's; empty: the run's own (experiments::RunRequest::host_mode)
  bool json = false;
};

std::string relative_error(int64_t predicted, int64_t measured) {
  if (measured <= 0) return "-";
  return support::signed_percent(static_cast<double>(predicted - measured) / static_cast<double>(measured));
}

std::string losses_text(const Measurement& m) {
  std::string text;
  for (size_t i = 0; i < m.losses.size(); ++i) {
    if (i == 4) {
      text += fmt::format(", ... ({} models)", m.losses.size());
      break;
    }
    const double first = i < m.first_losses.size() ? m.first_losses[i] : std::nan("");
    text += fmt::format("{}model {}: {:.4f} -> {:.4f}", i ? ", " : "", i, first, m.losses[i]);
  }
  return text.empty() ? "-" : text;
}

experiments::RunRequest run_request(const RunOptions& opts) {
  experiments::RunRequest r;
  r.source = schedule_source(opts.array);
  r.policy = opts.policy;
  r.order = opts.order;
  r.allow_oom = opts.allow_oom;
  r.state_offload = opts.state_offload;
  r.optimizer_on = opts.optimizer_on;
  r.device = opts.exec.device;
  r.memory_cap = opts.exec.memory_cap;
  r.seed = opts.exec.seed;
  r.warmup_iterations = opts.warmup;
  r.timed_iterations = opts.iterations;
  r.cuda_graph = opts.cuda_graph;
  r.back_to_back = !opts.sync_each_step;
  r.wrap = opts.wrap;
  r.host_mode = opts.host_mode;
  // The cost setup: --gpu (else the CUDA device's catalog GPU, else a measured trace's) with the
  // device overrides, and --cost-source with its --trace files.
  r.cost = [device = opts.device](const std::optional<std::string>& executed_on) mutable {
    if (executed_on && !device.gpu_given) device.gpu = *executed_on;
    experiments::RunCost setup;
    setup.gpu = resolve_device(device);
    setup.cost = make_cost_model(device, setup.gpu);
    setup.cost_source = device.cost_source;
    setup.traces = device.traces;
    return setup;
  };
  r.save_schedule = opts.save_schedule;
  if (!opts.no_db) r.db = opts.db;
  return r;
}

void print_json(const RunOptions& opts, const experiments::RunOutcome& out) {
  std::cout << api::run_json(out, opts.no_db ? std::string() : opts.db).dump(2) << "\n";
}

void print_table(const RunOptions& opts, const experiments::RunOutcome& out) {
  const Measurement& m = out.measurement;
  const sim::Prediction& prediction = out.prediction;
  const Schedule& schedule = out.schedule;
  const experiments::ExecTarget& target = out.target;
  const int64_t samples = out.samples_per_step;
  Table t({{"", Align::left},
           {"predicted", Align::right},
           {"measured", Align::right},
           {"error", Align::right}});
  const bool both = !prediction.oom && !m.oom;
  t.add_row({"step time", prediction.oom ? "OOM" : human_duration(prediction.step_time_ns),
             m.oom ? "OOM" : human_duration(m.step_time_ns),
             both ? relative_error(prediction.step_time_ns, m.step_time_ns) : "-"});
  t.add_row({"peak memory", prediction.oom ? "OOM" : human_bytes(prediction.peak_bytes),
             m.oom ? "OOM" : human_bytes(m.peak_bytes),
             both ? relative_error(prediction.peak_bytes, m.peak_bytes) : "-"});
  // A schedule of batch 0 (unknown, as imported traces have) has no samples to count: "-", not 0.0/s.
  const auto per_s = [samples](int64_t ns) {
    return ns > 0 && samples > 0
               ? fmt::format("{:.1f}/s", static_cast<double>(samples) * 1e9 / static_cast<double>(ns))
               : "-";
  };
  t.add_row({"samples", prediction.oom ? "-" : per_s(prediction.step_time_ns),
             m.oom ? "-" : per_s(m.step_time_ns), ""});
  std::cout << fmt::format(
      "schedule     {} ({} instructions, policy {}, {}{}); {} samples per step\n", schedule.graph.name,
      schedule.instructions.size(), schedule.policy, out.multiplexed ? "multiplexed" : "back to back",
      schedule.host_state.empty()             ? ""
      : schedule.host_stream == ir::kNoStream ? ", model state on the host"
                                              : ", model state and optimizer on the host",
      samples);
  std::cout << fmt::format("device       {}; prediction for {} ({}; host {})\n", target.label, out.cost.gpu.name,
                           describe_cost_source(*out.cost.cost, schedule.graph), sim::host_mode_name(out.host_mode));
  std::cout << fmt::format(
      "memory limit {}{}\n", human_bytes(out.memory_limit_bytes),
      target.cap_fraction > 0
          ? fmt::format(" (allocator capped at {:.3g} of the device)", target.cap_fraction)
      : !target.is_cuda ? " (enforced by accounting on the cpu)"
                        : "");
  std::cout << fmt::format("iterations   {} warm-up + {} timed{}{}\n", m.warmup_iterations, m.iterations,
                           m.iterations > 0
                               ? fmt::format(" (min {}, max {})", human_duration(m.step_time_min_ns),
                                             human_duration(m.step_time_max_ns))
                               : "",
                           m.cuda_graph     ? ", CUDA graph replays"
                           : m.wrapped      ? ", back to back with wrapped boundaries: the steady state (predicted: "
                                              "iteration 3 of 3, wrapped)"
                           : m.back_to_back ? ", back to back: the steady state (predicted: iteration 3 of 3)"
                                            : ", each timed alone");
  std::cout << fmt::format("peak source  {}\n", m.peak_source);
  std::cout << fmt::format("losses       {}\n", losses_text(m));
  std::cout << t.render();
  if (out.run_id) std::cout << fmt::format("stored as run {} in {}\n", *out.run_id, opts.db);
}

void run_command(const RunOptions& opts) {
  // Checked before the executor loads, so refused whether or not this mutwo has LibTorch: the device
  // flags' files (--gpu, --trace, --profile) and the model or schedule file.
  support::FlagPaths inputs = input_files(opts.device);
  for (const auto& file : experiments::input_files(schedule_source(opts.array))) inputs.push_back(file);
  support::check_output_paths({{"--save-schedule", opts.save_schedule}, {"--db", opts.db}}, {}, inputs);
  const std::unique_ptr<Executor> executor = experiments::load_executor("'mutwo run'");
  experiments::RunOutcome out;
  try {
    out = experiments::run_pipeline(run_request(opts), *executor);
  } catch (const experiments::InfeasiblePlanError& e) {
    throw Error(fmt::format("policy '{}' finds no plan for {} within the {} memory limit: its best plan "
                            "needs {}; raise --memory or --memory-cap, pick another --policy, or pass "
                            "--allow-oom to run it anyway",
                            e.policy, e.array, human_bytes(e.limit_bytes), human_bytes(e.needed_bytes)));
  }
  if (opts.json) {
    print_json(opts, out);
  } else {
    print_table(opts, out);
  }
  experiments::throw_if_not_stored(out, "the run printed above");
  const Measurement& m = out.measurement;
  if (m.oom) {
    throw Error(fmt::format("the measured step ran out of memory: {}{}", m.oom_message,
                            out.run_id ? fmt::format(" (stored as run {} in {})", *out.run_id, opts.db) : ""));
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Execute a schedule on LibTorch, measure it and store it next to the simulator's prediction");
  add_array_flags(cmd, opts->array, "Run this schedule file instead of planning a model array");
  cmd->add_option("--policy", opts->policy,
                  "Swap/recompute policy planning the array: " + joined(policies::builtin_policies().names()))
      ->capture_default_str();
  cmd->add_option("--order", opts->order,
                  "Sub-arrays multiplexed, back-to-back, or best (plan both, keep the faster)")
      ->capture_default_str();
  add_device_flags(cmd, opts->device);
  add_exec_flags(cmd, opts->exec);
  cmd->add_option("--iters", opts->iterations, "Timed steps (after warm-up)")
      ->check(CLI::Range(1, ir::kMaxRunSteps))
      ->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "Untimed steps first")
      ->check(CLI::Range(0, ir::kMaxRunSteps))
      ->capture_default_str();
  cmd->add_flag("--sync-each-step", opts->sync_each_step,
                "Time each step alone, the device idle before it (default: steps back to back, the steady state, "
                "predicted as the last of 3 simulated iterations)");
  cmd->add_flag("--wrap", opts->wrap,
                "Run (and predict) the timed steps with wrapped boundaries, μ-TWO's steady state: the last "
                "sub-array's backward merged with the first sub-array's next forward (a multiplexed plan of two or "
                "more sub-arrays)");
  cmd->add_flag("--cuda-graph", opts->cuda_graph,
                "Capture one step as a CUDA graph after warm-up and time its replays");
  cmd->add_option("--host-mode", opts->host_mode,
                  "The prediction's host timeline: libtorch (PyTorch's dispatch and a launch per kernel issued "
                  "from C++, as the executor issues the step), eager (the same from a Python training loop), "
                  "cuda-graph (one captured graph replayed), none (GPU time alone); default: cuda-graph with "
                  "--cuda-graph, else libtorch")
      ->check(CLI::IsMember(sim::host_mode_names()));
  cmd->add_option("--db", opts->db, "Results database to store the run in")->capture_default_str();
  cmd->add_flag("--no-db", opts->no_db, "Do not store the run");
  CLI::Option* offload = cmd->add_flag(
      "--state-offload", opts->state_offload,
      "Keep every model's weights, gradients and optimizer state in pinned host memory between uses "
      "(swapped in before its sub-array's forward, out after its optimizer step)");
  cmd->add_option(
         "--optimizer-on", opts->optimizer_on,
         "With --state-offload, where the optimizer step runs: device (its state swapped in and out), "
         "host (gradients out, CPU Adam, weights in; ZeRO-Offload) or best (the faster plan)")
      ->check(CLI::IsMember({"best", "device", "host"}))
      ->capture_default_str()
      ->needs(offload);
  cmd->add_flag("--allow-oom", opts->allow_oom,
                "Run the policy's best plan even when it does not fit the limit");
  cmd->add_option("--save-schedule", opts->save_schedule, "Write the executed schedule to this file");
  cmd->add_flag("--json", opts->json, "Print the result as JSON");
  cmd->callback([opts] {
    require_model_or_schedule(opts->array, "run");
    run_command(*opts);
  });
}

}  // namespace mutwo::cli
