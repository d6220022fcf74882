// Kind `policies`: one model array fused into one sub-array, planned by each swap/recompute policy
// at memory limits that are fractions of its unoptimised peak (the plain schedule with no limit):
// throughput against memory, the trade-off every policy paper plots.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"
#include "experiments/sweep_keys.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "policies/strategy.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::experiments {
namespace {

class PoliciesKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "policies"; }
  std::string_view description() const override {
    return "one fused model array, each policy at fractions of its unoptimised peak memory";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {"models",           "model_counts", "gpus",
                                                       "memory_fractions", "policies",     "dtype", "precision", "lean_ops", "host_mode",
                                                       "optimizer",        "cost_source",  "traces"};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {"throughput_vs_memory"};
    return f;
  }

  void validate(const ExperimentSpec& spec) const override {
    validate_array_sweep(spec);
    require_sweep_keys(spec, {"memory_fractions", "policies"});
  }

  std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const override {
    std::vector<SweepFactor> f = array_factors(spec);
    f.push_back({"policies", static_cast<int64_t>(spec.sweep.policies.size())});
    f.push_back({"memory_fractions", static_cast<int64_t>(spec.sweep.memory_fractions.size())});
    return f;
  }

  // One task per array and policy: the policies of one array run side by side.
  std::vector<Task> expand(const ExperimentSpec& spec) const override {
    std::vector<Task> tasks;
    for (const ArrayPoint& p : array_points(spec)) {
      for (const std::string& policy : spec.sweep.policies) {
        Task t;
        t.label = fmt::format("{}, {}", p.label(), policy);
        for (double fraction : spec.sweep.memory_fractions) {
          nlohmann::json c = array_config(spec, p);
          c["policy"] = policy;
          c["memory_fraction"] = fraction;
          t.configs.push_back(std::move(c));
        }
        tasks.push_back(std::move(t));
      }
    }
    return tasks;
  }

  std::vector<ResultRow> run(const ExperimentSpec& spec, const Task& task) const override {
    const nlohmann::json& first = task.configs.front();
    const ArrayPoint p = array_point(first);
    const std::string policy_name = first["policy"];
    const std::unique_ptr<costmodel::OpCostModel> cost = array_cost_model(spec, p);

    policies::ModelArray array;
    array.model = p.model;
    array.count = p.models;
    array.config = p.model_config();
    array.optimizer = p.optimizer_config();
    const ir::Schedule base = policies::build_plain_schedule(policies::sub_array_steps(array, {p.models}));
    const int64_t samples = static_cast<int64_t>(p.models) * p.batch_size;
    const sim::HostMode host_mode = sim::parse_host_mode(p.host_mode);
    sim::SimOptions unlimited;
    unlimited.memory_limit_bytes = -1;
    unlimited.host_mode = host_mode;
    const sim::Prediction unoptimised = sim::simulate(base, *cost, unlimited);
    const std::unique_ptr<policies::MemoryPolicy> policy = policies::builtin_policies().create(policy_name);

    std::vector<ResultRow> rows;
    for (const nlohmann::json& c : task.configs) {
      const double fraction = c["memory_fraction"];
      const auto limit =
          static_cast<int64_t>(std::floor(fraction * static_cast<double>(unoptimised.peak_bytes)));
      const policies::PolicyResult plan = policy->plan({&base, cost.get(), limit, host_mode});
      // A feasible plan carries its prediction at this limit; an infeasible one is simulated to
      // where it stops, as the row reports it.
      sim::SimOptions options;
      options.memory_limit_bytes = limit;
      options.host_mode = host_mode;
      const sim::Prediction pred = plan.feasible ? plan.prediction : sim::simulate(plan.schedule, *cost, options);

      ResultRow out;
      out.run = array_run_record(p);
      out.run.partition = std::to_string(p.models);
      out.run.policy = policy_name;
      out.run.memory_limit_bytes = limit;
      out.run.notes = plan.note;
      out.prediction = prediction_record(pred, samples);
      out.row.experiment = spec.name;
      out.row.series = policy_name;
      out.row.feasible = plan.feasible && !pred.oom;
      auto add = [&](const char* name, double value) { out.row.metrics.push_back({name, value}); };
      const auto as = [](int64_t v) { return static_cast<double>(v); };
      add("memory_fraction", fraction);
      add("memory_limit_bytes", as(limit));
      add("unoptimised_peak_bytes", as(unoptimised.peak_bytes));
      add("unoptimised_step_time_ns", as(unoptimised.step_time_ns));
      add("peak_bytes", as(out.row.feasible ? pred.peak_bytes : plan.peak_bytes));
      if (out.row.feasible) {
        const policies::RunFigures f = policies::run_figures(pred);
        add("step_time_ns", as(f.step_time_ns));
        add("samples_per_s", as(samples) * 1e9 / as(f.step_time_ns));
        add("throughput_over_unoptimised", as(unoptimised.step_time_ns) / as(f.step_time_ns));
        add("recompute_ns", as(f.recompute_ns));
        add("swap_ns", as(f.swap_ns));
        add("compute_stall_ns", as(f.compute_stall_ns));
        add("bytes_swapped", as(f.bytes_swapped));
      }
      rows.push_back(std::move(out));
    }
    return rows;
  }

  CsvTable table(const ExperimentSpec& spec, const std::vector<StoredExperimentRow>& rows,
                 const ResultsDb&) const override {
    const std::vector<std::string> columns =
        sweep_columns(spec, {"models", "model_counts", "lean_ops", "gpus", "dtype", "optimizer",
                             "cost_source", "policies", "memory_fractions"});
    return metrics_table(rows, columns, {}, {});
  }
};

}  // namespace

namespace {

void register_policies_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<PoliciesKind>());
}

[[maybe_unused]] const bool kRegistered = Plugins<ExperimentKindRegistry>::add(20, register_policies_kind);

}  // namespace

}  // namespace mutwo::experiments
