// Kind `dtr`: DTR's simulated experiment (Kirisame et al., ICLR 2021; simrd's pareto protocol) on
// its own operator logs: per log, heuristic and budget ratio, the compute overhead of dynamic
// rematerialisation, or OOM / remat limit exceeded (sim/dtr_replay.hpp).
#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/content_hash.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"
#include "experiments/sweep_keys.hpp"
#include "io/dtr_log.hpp"
#include "policies/dtr_heuristics.hpp"
#include "sim/dtr_replay.hpp"
#include "support/error.hpp"
#include "support/plugins.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {
namespace {

std::filesystem::path log_path(const ExperimentSpec& spec, const std::string& log) {
  const std::filesystem::path p(log);
  return p.is_absolute() ? p : spec.base_dir / p;
}

// "resnet32-56-9000000000.0-...-default.log.gz" -> "resnet32" (DTR's log names: model-batch-...).
std::string short_log_name(const std::string& file_name) {
  return file_name.substr(0, file_name.find('-'));
}

std::vector<std::string> heuristic_names(const ExperimentSpec& spec) {
  if (!spec.sweep.heuristics.empty()) return spec.sweep.heuristics;
  std::vector<std::string> all;
  for (const policies::DtrHeuristicInfo& h : policies::dtr_heuristics()) all.push_back(h.name);
  return all;
}

class DtrKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "dtr"; }
  std::string_view description() const override {
    return "DTR operator logs replayed under budgets, per eviction heuristic (simrd's protocol)";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {"logs", "heuristics", "budget_ratios",
                                                       "overhead_limit"};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {"overhead_vs_budget"};
    return f;
  }

  void validate(const ExperimentSpec& spec) const override {
    require_sweep_keys(spec, {"logs"});
    std::map<std::string, std::string> by_file_name;
    for (const std::string& log : spec.sweep.logs) {
      const std::filesystem::path p = log_path(spec, log);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) {
        throw Error(fmt::format("{}: 'sweep.logs' = '{}': no such file ({})", spec.source, log, p.string()));
      }
      // The table's `log` column and the figures' panels name a log by its file name: two logs of one
      // name (in two folders) were drawn as one.
      if (const auto [it, first] = by_file_name.emplace(p.filename().string(), log); !first) {
        throw Error(
            fmt::format("{}: 'sweep.logs' = '{}' has the file name of '{}': the table and figures name "
                        "a log by its file name; give each log its own",
                        spec.source, log, it->second));
      }
    }
    for (const std::string& h : heuristic_names(spec)) {
      try {
        policies::make_dtr_heuristic(h);
      } catch (const UnknownNameError& e) {
        throw UnknownNameError(fmt::format("{}: 'sweep.heuristics' = '{}': {}", spec.source, h, e.what()));
      }
    }
  }

  std::vector<SweepFactor> sweep_factors(const ExperimentSpec& spec) const override {
    const size_t ratios =
        spec.sweep.budget_ratios.empty() ? sim::dtr_paper_ratios().size() : spec.sweep.budget_ratios.size();
    return {{"logs", static_cast<int64_t>(spec.sweep.logs.size())},
            {"heuristics", static_cast<int64_t>(heuristic_names(spec).size())},
            {"budget_ratios", static_cast<int64_t>(ratios)}};
  }

  std::vector<Task> expand(const ExperimentSpec& spec) const override {
    const std::vector<double> ratios =
        spec.sweep.budget_ratios.empty() ? sim::dtr_paper_ratios() : spec.sweep.budget_ratios;
    std::vector<Task> tasks;
    for (const std::string& log : spec.sweep.logs) {
      const std::filesystem::path path = log_path(spec, log);
      const std::string file = path.filename().string();
      // A changed log is a new configuration.
      const std::string hash = content_hash(support::read_file_bytes(path, "DTR log"));
      for (const std::string& heuristic : heuristic_names(spec)) {
        Task t;
        t.label = fmt::format("{}, {}", short_log_name(file), heuristic);
        t.inputs = {{"path", path.string()}};
        for (double ratio : ratios) {
          t.configs.push_back({{"experiment", spec.name},
                               {"kind", spec.kind},
                               {"log", file},
                               {"log_hash", hash},
                               {"heuristic", heuristic},
                               {"budget_ratio", ratio},
                               {"overhead_limit", spec.sweep.overhead_limit}});
        }
        tasks.push_back(std::move(t));
      }
    }
    return tasks;
  }

  std::vector<ResultRow> run(const ExperimentSpec& spec, const Task& task) const override {
    const std::string path = task.inputs["path"];
    const std::string file = task.configs.front()["log"];
    const std::string heuristic_name = task.configs.front()["heuristic"];
    const io::DtrLog log = io::parse_dtr_log(support::read_text_file(path), path);
    const sim::DtrBaseline baseline = sim::dtr_baseline(log);
    const std::unique_ptr<sim::EvictionHeuristic> heuristic =
        policies::make_dtr_heuristic(heuristic_name);
    std::vector<double> ratios;
    for (const nlohmann::json& c : task.configs) ratios.push_back(c["budget_ratio"]);
    const std::vector<sim::DtrSweepRow> sweep =
        sim::sweep_dtr_log(log, baseline, ratios, {heuristic.get()}, 1, spec.sweep.overhead_limit, path);

    std::vector<ResultRow> rows;
    for (const sim::DtrSweepRow& s : sweep) {
      const sim::DtrReplayResult& r = s.result;
      ResultRow out;
      out.run.kind = "simulate";
      out.run.model = short_log_name(file);
      out.run.policy = heuristic_name;
      out.run.memory_limit_bytes = r.budget_bytes;
      out.run.cost_source = "measured";  // the log's own op times
      out.run.notes = std::string(sim::dtr_outcome_name(r.outcome));
      out.row.experiment = spec.name;
      out.row.series = heuristic_name;
      out.row.feasible = r.outcome == sim::DtrOutcome::ok;
      auto add = [&](const char* name, double value) { out.row.metrics.push_back({name, value}); };
      const auto as = [](int64_t v) { return static_cast<double>(v); };
      add("budget_ratio", s.ratio);
      add("budget_bytes", as(r.budget_bytes));
      add("baseline_peak_bytes", as(baseline.peak_bytes));
      add("baseline_compute_ns", as(baseline.compute_ns));
      add("clock_ns", as(r.clock_ns));
      add("remat_ns", as(r.remat_compute_ns));
      add("remat_ops", r.remat_ops);
      add("evictions", r.evictions);
      add("peak_bytes", as(r.peak_bytes));
      if (out.row.feasible) add("overhead", s.overhead);
      rows.push_back(std::move(out));
    }
    return rows;
  }

  CsvTable table(const ExperimentSpec& spec, const std::vector<StoredExperimentRow>& rows,
                 const ResultsDb&) const override {
    std::vector<std::vector<std::string>> outcome;
    for (const StoredExperimentRow& r : rows) outcome.push_back({r.run.run.notes});
    return metrics_table(rows, sweep_columns(spec, sweep_keys()), {"outcome"}, outcome);
  }
};

}  // namespace

namespace {

void register_dtr_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<DtrKind>());
}

[[maybe_unused]] const bool kRegistered = Plugins<ExperimentKindRegistry>::add(30, register_dtr_kind);

}  // namespace

}  // namespace mutwo::experiments
