// ResultsDb's experiment tables (schema version 2): the specs the runner ran and each run's place
// in an experiment with its named figures.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "experiments/results_cells.hpp"
#include "experiments/results_db.hpp"

namespace mutwo::experiments {
namespace {

using sqlite::Statement;

std::string figures_json(const std::vector<std::string>& figures) {
  return nlohmann::json(figures).dump();
}

std::vector<std::string> figures_from_json(const sqlite::Connection& c, const std::string& name,
                                           const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::vector<std::string> out;
  const bool ok =
      j.is_array() && std::all_of(j.begin(), j.end(), [](const auto& v) { return v.is_string(); });
  if (!ok) {
    throw ResultsDbError(fmt::format(
        "results database '{}': experiment '{}': column figures is not a JSON array of strings: '{}'",
        c.path().string(), name, text));
  }
  for (const nlohmann::json& v : j) out.push_back(v.get<std::string>());
  return out;
}

ExperimentRecord read_experiment(const sqlite::Connection& c, const Statement& s) {
  ExperimentRecord e;
  e.name = CellReader(c, s, "experiments", "a row").text(0);
  const CellReader cell(c, s, "experiments", fmt::format("experiment '{}'", e.name));
  e.kind = cell.text(1);
  e.title = cell.text(2);
  e.figures = figures_from_json(c, e.name, cell.text(3));
  e.spec_hash = cell.text(4);
  e.spec_toml = cell.text(5);
  e.updated_at = cell.text(6);
  return e;
}

// experiment_rows: run_id, experiment, series, feasible, config.
ExperimentRowRecord read_experiment_row(const sqlite::Connection& c, const Statement& s) {
  const CellReader cell(c, s, "experiment_rows", fmt::format("run {}", s.int64(0)));
  ExperimentRowRecord row;
  row.experiment = cell.text(1);
  row.series = cell.text(2);
  row.feasible = cell.flag(3);
  row.config_json = cell.text(4);
  return row;
}

// experiment_metrics: run_id, name, value.
Metric read_metric(const sqlite::Connection& c, const Statement& s) {
  Metric m;
  m.name = CellReader(c, s, "experiment_metrics", fmt::format("run {}", s.int64(0))).text(1);
  m.value =
      CellReader(c, s, "experiment_metrics", fmt::format("run {}, metric '{}'", s.int64(0), m.name)).real(2);
  return m;
}

constexpr std::string_view kSelectExperimentRows =
    "SELECT run_id, experiment, series, feasible, config FROM experiment_rows";
constexpr std::string_view kSelectMetrics = "SELECT run_id, name, value FROM experiment_metrics";

constexpr std::string_view kSelectExperiments =
    "SELECT name, kind, title, figures, spec_hash, spec_toml, updated_at FROM experiments";

// The latest run of each configuration of experiment ?1.
// The latest by when it ran (created_at), then by id: a merged database's older rows (another
// mutwo's, inserted after the current ones) do not replace the rows run since.
constexpr std::string_view kLatestRowsOfExperiment = R"sql(
WHERE r.id IN (
  SELECT id FROM (
    SELECT e.run_id AS id, ROW_NUMBER() OVER (PARTITION BY rr.config_hash
                                              ORDER BY rr.created_at DESC, e.run_id DESC) AS k
    FROM experiment_rows AS e JOIN runs AS rr ON rr.id = e.run_id WHERE e.experiment = ?1)
  WHERE k = 1)
)sql";

}  // namespace

