// `mutwo compare`: predicted against measured step time and peak memory from a results database,
// per run and summarised (median and max of the absolute relative errors).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "experiments/compare.hpp"
#include "experiments/results_db.hpp"
#include "support/error.hpp"
#include "support/percent.hpp"

namespace mutwo::cli {
namespace {

using experiments::CompareReport;
using experiments::CompareRow;
using experiments::ErrorSummary;

struct CompareOptions {
  std::string db = "results.db";
  bool json = false;
  std::vector<int64_t> run_ids;  // empty: every run with a step figure (profile runs hold op times)
};

std::vector<experiments::StoredRun> load_runs(const experiments::ResultsDb& db, const CompareOptions& opts) {
  std::vector<experiments::StoredRun> runs;
  if (opts.run_ids.empty()) {
    for (experiments::StoredRun& run : db.runs()) {
      if (run.run.kind != "profile") runs.push_back(std::move(run));
    }
    return runs;
  }
  for (int64_t id : opts.run_ids) {
    std::optional<experiments::StoredRun> run = db.run(id);
    if (!run) throw Error(fmt::format("no run {} in results database '{}'", id, opts.db));
    runs.push_back(std::move(*run));
  }
  return runs;
}

// A figure's cell: its value, "OOM" when that side ran out of memory, "-" when it is absent.
std::string cell(const std::optional<int64_t>& value, bool oom, std::string (*format)(int64_t)) {
  if (value) return format(*value);
  return oom ? "OOM" : "-";
}

std::string summary_part(const char* figure, const ErrorSummary& s) {
  if (s.count == 0) return fmt::format("{} error -", figure);
  return fmt::format("{} error median {:.1f} %, max {:.1f} %", figure, 100.0 * s.median_abs,
                     100.0 * s.max_abs);
}

void print_table(const CompareReport& report) {
  Table table({{"run", Align::right},
               {"label", Align::left},
               {"predicted step", Align::right},
               {"measured step", Align::right},
               {"error", Align::right},
               {"predicted peak", Align::right},
               {"measured peak", Align::right},
               {"error", Align::right},
               {"status", Align::left}});
  for (const CompareRow& r : report.rows) {
    table.add_row(
        {std::to_string(r.run_id), r.label, cell(r.predicted_step_ns, r.predicted_oom, human_duration),
         cell(r.measured_step_ns, r.measured_oom, human_duration), support::signed_percent(r.step_rel_error),
         cell(r.predicted_peak_bytes, r.predicted_oom, human_bytes),
         cell(r.measured_peak_bytes, r.measured_oom, human_bytes), support::signed_percent(r.peak_rel_error),
         r.status});
  }
  std::cout << table.render();
  const auto& s = report.summary;
  if (s.compared == 0) {
    std::cout << fmt::format(
        "0 runs compared (of {}): none has both a prediction and a measurement without OOM\n", s.runs);
    return;
  }
  std::cout << fmt::format("{} run{} compared (of {}): {}; {}\n", s.compared, s.compared == 1 ? "" : "s",
                           s.runs, summary_part("step time", s.step), summary_part("peak memory", s.peak));
}

nlohmann::ordered_json optional_json(const auto& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json summary_json(const ErrorSummary& s) {
  nlohmann::ordered_json j;
  j["count"] = s.count;
  j["median_abs_rel_error"] = s.count > 0 ? nlohmann::ordered_json(s.median_abs) : nullptr;
  j["max_abs_rel_error"] = s.count > 0 ? nlohmann::ordered_json(s.max_abs) : nullptr;
  return j;
}

void print_json(const CompareReport& report, const CompareOptions& opts) {
  nlohmann::ordered_json out;
  out["database"] = opts.db;
  out["rows"] = nlohmann::ordered_json::array();
  for (const CompareRow& r : report.rows) {
    nlohmann::ordered_json j;
    j["run_id"] = r.run_id;
    j["kind"] = r.kind;
    j["label"] = r.label;
    j["status"] = r.status;
    j["predicted_step_ns"] = optional_json(r.predicted_step_ns);
    j["measured_step_ns"] = optional_json(r.measured_step_ns);
    j["step_rel_error"] = optional_json(r.step_rel_error);  // (predicted - measured) / measured
    j["predicted_peak_bytes"] = optional_json(r.predicted_peak_bytes);
    j["measured_peak_bytes"] = optional_json(r.measured_peak_bytes);
    j["peak_rel_error"] = optional_json(r.peak_rel_error);
    j["predicted_oom"] = r.predicted_oom;
    j["measured_oom"] = r.measured_oom;
    out["rows"].push_back(std::move(j));
  }
  nlohmann::ordered_json summary;
  summary["runs"] = report.summary.runs;
  summary["compared"] = report.summary.compared;
  summary["step_time"] = summary_json(report.summary.step);
  summary["peak_memory"] = summary_json(report.summary.peak);
  out["summary"] = std::move(summary);
  std::cout << out.dump(2) << "\n";
}

void run_compare(const CompareOptions& opts) {
  // existing: a mistyped --db is an error, never a new empty database.
  const experiments::ResultsDb db =
      experiments::ResultsDb::open(opts.db, experiments::ResultsDb::OpenMode::existing);
  const CompareReport report = experiments::compare_runs(load_runs(db, opts));
  if (opts.json) {
    print_json(report, opts);
  } else if (report.rows.empty()) {
    std::cout << fmt::format("no runs in {}\n", opts.db);
  } else {
    print_table(report);
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto opts = std::make_shared<CompareOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Predicted vs measured step time and peak memory from a results database: per run, the relative error "
      "(predicted - measured) / measured; summarised as the median and max of its absolute value over the "
      "runs "
      "with both a prediction and a measurement and no OOM");
  cmd->add_option("--db", opts->db, "Results database to read (it must exist; compare never creates one)")
      ->capture_default_str();
  cmd->add_flag("--json", opts->json,
                "Print rows and summary as JSON with exact integers instead of a table");
  cmd->add_option("--run", opts->run_ids, "Compare only this run id (repeatable)")
      ->check(CLI::PositiveNumber);
  cmd->callback([opts] { run_compare(*opts); });
}

}  // namespace mutwo::cli
