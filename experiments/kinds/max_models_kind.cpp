// Kind `max_models`: how many models each strategy trains at once on one GPU (μ-TWO, Purandare et
// al., MLSys 2023: "3-5x more models than HFTA"). For every array of the sweep (model, batch,
// count, GPU, limit) one search; two rows:
// - hfta: its widest fused group that fits (the models HFTA trains at once), whatever the count;
// - mutwo: whether the array trains in one run (sub-arrays multiplexed, state resident or on the
//   host between uses; policies/search.hpp) and the plan's figures.
// At each memory limit of the sweep ("device": the GPU's memory). The table is the summary: per
// model, batch, GPU and limit, HFTA's widest group, the largest count of the
// sweep mutwo trains in one run, their ratio, and that array's footprint over the GPU's memory
// (models x one model's unoptimised peak, the memory training them all at once would need).
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/search.hpp"
#include "policies/strategy.hpp"
#include "sim/host_mode.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::experiments {
namespace {

// The two series the kind compares: HFTA's widest fused group (the strategies' reference) and the
// largest array the partition search trains in one run (the searched strategy).
const std::vector<std::string>& compared_series() {
  static const std::vector<std::string> series{policies::builtin_strategies().reference().name,
                                               policies::builtin_strategies().searched().name};
  return series;
}

// The widest sub-array of a partition label "gpt2:2+2+1" (0 when it names none).
int32_t widest_part(const std::string& partition) {
  int32_t widest = 0;
  size_t at = partition.find(':');
  while (at != std::string::npos && at + 1 < partition.size()) {
    size_t used = 0;
    const int32_t w = std::stoi(partition.substr(at + 1), &used);
    widest = std::max(widest, w);
    at = partition.find('+', at + 1);
  }
  return widest;
}

class MaxModelsKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "max_models"; }
  std::string_view description() const override {
    return "models trained at once on one GPU: HFTA's widest fused group vs the largest array mutwo "
           "trains in one run";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {"models",    "model_counts", "gpus",  "memory_limits", "policies",
                                                       "dtype",     "precision",    "host_mode",   "optimizer",
                                                       "cost_source", "traces"};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {};
    return f;
  }

  void validate(const ExperimentSpec& spec) const override {
    validate_array_sweep(spec);
    validate_memory_limits(spec);
    validate_searched_counts(spec);
  }

  std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const override {
    std::vector<SweepFactor> f = array_factors(spec);
    f.push_back({"memory_limits", static_cast<int64_t>(sweep_memory_limits(spec).size())});
    f.push_back({"series", static_cast<int64_t>(compared_series().size())});
    return f;
  }

  std::vector<Task> expand(const ExperimentSpec& spec) const override {
    std::vector<Task> tasks;
    for (const ArrayPoint& p : array_points(spec)) {
      for (const std::string& limit : sweep_memory_limits(spec)) {
        Task t;
        t.label = fmt::format("{}, limit {}", p.label(), limit);
        for (const std::string& series : compared_series()) {
          nlohmann::json c = array_config(spec, p);
          c["memory_limit_bytes"] = memory_limit_bytes(spec, limit, p.gpu);
          c["series"] = series;
          t.configs.push_back(std::move(c));
        }
        tasks.push_back(std::move(t));
      }
    }
    return tasks;
  }

  std::vector<ResultRow> run(const ExperimentSpec& spec, const Task& task) const override {
    const ArrayPoint p = array_point(task.configs.front());
    const std::unique_ptr<costmodel::OpCostModel> cost = array_cost_model(spec, p);
    const int64_t memory = task.configs.front()["memory_limit_bytes"];

    policies::SearchConfig config = array_search_config(spec, p, *cost, memory);
    config.top = 1;  // the best one-run plan
    const policies::SearchReport report = policies::run_search(config);

    // One model's unoptimised peak: the footprint per model.
    policies::StepGraphCache graphs({config.architectures.front()}, config.optimizer);
    sim::SimOptions unlimited;
    unlimited.memory_limit_bytes = -1;
    const int64_t one_peak =
        sim::simulate(policies::build_plain_schedule({graphs.get(0, 1)}), *cost, unlimited).peak_bytes;
    const double footprint = static_cast<double>(one_peak) * p.models;

    std::vector<ResultRow> rows;
    for (const std::string& series : compared_series()) {
      const bool hfta = series == policies::builtin_strategies().reference().name;
      auto found = std::find_if(report.rows.begin(), report.rows.end(), [&](const policies::SearchRow& r) {
        return r.strategy == series && (hfta || (r.runs == 1 && !r.pruned));
      });
      ResultRow out;
      out.run = array_run_record(p);
      out.run.memory_limit_bytes = memory;
      out.row.experiment = spec.name;
      out.row.series = series;
      auto add = [&](const char* name, double value) { out.row.metrics.push_back({name, value}); };
      add("footprint_bytes", footprint);
      add("footprint_over_memory", footprint / static_cast<double>(memory));  // over the limit
      if (found != report.rows.end()) {
        const policies::SearchRow& r = *found;
        out.run.partition = r.partition;
        out.run.policy = r.policy;
        out.run.notes = r.note;
        out.row.feasible = r.feasible;
        add("peak_bytes", static_cast<double>(r.peak_bytes));
        if (r.feasible) {
          add("step_time_ns", static_cast<double>(r.step_time_ns));
          add("samples_per_s", r.samples_per_s);
          add("state_offloaded", r.state_offloaded ? 1 : 0);
          add("state_bytes_swapped", static_cast<double>(r.state_bytes_swapped));
          add("bytes_swapped", static_cast<double>(r.bytes_swapped));
          add("recompute_ns", static_cast<double>(r.recompute_ns));
          add("runs", r.runs);
        }
        if (hfta && r.feasible) add("models_at_once", widest_part(r.partition));
        if (!hfta && r.feasible) add("models_at_once", p.models);
      } else {
        out.row.feasible = false;
        out.run.notes = "no one-run plan";
      }
      rows.push_back(std::move(out));
    }
    return rows;
  }

  // The summary: per (model, batch, gpu, dtype, optimizer, cost source), HFTA's widest group, the
  // largest count mutwo trains in one run, the ratio, and that array's footprint over memory.
  CsvTable table(const ExperimentSpec&, const std::vector<StoredExperimentRow>& rows,
                 const ResultsDb&) const override {
    struct Summary {
      int64_t hfta = 0;
      int64_t mutwo = 0;
      int64_t largest_count = 0;
      double mutwo_footprint = 0;
    };
    std::map<std::tuple<std::string, int64_t, std::string, int64_t, std::string, std::string, std::string>, Summary>
        by_key;
    for (const StoredExperimentRow& r : rows) {
      const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
      const auto key = std::make_tuple(c.value("model", std::string()), c.value("batch_size", int64_t{0}),
                                       c.value("gpu", std::string()), c.value("memory_limit_bytes", int64_t{0}),
                                       c.value("dtype", std::string()),
                                       c.value("optimizer", std::string()), c.value("cost_source", std::string()));
      Summary& s = by_key[key];
      const int64_t count = c.value("models", int64_t{0});
      s.largest_count = std::max(s.largest_count, count);
      if (!r.row.feasible) continue;
      const int64_t at_once = static_cast<int64_t>(r.row.metric("models_at_once").value_or(0));
      if (r.row.series == compared_series()[0]) s.hfta = std::max(s.hfta, at_once);
      if (r.row.series == compared_series()[1] && at_once > s.mutwo) {
        s.mutwo = at_once;
        s.mutwo_footprint = r.row.metric("footprint_over_memory").value_or(0);
      }
    }
    CsvTable t;
    t.header = {"model",           "batch_size",         "gpu",  "memory_limit_bytes",     "dtype", "optimizer", "cost_source",
                "hfta_max_models", "mutwo_max_models",  "mutwo_at_sweep_limit", "ratio", "mutwo_footprint_over_memory"};
    for (const auto& [key, s] : by_key) {
      const auto& [model, batch, gpu, limit, dtype, optimizer, source] = key;
      t.rows.push_back({model, std::to_string(batch), gpu, std::to_string(limit), dtype, optimizer, source,
                        std::to_string(s.hfta),
                        std::to_string(s.mutwo), s.mutwo > 0 && s.mutwo == s.largest_count ? "yes" : "no",
                        s.hfta > 0 ? number_cell(static_cast<double>(s.mutwo) / static_cast<double>(s.hfta)) : "",
                        number_cell(s.mutwo_footprint)});
    }
    return t;
  }
};

}  // namespace

namespace {

void register_max_models_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<MaxModelsKind>());
}

[[maybe_unused]] const bool kRegistered = Plugins<ExperimentKindRegistry>::add(60, register_max_models_kind);

}  // namespace

}  // namespace mutwo::experiments