void ResultsDb::insert_experiment_row(int64_t run_id, const ExperimentRowRecord& row) {
  connection_
      .prepare(
          "INSERT INTO experiment_rows (run_id, experiment, series, feasible, config) VALUES (?, ?, ?, ?, ?)",
          "cannot insert into experiment_rows")
      .bind_all(run_id, row.experiment, row.series, row.feasible, row.config_json)
      .run();
  std::vector<Metric> metrics = row.metrics;
  std::sort(metrics.begin(), metrics.end(), [](const Metric& a, const Metric& b) { return a.name < b.name; });
  Statement s = connection_.prepare("INSERT INTO experiment_metrics (run_id, name, value) VALUES (?, ?, ?)",
                                    "cannot insert into experiment_metrics");
  for (const Metric& m : metrics) {
    // SQLite stores NaN as NULL; a figure that is not a number is a bug upstream, not a value.
    if (!std::isfinite(m.value)) {
      throw ResultsDbError(
          fmt::format("results database '{}': experiment '{}': metric '{}' is {}, not a finite number",
                      connection_.path().string(), row.experiment, m.name, m.value));
    }
    s.bind_all(run_id, m.name, m.value).run();
    s.reset();
  }
}

void ResultsDb::put_experiment(const ExperimentRecord& e) {
  sqlite::Transaction transaction(connection_);
  connection_
      .prepare(R"sql(
INSERT OR REPLACE INTO experiments (name, kind, title, figures, spec_hash, spec_toml, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, COALESCE(NULLIF(?7, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))
)sql",
               "cannot write experiments")
      .bind_all(e.name, e.kind, e.title, figures_json(e.figures), e.spec_hash, e.spec_toml, e.updated_at)
      .run();
  transaction.commit();
}

std::vector<ExperimentRecord> ResultsDb::experiments() const {
  std::vector<ExperimentRecord> out;
  if (schema_version_ < 2) return out;
  Statement s =
      connection_.prepare(fmt::format("{} ORDER BY name", kSelectExperiments), "cannot read experiments");
  while (s.step()) out.push_back(read_experiment(connection_, s));
  return out;
}

std::optional<ExperimentRecord> ResultsDb::experiment(std::string_view name) const {
  if (schema_version_ < 2) return std::nullopt;
  Statement s =
      connection_.prepare(fmt::format("{} WHERE name = ?1", kSelectExperiments), "cannot read experiments");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return read_experiment(connection_, s);
}

std::optional<ExperimentRowRecord> ResultsDb::experiment_row(int64_t run_id) const {
  if (schema_version_ < 2) return std::nullopt;
  Statement s = connection_.prepare(fmt::format("{} WHERE run_id = ?1", kSelectExperimentRows),
                                    "cannot read experiment_rows");
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  ExperimentRowRecord row = read_experiment_row(connection_, s);
  Statement m = connection_.prepare(fmt::format("{} WHERE run_id = ?1 ORDER BY name", kSelectMetrics),
                                    "cannot read experiment_metrics");
  m.bind(1, run_id);
  while (m.step()) row.metrics.push_back(read_metric(connection_, m));
  return row;
}

void ResultsDb::check_experiment_values() const {
  if (schema_version_ < 2) return;
  experiments();
  Statement rows = connection_.prepare(kSelectExperimentRows, "cannot read experiment_rows");
  while (rows.step()) read_experiment_row(connection_, rows);
  Statement metrics = connection_.prepare(kSelectMetrics, "cannot read experiment_metrics");
  while (metrics.step()) read_metric(connection_, metrics);
}

std::vector<StoredExperimentRow> ResultsDb::experiment_rows(std::string_view experiment) const {
  std::vector<StoredExperimentRow> out;
  if (schema_version_ < 2) return out;
  for (StoredRun& run : select_runs(kLatestRowsOfExperiment, std::nullopt, experiment)) {
    std::optional<ExperimentRowRecord> row = experiment_row(run.run.id);
    if (!row) {  // the join found it, the lookup by id does not: a corrupt file (found by fuzz_results_db)
      throw ResultsDbError(fmt::format("results database '{}': run {} is listed in experiment '{}' but its "
                                       "experiment_rows row cannot be read (corrupt database)",
                                       connection_.path().string(), run.run.id, experiment));
    }
    out.push_back({std::move(run), std::move(*row)});
  }
  return out;
}

}  // namespace mutwo::experiments
