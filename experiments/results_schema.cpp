#include "experiments/results_schema.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/results_db.hpp"

namespace mutwo::experiments {
namespace {

// Version 1. Sizes and times are INTEGER bytes and nanoseconds; text that does not apply is ''.
// runs.config_hash + mutwo_version key sweeps that skip stored configurations (and shard merges);
// runs.id is local to one file, so a merge re-numbers runs and keeps the hashes.
constexpr std::string_view kSchemaV1Sql = R"sql(
CREATE TABLE schema_version (
  version INTEGER NOT NULL
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('run', 'simulate', 'profile')),
  created_at TEXT NOT NULL,
  model TEXT NOT NULL,
  models INTEGER NOT NULL CHECK (models >= 0),
  partition TEXT NOT NULL,
  policy TEXT NOT NULL,
  batch_size INTEGER NOT NULL CHECK (batch_size >= 0),
  seq_len INTEGER NOT NULL CHECK (seq_len >= 0),
  image_size INTEGER NOT NULL CHECK (image_size >= 0),
  dtype TEXT NOT NULL,
  optimizer TEXT NOT NULL,
  device TEXT NOT NULL,
  gpu TEXT NOT NULL,
  memory_limit_bytes INTEGER NOT NULL CHECK (memory_limit_bytes >= 0),
  memory_cap_fraction REAL NOT NULL CHECK (memory_cap_fraction >= 0 AND memory_cap_fraction <= 1),
  cost_source TEXT NOT NULL,
  mutwo_version TEXT NOT NULL,
  git_revision TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  schedule_hash TEXT NOT NULL,
  notes TEXT NOT NULL
);
CREATE INDEX runs_by_config ON runs (config_hash, mutwo_version);
CREATE TABLE predictions (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  step_time_ns INTEGER NOT NULL CHECK (step_time_ns >= 0),
  peak_bytes INTEGER NOT NULL CHECK (peak_bytes >= 0),
  resident_bytes INTEGER NOT NULL CHECK (resident_bytes >= 0),
  compute_stall_ns INTEGER NOT NULL CHECK (compute_stall_ns >= 0),
  recompute_ns INTEGER NOT NULL CHECK (recompute_ns >= 0),
  bytes_swapped_out INTEGER NOT NULL CHECK (bytes_swapped_out >= 0),
  bytes_swapped_in INTEGER NOT NULL CHECK (bytes_swapped_in >= 0),
  memory_limit_bytes INTEGER NOT NULL CHECK (memory_limit_bytes >= 0),
  samples_per_step INTEGER NOT NULL CHECK (samples_per_step >= 0),
  oom INTEGER NOT NULL CHECK (oom IN (0, 1)),
  oom_message TEXT NOT NULL
);
CREATE TABLE measurements (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  step_time_ns INTEGER NOT NULL CHECK (step_time_ns >= 0),
  step_time_min_ns INTEGER NOT NULL CHECK (step_time_min_ns >= 0),
  step_time_max_ns INTEGER NOT NULL CHECK (step_time_max_ns >= 0),
  iterations INTEGER NOT NULL CHECK (iterations >= 0),
  warmup_iterations INTEGER NOT NULL CHECK (warmup_iterations >= 0),
  step_times_ns TEXT NOT NULL,
  peak_bytes INTEGER NOT NULL CHECK (peak_bytes >= 0),
  peak_source TEXT NOT NULL,
  oom INTEGER NOT NULL CHECK (oom IN (0, 1)),
  oom_message TEXT NOT NULL,
  losses TEXT NOT NULL,
  samples_per_step INTEGER NOT NULL CHECK (samples_per_step >= 0)
);
CREATE TABLE op_times (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  op_id INTEGER NOT NULL CHECK (op_id >= 0),
  op_name TEXT NOT NULL,
  kind TEXT NOT NULL,
  phase TEXT NOT NULL,
  width INTEGER NOT NULL CHECK (width >= 1),
  measured_ns INTEGER NOT NULL CHECK (measured_ns >= 0),
  predicted_ns INTEGER NOT NULL CHECK (predicted_ns >= -1),
  PRIMARY KEY (run_id, op_id)
);
)sql";

// Version 2 adds the experiment runner's tables (experiments/runner.hpp): each spec it ran, and per
// run the experiment it belongs to, its legend entry (series), its configuration as canonical JSON
// (runs.config_hash hashes exactly this text) and its figures as named numbers (units in the names).
// Nothing of version 1 changes, so a version-1 file is upgraded by adding these tables.
constexpr std::string_view kSchemaV2Sql = R"sql(
CREATE TABLE experiments (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  title TEXT NOT NULL,
  figures TEXT NOT NULL,
  spec_hash TEXT NOT NULL,
  spec_toml TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE experiment_rows (
  run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  experiment TEXT NOT NULL,
  series TEXT NOT NULL,
  feasible INTEGER NOT NULL CHECK (feasible IN (0, 1)),
  config TEXT NOT NULL
);
CREATE INDEX experiment_rows_by_experiment ON experiment_rows (experiment);
CREATE TABLE experiment_metrics (
  run_id INTEGER NOT NULL REFERENCES experiment_rows (run_id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (run_id, name)
);
)sql";

std::string quoted(const sqlite::Connection& connection) {
  return fmt::format("'{}'", connection.path().string());
}

// The column names of a table, in order (PRAGMA table_info).
std::vector<std::string> column_names(const sqlite::Connection& connection, std::string_view table) {
  sqlite::Statement s = connection.prepare(fmt::format("SELECT name FROM pragma_table_info('{}')", table),
                                           "cannot list the columns");
  std::vector<std::string> names;
  while (s.step()) names.push_back(s.text(0));
  return names;
}

// The columns of each table of a schema version, as SQLite reads them from this file's own CREATE
// statements (an in-memory database made once per version), so the list is never written twice.
const std::map<std::string, std::vector<std::string>, std::less<>>& expected_columns(int version) {
  auto make = [](int v) {
    const sqlite::Connection memory =
        sqlite::Connection::open(":memory:", sqlite::Connection::Mode::read_write_create);
    memory.exec(v == 1 ? std::string(kSchemaV1Sql) : results_schema_sql(), "cannot create the schema");
    std::map<std::string, std::vector<std::string>, std::less<>> columns;
    for (std::string_view table : results_tables(v))
      columns[std::string(table)] = column_names(memory, table);
    return columns;
  };
  static const auto v1 = make(1);
  static const auto current = make(kResultsSchemaVersion);
  return version == 1 ? v1 : current;
}

}  // namespace

