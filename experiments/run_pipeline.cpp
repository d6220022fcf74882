#include "experiments/run_pipeline.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "experiments/build_info.hpp"
#include "experiments/content_hash.hpp"
#include "experiments/db_merge.hpp"
#include "experiments/results_db.hpp"
#include "io/schedule_json.hpp"
#include "ir/dtype.hpp"
#include "ir/precision.hpp"
#include "ir/unrolled_schedule.hpp"
#include "policies/array_plan.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "policies/wrapped_plan.hpp"
#include "sim/host_mode.hpp"
#include "sim/simulator.hpp"
#include "support/text_file.hpp"
#include "zoo/exported_model.hpp"

namespace mutwo::experiments {
namespace {

// The host timeline the prediction puts in front of the GPU: the one the executor runs.
sim::HostMode run_host_mode(const RunRequest& request) {
  if (!request.host_mode.empty()) return sim::parse_host_mode(request.host_mode);
  return request.cuda_graph ? sim::HostMode::cuda_graph : sim::HostMode::libtorch;
}

}  // namespace

PlannedRun plan_run(const RunRequest& request, const costmodel::OpCostModel& cost, int64_t limit_bytes) {
  PlannedRun p;
  const ScheduleSource& source = request.source;
  if (!source.schedule_file.empty()) {
    // A schedule file is run as planned: the settings that plan an array went unread.
    const std::vector<std::pair<bool, std::string_view>> planning = {
        {request.policy != "none", "--policy"},
        {request.order != "best", "--order"},
        {request.state_offload, "--state-offload"},
        {request.optimizer_on != "best", "--optimizer-on"},
        {request.allow_oom, "--allow-oom"}};
    for (const auto& [given, flag] : planning) {
      if (given) throw Error(fmt::format("{} plans a model array (--model), not a --schedule file", flag));
    }
    p.schedule = io::read_schedule(source.schedule_file);
    p.note = "schedule file";
    return p;
  }
  const policies::ModelArray array = source.array.model_array();
  const std::vector<int32_t> partition = source.array.sub_arrays();
  const std::unique_ptr<policies::MemoryPolicy> policy = policies::builtin_policies().create(request.policy);
  const std::string array_text =
      fmt::format("{} x {} [{}]", array.count, array.model, policies::partition_text(partition));
  policies::ArrayPlan planned;
  if (request.wrap) {
    // Planned so that the wrapped steady state fits (policies/wrapped_plan.hpp).
    policies::WrappedArrayPlan wrapped = policies::plan_sub_arrays_wrapped(
        policies::sub_array_steps(array, partition), *policy, cost, limit_bytes,
        policies::parse_order(request.order), request.state_offload,
        policies::parse_optimizer_place(request.optimizer_on), run_host_mode(request));
    if (wrapped.plan.result.feasible && !wrapped.fits && !request.allow_oom) {
      throw InfeasiblePlanError(request.policy, array_text + " with wrapped iterations", limit_bytes,
                                wrapped.wrapped_peak_bytes);
    }
    planned = std::move(wrapped.plan);
    if (wrapped.planned_at_bytes != limit_bytes) {
      planned.result.note += fmt::format("; planned at {} B to leave room for the wrapped boundary",
                                         wrapped.planned_at_bytes);
    }
  } else {
    planned = policies::plan_sub_arrays(
        policies::sub_array_steps(array, partition), *policy, cost, limit_bytes,
        policies::parse_order(request.order), request.state_offload,
        policies::parse_optimizer_place(request.optimizer_on), run_host_mode(request));
  }
  if (!planned.result.feasible && !request.allow_oom) {
    throw InfeasiblePlanError(request.policy, array_text, limit_bytes, planned.result.peak_bytes);
  }
  p.schedule = std::move(planned.result.schedule);
  p.multiplexed = planned.multiplexed;
  p.note = planned.result.note;
  return p;
}

policies::ModelArray ArrayRequest::model_array() const {
  if (models < 1 || models > policies::kMaxArrayModels) {
    throw Error(fmt::format("models = {}: must be from 1 to {}", models, policies::kMaxArrayModels));
  }
  policies::ModelArray array;
  array.model = model;
  array.count = models;
  array.config.batch_size = batch_size;
  array.config.seq_len = seq_len;
  array.config.image_size = image_size;
  array.config.dtype = ir::parse_dtype(dtype);
  array.config.precision = ir::parse_precision(precision);
  array.config.lean_ops = transforms::parse_lean_ops(lean_ops);
  array.optimizer.kind = transforms::parse_optimizer(optimizer);
  if (!lr.empty()) array.optimizer.lr = lr;
  return array;
}

std::vector<int32_t> ArrayRequest::sub_arrays() const {
  return partition.empty() ? std::vector<int32_t>{models} : partition;
}

support::FlagPaths input_files(const ScheduleSource& source) {
  support::FlagPaths files{{"--schedule", source.schedule_file}};
  if (zoo::is_model_file(source.array.model)) files.emplace_back("--model", source.array.model);
  return files;
}

ir::Schedule plain_schedule(const ScheduleSource& source) {
  if (!source.schedule_file.empty()) return io::read_schedule(source.schedule_file);
  return policies::build_plain_schedule(
      policies::sub_array_steps(source.array.model_array(), source.array.sub_arrays()));
}

RunRecord executed_run_record(std::string kind, const ScheduleSource& source, const ir::Schedule& schedule,
                              const ExecTarget& target) {
  RunRecord r;
  r.kind = std::move(kind);
  const bool from_file = !source.schedule_file.empty();
  r.model = from_file ? source.schedule_file : source.array.model;
  r.models =
      static_cast<int32_t>(ir::samples_per_step(schedule) / std::max<int64_t>(1, schedule.graph.batch_size));
  for (const ir::SubArray& s : schedule.sub_arrays) {
    if (!r.partition.empty()) r.partition += ',';
    r.partition += std::to_string(s.width);
  }
  r.policy = schedule.policy;
  r.batch_size = schedule.graph.batch_size;
  r.seq_len = source.array.seq_len;
  r.image_size = source.array.image_size;
  r.dtype = source.array.dtype;
  r.optimizer = from_file ? "" : source.array.optimizer;
  r.device = target.label;
  r.mutwo_version = std::string(mutwo_version());
  r.git_revision = std::string(git_revision());
  r.schedule_hash = content_hash(io::schedule_to_json(schedule));
  return r;
}

InfeasiblePlanError::InfeasiblePlanError(std::string policy_name, std::string array_text, int64_t limit,
                                         int64_t needed)
    : Error(fmt::format("policy '{}' finds no plan for {} within the {} B memory limit: its best plan needs {} B",
                        policy_name, array_text, limit, needed)),
      policy(std::move(policy_name)),
      array(std::move(array_text)),
      limit_bytes(limit),
      needed_bytes(needed) {}

MeasurementRecord measurement_record(const ir::Measurement& m, int64_t samples) {
  MeasurementRecord r;
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

nlohmann::json run_config(const RunRequest& request, const RunOutcome& outcome) {
  nlohmann::json j;
  const ScheduleSource& source = request.source;
  if (source.schedule_file.empty()) {
    const ArrayRequest& a = source.array;
    j["model"] = a.model;
    j["models"] = a.models;
    j["partition"] = a.sub_arrays();
    j["batch_size"] = a.batch_size;
    j["seq_len"] = a.seq_len;
    j["image_size"] = a.image_size;
    j["dtype"] = a.dtype;
    if (a.precision != "fp32") j["precision"] = a.precision;  // fp32 runs keep their configuration
    j["optimizer"] = a.optimizer;
    j["lr"] = a.lr;
    j["policy"] = request.policy;
    j["order"] = request.order;
  }
  j["schedule_hash"] = outcome.record.schedule_hash;
  j["device"] = outcome.target.label;
  j["gpu"] = outcome.cost.gpu.name;
  j["memory_limit_bytes"] = outcome.memory_limit_bytes;
  j["memory_cap_fraction"] = outcome.target.cap_fraction;
  j["cost_source"] = outcome.cost.cost_source;
  j["traces"] = outcome.cost.traces;
  j["iterations"] = request.timed_iterations;
  j["warmup"] = request.warmup_iterations;
  j["seed"] = request.seed;
  j["cuda_graph"] = request.cuda_graph;
  j["host_mode"] = sim::host_mode_name(run_host_mode(request));
  if (!request.back_to_back) j["back_to_back"] = false;  // absent: the default (keeps older hashes)
  if (request.wrap) j["wrap"] = true;
  return j;
}

RunOutcome run_pipeline(const RunRequest& request, ir::Executor& executor) {
  if (!request.cost) throw Error("run pipeline: no cost setup given");
  // Every output checked before the step is planned or measured: a bad --db used to cost the run.
  support::check_output_paths({{"--save-schedule", request.save_schedule}, {"--db", request.db}}, {},
                              input_files(request.source));
  if (!request.db.empty()) check_results_destination(request.db, "--db");
  RunOutcome out;
  out.target = resolve_exec_target(executor, request.device, request.memory_cap);
  out.cost = request.cost(out.target.catalog_gpu);
  out.memory_limit_bytes = run_memory_limit(out.target, out.cost.gpu.memory_bytes);

  PlannedRun planned = plan_run(request, *out.cost.cost, out.memory_limit_bytes);
  out.schedule = std::move(planned.schedule);
  out.multiplexed = planned.multiplexed;
  out.plan_note = std::move(planned.note);
  if (!request.save_schedule.empty()) io::write_schedule(out.schedule, request.save_schedule);
  out.samples_per_step = ir::samples_per_step(out.schedule);

  sim::SimOptions sim_options;
  sim_options.memory_limit_bytes = out.memory_limit_bytes;
  out.host_mode = run_host_mode(request);
  sim_options.host_mode = out.host_mode;
  sim_options.iterations = request.back_to_back && !request.cuda_graph ? 3 : 1;
  std::optional<ir::BoundaryMerge> wrap;
  if (request.wrap) {
    if (!request.back_to_back || request.cuda_graph) {
      throw Error(fmt::format("--wrap merges the boundaries of steps run back to back: not with {}",
                              request.cuda_graph ? "--cuda-graph" : "--sync-each-step"));
    }
    // The same merge for both back ends: weighed by the prediction's cost model.
    wrap = ir::boundary_merge(out.schedule, costmodel::op_durations_ns(*out.cost.cost, out.schedule.graph));
    sim_options.wrap_iterations = true;
  }
  out.prediction = sim::simulate(out.schedule, *out.cost.cost, sim_options);

  ir::RunOptions run;
  run.device = out.target.device;
  run.warmup_iterations = request.warmup_iterations;
  run.timed_iterations = request.timed_iterations;
  run.seed = request.seed;
  run.memory_limit_bytes = out.target.is_cuda ? 0 : out.memory_limit_bytes;  // the cpu enforces it by accounting
  run.memory_cap_fraction = out.target.cap_fraction;
  run.cuda_graph = request.cuda_graph;
  run.back_to_back = request.back_to_back;
  run.wrap = std::move(wrap);
  run.stop_requested = request.stop_requested;
  out.measurement = executor.measure(out.schedule, run);

  const ir::Measurement& m = out.measurement;
  out.record = executed_run_record("run", request.source, out.schedule, out.target);
  out.record.gpu = out.cost.gpu.name;
  out.record.memory_limit_bytes = out.memory_limit_bytes;
  out.record.memory_cap_fraction = out.target.cap_fraction;
  out.record.cost_source = out.cost.cost_source;
  out.record.config_hash = config_hash(run_config(request, out));
  out.record.notes = fmt::format("{}{}{}; {}", out.multiplexed ? "multiplexed" : "back to back",
                                 m.cuda_graph ? ", CUDA graph" : "",
                                 m.wrapped        ? ", steady state (steps back to back, boundaries wrapped)"
                                 : m.back_to_back ? ", steady state (steps back to back)"
                                                  : ", steps timed one by one",
                                 out.plan_note);
  out.prediction_record = prediction_record(out.prediction, out.samples_per_step);
  out.measurement_record = measurement_record(m, out.samples_per_step);
  if (!request.db.empty()) {
    // A database that fails now (locked past the busy timeout, its disk full) must not cost the
    // measurement: the caller shows it, then reports the failure.
    try {
      ResultsDb db = ResultsDb::open(request.db);
      out.run_id = db.insert(out.record, out.prediction_record, out.measurement_record);
    } catch (const ResultsDbError& e) {
      out.store_error = e.what();
    }
  }
  return out;
}

void throw_if_not_stored(const RunOutcome& out, std::string_view measured) {
  if (!out.store_error.empty()) {
    throw ResultsDbError(fmt::format("{}; measured, not stored: {}", out.store_error, measured));
  }
}

}  // namespace mutwo::experiments
