#include "api/compare_json.hpp"

#include <optional>

#include <fmt/format.h>

#include "experiments/results_db.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"

namespace mutwo::api {
namespace {

nlohmann::ordered_json optional_json(const auto& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json summary_json(const experiments::ErrorSummary& s) {
  nlohmann::ordered_json j;
  j["count"] = s.count;
  j["median_abs_rel_error"] = s.count > 0 ? nlohmann::ordered_json(s.median_abs) : nullptr;
  j["max_abs_rel_error"] = s.count > 0 ? nlohmann::ordered_json(s.max_abs) : nullptr;
  return j;
}

// What the schema allows but a comparison cannot stand on: a measurement that ran (no OOM) took
// some time; a step time of 0 would read as status ok with no error.
void check_comparable(const experiments::StoredRun& run, const std::string& db_path) {
  const auto& m = run.measurement;
  if (m && !m->oom && m->step_time_ns <= 0) {
    throw experiments::ResultsDbError(
        fmt::format("results database '{}': table measurements, run {}, column step_time_ns = {}: a "
                    "measurement without OOM must have a positive step time",
                    db_path, run.run.id, m->step_time_ns));
  }
}

}  // namespace

experiments::CompareReport compare_database(const std::string& db_path, const std::vector<int64_t>& run_ids) {
  for (int64_t id : run_ids) {
    if (id <= 0) throw Error(fmt::format("run id {} is not a positive run id", id));
  }
  // A run given twice counted twice in the error summary's median and count.
  if (const auto twice = support::first_repeat(run_ids)) {
    throw Error(fmt::format("run id {} is given twice; give each run once", run_ids[twice->second]));
  }
  // existing: a mistyped path is an error, never a new empty database.
  const experiments::ResultsDb db =
      experiments::ResultsDb::open(db_path, experiments::ResultsDb::OpenMode::existing);
  std::vector<experiments::StoredRun> runs;
  if (run_ids.empty()) {
    for (experiments::StoredRun& run : db.runs()) {
      if (run.run.kind != "profile") runs.push_back(std::move(run));
    }
  } else {
    for (int64_t id : run_ids) {
      std::optional<experiments::StoredRun> run = db.run(id);
      if (!run) throw Error(fmt::format("no run {} in results database '{}'", id, db_path));
      runs.push_back(std::move(*run));
    }
  }
  for (const experiments::StoredRun& run : runs) check_comparable(run, db_path);
  return experiments::compare_runs(runs);
}

nlohmann::ordered_json compare_json(const experiments::CompareReport& report, const std::string& db_path) {
  nlohmann::ordered_json out;
  out["database"] = db_path;
  out["rows"] = nlohmann::ordered_json::array();
  for (const experiments::CompareRow& r : report.rows) {
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
  return out;
}

}  // namespace mutwo::api
