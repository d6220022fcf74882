// `mutwo compare`: predicted against measured step time and peak memory from a results database,
// per run and summarised (median and max of the absolute relative errors).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/compare_json.hpp"
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

// --run's value, checked as text before CLI11 converts it (its PositiveNumber check would print the
// range of a double).
std::string check_run_id(const std::string& text) {
  const bool digits =
      !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || text.find_first_not_of('0') == std::string::npos) {
    return fmt::format("must be a positive run id (1, 2, ...), not '{}'", text);
  }
  return "";  // past 64 bits is refused for every integer flag (cli/main.cpp)
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

void run_compare(const CompareOptions& opts) {
  // existing: a mistyped --db is an error, never a new empty database.
  const CompareReport report = api::compare_database(opts.db, opts.run_ids);
  if (opts.json) {
    std::cout << api::compare_json(report, opts.db).dump(2) << "\n";
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
      ->check(CLI::Validator(check_run_id, "RUN_ID"));
  cmd->callback([opts] { run_compare(*opts); });
}

}  // namespace mutwo::cli
