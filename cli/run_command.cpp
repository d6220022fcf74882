// `mutwo run`: executes a schedule (a file, or a model array planned with a policy) on LibTorch,
// measures it (median step time over timed steps after warm-up, peak memory, losses), simulates
// the same schedule on the matching catalog GPU, and stores both in the results database.
#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/array_flags.hpp"
#include "cli/commands.hpp"
#include "cli/device_flags.hpp"
#include "cli/exec_flags.hpp"
#include "cli/run_record.hpp"
#include "cli/table.hpp"
#include "costmodel/device_catalog.hpp"
#include "exec/executor.hpp"
#include "experiments/content_hash.hpp"
#include "experiments/results_db.hpp"
#include "policies/array_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/policy_registry.hpp"
#include "profiles/error.hpp"
#include "profiles/schedule.hpp"
#include "profiles/schedule_json.hpp"
#include "sim/simulator.hpp"

namespace mutwo::cli {
namespace {

using namespace mutwo::profiles;

struct RunOptions {
  ArrayFlags array;
  std::string policy = "none";
  std::string order = "best";
  DeviceFlags device;
  ExecFlags exec;
  int32_t iterations = 20;
  int32_t warmup = 3;
  bool cuda_graph = false;
  std::string db = "results.db";
  bool no_db = false;
  bool allow_oom = false;
  std::string save_schedule;
  bool json = false;
};

// What was planned and is about to run.
struct Planned {
  Schedule schedule;
  bool multiplexed = false;
  std::string note;  // the policy's one-line summary
};

Planned plan(const RunOptions& opts, const costmodel::OpCostModel& cost, int64_t limit_bytes) {
  Planned p;
  if (!opts.array.schedule.empty()) {
    p.schedule = read_schedule(opts.array.schedule);
    p.note = "schedule file";
    return p;
  }
  const policies::ModelArray array = model_array(opts.array);
  const std::unique_ptr<policies::MemoryPolicy> policy = policies::builtin_policies().create(opts.policy);
  policies::ArrayPlan planned =
      policies::plan_sub_arrays(policies::sub_array_steps(array, partition_of(opts.array)), *policy, cost,
                                limit_bytes, policies::parse_order(opts.order));
  if (!planned.result.feasible && !opts.allow_oom) {
    throw Error(
        fmt::format("policy '{}' finds no plan for {} x {} [{}] within the {} memory limit: its best plan "
                    "needs {}; raise --memory or --memory-cap, pick another --policy, or pass "
                    "--allow-oom to run it anyway",
                    opts.policy, array.count, array.model, policies::partition_text(partition_of(opts.array)),
                    human_bytes(limit_bytes), human_bytes(planned.result.peak_bytes)));
  }
  p.schedule = std::move(planned.result.schedule);
  p.multiplexed = planned.multiplexed;
  p.note = planned.result.note;
  return p;
}

std::string relative_error(int64_t predicted, int64_t measured) {
  if (measured <= 0) return "-";
  return fmt::format("{:+.1f} %",
                     100.0 * static_cast<double>(predicted - measured) / static_cast<double>(measured));
}

std::string losses_text(const exec::Measurement& m) {
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

experiments::MeasurementRecord measurement_record(const exec::Measurement& m, int64_t samples) {
  experiments::MeasurementRecord r;
  r.step_time_ns = m.step_time_ns;
  r.step_time_min_ns = m.step_time_min_ns;
  r.step_time_max_ns = m.step_time_max_ns;
  r.iterations = m.iterations;
  r.warmup_iterations = m.warmup_iterations;
  r.step_times_ns = m.step_times_ns;
  r.peak_bytes = m.peak_bytes;
  r.peak_source = m.peak_source;
  r.oom = m.oom;
  r.oom_message = m.oom_message;
  r.losses = m.losses;
  r.samples_per_step = samples;
  return r;
}

nlohmann::json config_json(const RunOptions& opts, const ExecTarget& target, const costmodel::DeviceSpec& gpu,
                           int64_t limit, const std::string& schedule_hash) {
  nlohmann::json j;
  if (opts.array.schedule.empty()) {
    j["model"] = opts.array.model;
    j["models"] = opts.array.models;
    j["partition"] = partition_of(opts.array);
    j["batch_size"] = opts.array.batch_size;
    j["seq_len"] = opts.array.seq_len;
    j["image_size"] = opts.array.image_size;
    j["dtype"] = opts.array.dtype;
    j["optimizer"] = opts.array.optimizer;
    j["lr"] = opts.array.lr;
    j["policy"] = opts.policy;
    j["order"] = opts.order;
  }
  j["schedule_hash"] = schedule_hash;
  j["device"] = target.label;
  j["gpu"] = gpu.name;
  j["memory_limit_bytes"] = limit;
  j["memory_cap_fraction"] = target.cap_fraction;
  j["cost_source"] = opts.device.cost_source;
  j["traces"] = opts.device.traces;
  j["iterations"] = opts.iterations;
  j["warmup"] = opts.warmup;
  j["seed"] = opts.exec.seed;
  j["cuda_graph"] = opts.cuda_graph;
  return j;
}

void run_command(RunOptions opts) {
  const ExecTarget target = resolve_exec_target(opts.exec, opts.device);
  const costmodel::DeviceSpec gpu = resolve_device(opts.device);
  const std::unique_ptr<costmodel::OpCostModel> cost = make_cost_model(opts.device, gpu);
  const int64_t limit = run_memory_limit(target, gpu.memory_bytes);

  Planned planned = plan(opts, *cost, limit);
  const Schedule& schedule = planned.schedule;
  if (!opts.save_schedule.empty()) write_schedule(schedule, opts.save_schedule);
  const int64_t samples = samples_per_step(schedule);

  sim::SimOptions sim_options;
  sim_options.memory_limit_bytes = limit;
  const sim::Prediction prediction = sim::simulate(schedule, *cost, sim_options);

  exec::RunOptions run;
  run.device = opts.exec.device;
  run.warmup_iterations = opts.warmup;
  run.timed_iterations = opts.iterations;
  run.seed = opts.exec.seed;
  run.memory_limit_bytes = target.is_cuda ? 0 : limit;  // the cpu enforces the limit by accounting
  run.memory_cap_fraction = target.cap_fraction;
  run.cuda_graph = opts.cuda_graph;
  const exec::Measurement m = exec::measure_schedule(schedule, run);

  std::optional<int64_t> run_id;
  if (!opts.no_db) {
    experiments::RunRecord record = base_run_record("run", opts.array, schedule, target);
    record.gpu = gpu.name;
    record.memory_limit_bytes = limit;
    record.memory_cap_fraction = target.cap_fraction;
    record.cost_source = opts.device.cost_source;
    record.config_hash =
        experiments::config_hash(config_json(opts, target, gpu, limit, record.schedule_hash));
    record.notes = fmt::format("{}{}; {}", planned.multiplexed ? "multiplexed" : "back to back",
                               m.cuda_graph ? ", CUDA graph" : "", planned.note);
    experiments::ResultsDb db = experiments::ResultsDb::open(opts.db);
    run_id = db.insert(record, experiments::prediction_record(prediction, samples),
                       measurement_record(m, samples));
  }

  if (opts.json) {
    nlohmann::json j;
    j["run_id"] = run_id ? nlohmann::json(*run_id) : nlohmann::json(nullptr);
    j["database"] = opts.no_db ? nlohmann::json(nullptr) : nlohmann::json(opts.db);
    j["schedule"] = {{"graph", schedule.graph.name},
                     {"policy", schedule.policy},
                     {"instructions", schedule.instructions.size()},
                     {"multiplexed", planned.multiplexed},
                     {"samples_per_step", samples}};
    j["device"] = target.label;
    j["gpu"] = gpu.name;
    j["memory_limit_bytes"] = limit;
    j["prediction"] = {{"step_time_ns", prediction.step_time_ns},
                       {"peak_bytes", prediction.peak_bytes},
                       {"oom", prediction.oom}};
    j["measurement"] = {{"step_time_ns", m.step_time_ns},
                        {"step_times_ns", m.step_times_ns},
                        {"peak_bytes", m.peak_bytes},
                        {"peak_source", m.peak_source},
                        {"accounted_peak_bytes", m.accounted_peak_bytes},
                        {"iterations", m.iterations},
                        {"warmup_iterations", m.warmup_iterations},
                        {"oom", m.oom},
                        {"oom_message", m.oom_message},
                        {"first_losses", m.first_losses},
                        {"losses", m.losses}};
    std::cout << j.dump(2) << "\n";
  } else {
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
    const auto per_s = [samples](int64_t ns) {
      return ns > 0 ? fmt::format("{:.1f}/s", static_cast<double>(samples) * 1e9 / static_cast<double>(ns))
                    : "-";
    };
    t.add_row({"samples", prediction.oom ? "-" : per_s(prediction.step_time_ns),
               m.oom ? "-" : per_s(m.step_time_ns), ""});
    std::cout << fmt::format("schedule     {} ({} instructions, policy {}, {}); {} samples per step\n",
                             schedule.graph.name, schedule.instructions.size(), schedule.policy,
                             planned.multiplexed ? "multiplexed" : "back to back", samples);
    std::cout << fmt::format("device       {}; prediction for {} ({})\n", target.label, gpu.name,
                             describe_cost_source(*cost, schedule.graph));
    std::cout << fmt::format(
        "memory limit {}{}\n", human_bytes(limit),
        target.cap_fraction > 0
            ? fmt::format(" (allocator capped at {:.3g} of the device)", target.cap_fraction)
        : !target.is_cuda ? " (enforced by accounting on the cpu)"
                          : "");
    std::cout << fmt::format("iterations   {} warm-up + {} timed{}{}\n", m.warmup_iterations, m.iterations,
                             m.iterations > 0
                                 ? fmt::format(" (min {}, max {})", human_duration(m.step_time_min_ns),
                                               human_duration(m.step_time_max_ns))
                                 : "",
                             m.cuda_graph ? ", CUDA graph replays" : "");
    std::cout << fmt::format("peak source  {}\n", m.peak_source);
    std::cout << fmt::format("losses       {}\n", losses_text(m));
    std::cout << t.render();
    if (run_id) std::cout << fmt::format("stored as run {} in {}\n", *run_id, opts.db);
  }
  if (m.oom) {
    throw Error(fmt::format("the measured step ran out of memory: {}{}", m.oom_message,
                            run_id ? fmt::format(" (stored as run {} in {})", *run_id, opts.db) : ""));
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
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "Untimed steps first")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--cuda-graph", opts->cuda_graph,
                "Capture one step as a CUDA graph after warm-up and time its replays");
  cmd->add_option("--db", opts->db, "Results database to store the run in")->capture_default_str();
  cmd->add_flag("--no-db", opts->no_db, "Do not store the run");
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
