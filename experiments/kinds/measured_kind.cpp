// Kind `measured`: predicted against measured step time: how far the simulator can be trusted on
// this GPU. Without a sweep nothing is run: its table and figure read the runs `mutwo run` stored
// (one prediction and one measurement of the same schedule). With a sweep (models, model_counts,
// gpus, and optionally policies, device, iterations, warmup) each configuration goes through the
// run pipeline (plan -> simulate -> run on the executor module -> store) like `mutwo run`, so a
// spec can run a whole measured sweep on a GPU.
#include <mutex>

#include <fmt/format.h>

#include "costmodel/cost_setup.hpp"
#include "experiments/executor_loader.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"
#include "experiments/run_pipeline.hpp"
#include "ir/exec_device.hpp"
#include "support/plugins.hpp"

namespace mutwo::experiments {
namespace {

// The executor module, loaded once by the first configuration that runs. The runner runs this
// kind's tasks one at a time (runs_one_at_a_time), so measured step times never overlap and rows
// are stored in sweep order; the lock only guards the load.
class SharedExecutor {
 public:
  template <typename F>
  auto with(F&& f) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!executor_) executor_ = load_executor("experiment kind 'measured'");
    return f(*executor_);
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<ir::Executor> executor_;
};

SharedExecutor& shared_executor() {
  static SharedExecutor shared;
  return shared;
}

bool runs_sweep(const ExperimentSpec& spec) { return !spec.sweep_keys_given.empty(); }

std::vector<std::string> sweep_policies(const ExperimentSpec& spec) {
  return spec.sweep.policies.empty() ? std::vector<std::string>{"none"} : spec.sweep.policies;
}

class MeasuredKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "measured"; }
  std::string_view description() const override {
    return "predicted against measured step time: of the runs `mutwo run` stored, or of a sweep it "
           "runs on the executor";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {"models", "model_counts", "gpus",   "policies",  "dtype", "precision",
                                                       "optimizer", "cost_source", "traces", "device", "iterations", "warmup"};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {"predicted_vs_measured"};
    return f;
  }
  void validate(const ExperimentSpec& spec) const override {
    if (!runs_sweep(spec)) return;
    validate_array_sweep(spec);
    // Checked here, not by the executor at the first configuration (after the database was made).
    if (!spec.sweep.device.empty()) {
      try {
        (void)ir::parse_exec_device(spec.sweep.device);
      } catch (const Error& e) {
        throw Error(fmt::format("{}: 'sweep.device' = '{}': {}", spec.source, spec.sweep.device, e.what()));
      }
    }
  }

  std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const override {
    if (!runs_sweep(spec)) return {};
    std::vector<SweepFactor> f = array_factors(spec);
    f.push_back({"policies", static_cast<int64_t>(sweep_policies(spec).size())});
    return f;
  }

  // One task per array and policy, one row each.
  std::vector<Task> expand(const ExperimentSpec& spec) const override {
    std::vector<Task> tasks;
    if (!runs_sweep(spec)) return tasks;
    for (const ArrayPoint& p : array_points(spec, "libtorch")) {  // as the executor issues its steps
      for (const std::string& policy : sweep_policies(spec)) {
        nlohmann::json c = array_config(spec, p);
        c["policy"] = policy;
        c["device"] = spec.sweep.device;
        c["iterations"] = spec.sweep.iterations;
        c["warmup"] = spec.sweep.warmup;
        Task t;
        t.label = fmt::format("{}, {}", p.label(), policy);
        t.configs.push_back(std::move(c));
        tasks.push_back(std::move(t));
      }
    }
    return tasks;
  }

  bool runs_one_at_a_time(const ExperimentSpec&) const override { return true; }  // its tasks time the executor

  std::vector<ResultRow> run(const ExperimentSpec& spec, const Task& task) const override {
    const nlohmann::json& c = task.configs.front();
    const ArrayPoint p = array_point(c);
    RunRequest request;
    request.source.array.model = p.model;
    request.source.array.models = p.models;
    request.source.array.batch_size = p.batch_size;
    request.source.array.seq_len = p.seq_len;
    request.source.array.image_size = p.image_size;
    request.source.array.dtype = p.dtype;
    request.source.array.precision = p.precision;
    request.source.array.optimizer = p.optimizer;
    request.policy = c.at("policy").get<std::string>();
    request.device = c.at("device").get<std::string>();
    request.timed_iterations = c.at("iterations").get<int32_t>();
    request.warmup_iterations = c.at("warmup").get<int32_t>();
    request.host_mode = p.host_mode;  // the prediction's host timeline (sweep.host_mode)
    // The one cost setup of an array point (its GPU, cost source and the source's traces).
    request.cost = [&spec, p](const std::optional<std::string>&) {
      RunCost setup;
      setup.cost = costmodel::make_cost_model(array_cost_setup(spec, p));
      setup.gpu = setup.cost->device();
      setup.cost_source = p.cost_source;
      setup.traces = p.traces;
      return setup;
    };

    ResultRow row;
    row.row.experiment = spec.name;
    row.row.series = p.model;
    try {
      const RunOutcome out =
          shared_executor().with([&](ir::Executor& executor) { return run_pipeline(request, executor); });
      row.run = out.record;
      row.prediction = out.prediction_record;
      row.measurement = out.measurement_record;
      const bool feasible = !out.prediction.oom && !out.measurement.oom;
      row.row.feasible = feasible;
      row.row.metrics = {{"memory_limit_bytes", static_cast<double>(out.memory_limit_bytes)},
                         {"predicted_step_time_ns", static_cast<double>(out.prediction.step_time_ns)},
                         {"predicted_peak_bytes", static_cast<double>(out.prediction.peak_bytes)},
                         {"measured_peak_bytes", static_cast<double>(out.measurement.peak_bytes)}};
      if (feasible && out.measurement.step_time_ns > 0) {
        const double measured = static_cast<double>(out.measurement.step_time_ns);
        row.row.metrics.push_back({"measured_step_time_ns", measured});
        row.row.metrics.push_back(
            {"error_pct", 100.0 * (static_cast<double>(out.prediction.step_time_ns) - measured) / measured});
        row.row.metrics.push_back(
            {"samples_per_s", static_cast<double>(out.samples_per_step) * 1e9 / measured});
      }
    } catch (const InfeasiblePlanError& e) {
      // Nothing ran: the row says what the policy's best plan needs.
      row.run = array_run_record(p);
      row.run.policy = request.policy;
      row.run.memory_limit_bytes = e.limit_bytes;
      row.row.feasible = false;
      row.row.metrics = {{"memory_limit_bytes", static_cast<double>(e.limit_bytes)},
                         {"peak_bytes", static_cast<double>(e.needed_bytes)}};
    }
    return {std::move(row)};
  }

  CsvTable table(const ExperimentSpec&, const std::vector<StoredExperimentRow>&,
                 const ResultsDb& db) const override {
    CsvTable t;
    t.header = {"run_id",
                "created_at",
                "model",
                "models",
                "partition",
                "policy",
                "batch_size",
                "device",
                "gpu",
                "cost_source",
                "predicted_step_time_ns",
                "measured_step_time_ns",
                "error_pct",
                "predicted_peak_bytes",
                "measured_peak_bytes",
                "mutwo_version"};
    for (const StoredRun& s : db.runs()) {
      if (s.run.kind != "run" || !s.prediction || !s.measurement) continue;
      if (s.prediction->oom || s.measurement->oom || s.measurement->step_time_ns <= 0) continue;
      const RunRecord& r = s.run;
      const double error_pct = 100.0 *
                               static_cast<double>(s.prediction->step_time_ns - s.measurement->step_time_ns) /
                               static_cast<double>(s.measurement->step_time_ns);
      t.rows.push_back({std::to_string(r.id), r.created_at, r.model, std::to_string(r.models), r.partition,
                        r.policy, std::to_string(r.batch_size), r.device, r.gpu, r.cost_source,
                        std::to_string(s.prediction->step_time_ns),
                        std::to_string(s.measurement->step_time_ns), number_cell(error_pct),
                        std::to_string(s.prediction->peak_bytes), std::to_string(s.measurement->peak_bytes),
                        r.mutwo_version});
    }
    return t;
  }
};

}  // namespace

namespace {

void register_measured_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<MeasuredKind>());
}

[[maybe_unused]] const bool kRegistered = Plugins<ExperimentKindRegistry>::add(40, register_measured_kind);

}  // namespace

}  // namespace mutwo::experiments