const std::vector<std::string_view>& results_tables(int version) {
  static const std::vector<std::string_view> v1 = {"schema_version", "runs", "predictions", "measurements",
                                                   "op_times"};
  static const std::vector<std::string_view> v2 = {
      "schema_version", "runs",        "predictions",     "measurements",
      "op_times",       "experiments", "experiment_rows", "experiment_metrics"};
  return version == 1 ? v1 : v2;
}

std::string results_schema_sql() {
  return std::string(kSchemaV1Sql) + std::string(kSchemaV2Sql);
}

std::vector<std::string> table_names(const sqlite::Connection& connection) {
  sqlite::Statement s = connection.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      "cannot list tables");
  std::vector<std::string> names;
  while (s.step()) names.push_back(s.text(0));
  return names;
}

void create_results_schema(const sqlite::Connection& connection) {
  sqlite::Transaction transaction(connection);
  if (!table_names(connection).empty()) return;  // another connection created it first
  connection.exec(results_schema_sql(), "cannot create the schema");
  connection.prepare("INSERT INTO schema_version (version) VALUES (?)", "cannot insert into schema_version")
      .bind_all(kResultsSchemaVersion)
      .run();
  transaction.commit();
}

void upgrade_results_schema(const sqlite::Connection& connection) {
  sqlite::Transaction transaction(connection);
  if (check_results_schema(connection) == kResultsSchemaVersion) return;  // another connection did it
  connection.exec(kSchemaV2Sql, "cannot upgrade the schema to version 2");
  connection.prepare("UPDATE schema_version SET version = ?", "cannot update schema_version")
      .bind_all(kResultsSchemaVersion)
      .run();
  transaction.commit();
}

int check_results_schema(const sqlite::Connection& connection) {
  const std::vector<std::string> names = table_names(connection);
  auto has = [&](std::string_view table) {
    return std::find(names.begin(), names.end(), table) != names.end();
  };
  if (!has("schema_version")) {
    throw ResultsDbError(fmt::format(
        "results database {} is not a mutwo results database (it has no table 'schema_version'{})",
        quoted(connection),
        names.empty() ? "; it has no tables at all"
                      : fmt::format("; its tables: {}", fmt::join(names, ", "))));
  }
  std::vector<int64_t> versions;
  sqlite::Statement s =
      connection.prepare("SELECT version FROM schema_version", "cannot read schema_version");
  while (s.step()) {
    if (s.type(0) != sqlite::Statement::Type::integer) {
      throw ResultsDbError(fmt::format("results database {} has schema version '{}', not an integer",
                                       quoted(connection), s.text(0)));
    }
    versions.push_back(s.int64(0));
  }
  if (versions.size() != 1) {
    throw ResultsDbError(fmt::format("results database {} has {} rows in schema_version, expected 1",
                                     quoted(connection), versions.size()));
  }
  if (versions[0] != kResultsSchemaVersion && versions[0] != kOldestReadableSchemaVersion) {
    throw ResultsDbError(
        fmt::format("results database {} has schema version {}; this mutwo reads versions {} and {}",
                    quoted(connection), versions[0], kOldestReadableSchemaVersion, kResultsSchemaVersion));
  }
  const int version = static_cast<int>(versions[0]);
  for (std::string_view table : results_tables(version)) {
    if (!has(table)) {
      throw ResultsDbError(fmt::format("results database {} has no table '{}' (schema version {} has {})",
                                       quoted(connection), table, version,
                                       fmt::join(results_tables(version), ", ")));
    }
  }
  // Every column each statement names must be there before anything is run or written: a renamed
  // or dropped column would otherwise surface only at the first read or insert that names it.
  for (const auto& [table, expected] : expected_columns(version)) {
    const std::vector<std::string> found = column_names(connection, table);
    for (const std::string& column : expected) {
      if (std::find(found.begin(), found.end(), column) == found.end()) {
        throw ResultsDbError(fmt::format(
            "results database {} has no column '{}' in table {} (schema version {}: {}; the file's: {})",
            quoted(connection), column, table, version, fmt::join(expected, ", "), fmt::join(found, ", ")));
      }
    }
    for (const std::string& column : found) {
      if (std::find(expected.begin(), expected.end(), column) == expected.end()) {
        throw ResultsDbError(
            fmt::format("results database {} has a column '{}' in table {} that schema version {} does not "
                        "have ({})",
                        quoted(connection), column, table, version, fmt::join(expected, ", ")));
      }
    }
  }
  return version;
}

}  // namespace mutwo::experiments
