// Kind `strategies`: per model array, the four strategies of the search (sequential, hfta,
// hfta+capuchin, mutwo; policies/strategy.hpp, policies/search.hpp) at a memory limit. Draws
// μ-TWO's main figure (step time normalised to HFTA vs number of models) and its breakdown
// (recompute / compute, swap overlap, peak / limit).
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"
#include "experiments/sweep_keys.hpp"
#include "policies/policy_registry.hpp"
#include "policies/search.hpp"
#include "policies/strategy.hpp"
#include "sim/host_mode.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::experiments {
namespace {

std::string config_key_without_strategy(nlohmann::json config) {
  config.erase("strategy");
  config.erase("policies");
  return config.dump();
}

class StrategiesKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "strategies"; }
  std::string_view description() const override {
    return "per model array and memory limit, the best plan of each strategy (sequential, hfta, "
           "hfta+capuchin, "
           "mutwo)";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {"models",        "model_counts", "gpus", "host_link_gbps",
                                                       "memory_limits", "strategies",   "policies",
                                                       "dtype",         "precision", "lean_ops", "host_mode",    "optimizer",    "cost_source",
                                                       "traces"};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {"step_time_vs_models", "breakdown", "throughput_vs_batch"};
    return f;
  }

  void validate(const ExperimentSpec& spec) const override {
    validate_array_sweep(spec);
    require_sweep_keys(spec, {"strategies"});
    const Sweep& s = spec.sweep;
    std::vector<std::string> valid;
    for (const policies::StrategyInfo& st : policies::builtin_strategies()) valid.push_back(st.name);
    for (const std::string& st : s.strategies) {
      if (std::find(valid.begin(), valid.end(), st) == valid.end()) {
        throw UnknownNameError(fmt::format("{}: 'sweep.strategies' = '{}': unknown strategy; valid: {}",
                                           spec.source, st, fmt::join(valid, ", ")));
      }
    }
    validate_memory_limits(spec);
    validate_searched_counts(spec);
  }

  std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const override {
    std::vector<SweepFactor> f = array_factors(spec);
    f.push_back({"memory_limits", static_cast<int64_t>(sweep_memory_limits(spec).size())});
    f.push_back({"strategies", static_cast<int64_t>(spec.sweep.strategies.size())});
    return f;
  }

  std::vector<Task> expand(const ExperimentSpec& spec) const override {
    const std::vector<std::string> limits = sweep_memory_limits(spec);
    std::vector<Task> tasks;
    for (const ArrayPoint& p : array_points(spec)) {
      for (const std::string& limit : limits) {
        const int64_t limit_bytes = memory_limit_bytes(spec, limit, p.gpu);
        Task t;
        t.label = fmt::format("{}, limit {}", p.label(), limit);
        for (const std::string& strategy : spec.sweep.strategies) {
          nlohmann::json c = array_config(spec, p);
          c["memory_limit_bytes"] = limit_bytes;
          c["strategy"] = strategy;
          c["policies"] = strategy == policies::builtin_strategies().searched().name
                              ? spec.sweep.policies
                              : std::vector<std::string>{};
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
    const int64_t limit = first["memory_limit_bytes"];
    const std::unique_ptr<costmodel::OpCostModel> cost = array_cost_model(spec, p);

    policies::SearchConfig config = array_search_config(spec, p, *cost, limit);
    config.top = 1;  // only the best mutwo plan is kept; a smaller top prunes more by throughput
    config.prune_below_separate_runs = true;  // the series is the strategy's best plan, whatever its kind
    const policies::SearchReport report = policies::run_search(config);

    std::vector<ResultRow> rows;
    for (const nlohmann::json& c : task.configs) {
      const std::string strategy = c["strategy"];
      auto found = std::find_if(report.rows.begin(), report.rows.end(),
                                [&](const policies::SearchRow& r) { return r.strategy == strategy; });
      policies::SearchRow r;
      if (found != report.rows.end()) {
        r = *found;
      } else if (strategy == policies::builtin_strategies().searched().name) {
        // every partition pruned: no plan, only the smallest limit
        r.strategy = strategy;
        r.peak_bytes = report.smallest_limit_bytes;
        r.note = "no partition fits";
      } else {
        throw Error(fmt::format("{}: the search reported no '{}' row", task.label, strategy));
      }
      rows.push_back(row_of(spec, p, limit, r));
    }
    return rows;
  }

  CsvTable table(const ExperimentSpec& spec, const std::vector<StoredExperimentRow>& rows,
                 const ResultsDb&) const override {
    // step_time_over_hfta: against the feasible hfta row of the same array and limit.
    std::map<std::string, double> hfta_ns;
    for (const StoredExperimentRow& r : rows) {
      const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
      if (r.row.series == policies::builtin_strategies().reference().name && r.row.feasible) {
        hfta_ns[config_key_without_strategy(c)] = r.row.metric("step_time_ns").value_or(0);
      }
    }
    std::vector<std::vector<std::string>> extra;
    for (const StoredExperimentRow& r : rows) {
      const auto h = hfta_ns.find(config_key_without_strategy(nlohmann::json::parse(r.row.config_json)));
      const std::optional<double> ns = r.row.metric("step_time_ns");
      const bool both = r.row.feasible && ns && h != hfta_ns.end() && h->second > 0;
      extra.push_back({both ? number_cell(*ns / h->second) : ""});
    }
    const std::vector<std::string> columns =
        sweep_columns(spec, {"models", "model_counts", "lean_ops", "gpus", "host_link_gbps", "memory_limits",
                             "dtype", "optimizer", "cost_source", "strategies"});
    return metrics_table(rows, columns, {"step_time_over_hfta"}, extra);
  }

 private:
  static ResultRow row_of(const ExperimentSpec& spec, const ArrayPoint& p, int64_t limit,
                          const policies::SearchRow& r) {
    ResultRow out;
    out.run = array_run_record(p);
    out.run.partition = r.partition;
    out.run.policy = r.policy;
    out.run.memory_limit_bytes = limit;
    out.run.notes = r.note;
    out.row.experiment = spec.name;
    out.row.series = r.strategy;
    out.row.feasible = r.feasible;
    auto add = [&](const char* name, double value) { out.row.metrics.push_back({name, value}); };
    const auto as = [](int64_t v) { return static_cast<double>(v); };
    add("peak_bytes", as(r.peak_bytes));
    add("memory_limit_bytes", as(limit));
    if (limit > 0) add("peak_over_limit", as(r.peak_bytes) / as(limit));
    if (!r.feasible) return out;
    add("step_time_ns", as(r.step_time_ns));
    add("samples_per_s", r.samples_per_s);
    add("compute_ns", as(r.compute_ns));
    add("recompute_ns", as(r.recompute_ns));
    if (r.compute_ns > 0) add("recompute_over_compute", as(r.recompute_ns) / as(r.compute_ns));
    add("swap_ns", as(r.swap_ns));
    add("compute_stall_ns", as(r.compute_stall_ns));
    add("bytes_swapped", as(r.bytes_swapped));
    add("runs", r.runs);
    // The share of transfer time the compute streams did not wait for.
    if (r.swap_ns > 0) {
      add("swap_overlap_ratio", std::clamp(1.0 - as(r.compute_stall_ns) / as(r.swap_ns), 0.0, 1.0));
    }
    return out;
  }
};

}  // namespace

namespace {

void register_strategies_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<StrategiesKind>());
}

[[maybe_unused]] const bool kRegistered = Plugins<ExperimentKindRegistry>::add(10, register_strategies_kind);

}  // namespace

}  // namespace mutwo::experiments
