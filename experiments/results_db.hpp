#pragma once
// The results database: one SQLite file (WAL, schema-versioned) holding what was run, the
// simulator's prediction, the executor's measurement and per-op times. `mutwo run` writes it;
// `mutwo compare` and the plotting scripts read it back.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "experiments/records.hpp"
#include "experiments/results_db_error.hpp"
#include "experiments/results_schema_version.hpp"
#include "experiments/sqlite.hpp"

namespace mutwo::experiments {

// How long a statement waits for another connection's write lock before failing: parallel writers
// (sweep shards on one file) queue instead of failing.
inline constexpr int64_t kResultsBusyTimeoutMs = 30'000;

// One open results database. Movable, not copyable. Every method throws ResultsDbError (naming the
// path and what is wrong) and never prints.
class ResultsDb {
 public:
  enum class OpenMode {
    create,    // create the file and its schema when absent (writers: run, simulate, experiment)
    existing,  // the file must exist and hold the schema; opened read-only (sqlite.hpp): nothing written
               // to it or left beside it (readers: compare, merge inputs)
  };

  // Opens path. create mode makes the file and schema when the file is absent or empty (tables
  // schema_version, runs, predictions, measurements, op_times, experiments, experiment_rows,
  // experiment_metrics), upgrades a version-1 file in place, and keeps the file in WAL mode.
  // Either mode sets foreign_keys=ON and the busy timeout, then checks the file: a SQLite database
  // holding schema version kResultsSchemaVersion (existing mode also reads version 1, as a file
  // with no experiments) and every table with its columns. A file that is not a database, is
  // corrupt, holds another version or lacks a table or a column is refused and left untouched.
  static ResultsDb open(const std::filesystem::path& path, OpenMode mode = OpenMode::create);

  ResultsDb(ResultsDb&&) noexcept;
  ResultsDb& operator=(ResultsDb&&) noexcept;
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;
  ~ResultsDb();

  // Writes the run and what comes with it in one transaction (BEGIN IMMEDIATE ... COMMIT; rolled
  // back on any failure, so an interrupted or refused insert leaves no row anywhere). run.id is
  // ignored; run.created_at is set to the current UTC time when empty. Returns the new run id.
  // Values the schema's CHECK constraints refuse (a negative time, an unknown kind, width < 1)
  // throw ResultsDbError naming the table.
  int64_t insert(const RunRecord& run, const std::optional<PredictionRecord>& prediction,
                 const std::optional<MeasurementRecord>& measurement,
                 const std::vector<OpTimeRecord>& op_times = {},
                 const std::optional<ExperimentRowRecord>& experiment_row = std::nullopt);

  // A sweep's row (run.config_hash and run.mutwo_version set), written unless a run of that
  // configuration and version is stored: checked inside the write transaction, so two sweeps writing
  // one file at once (two `mutwo experiment`s, or threads) store each configuration once, where each
  // had planned it as missing and both wrote it. nullopt: already stored, nothing written.
  std::optional<int64_t> insert_once(const RunRecord& run, const std::optional<PredictionRecord>& prediction,
                                     const std::optional<MeasurementRecord>& measurement,
                                     const ExperimentRowRecord& experiment_row);

  // Registers an experiment spec (table experiments), replacing the row of the same name.
  void put_experiment(const ExperimentRecord& experiment);
  std::vector<ExperimentRecord> experiments() const;  // ordered by name
  std::optional<ExperimentRecord> experiment(std::string_view name) const;
  // The rows of one experiment, one per configuration: where several runs share a config_hash
  // (re-runs by another mutwo version, merged shards), the latest (highest run id). Ordered by run
  // id. Empty for a version-1 file.
  std::vector<StoredExperimentRow> experiment_rows(std::string_view experiment) const;
  // The experiment row of one run; nullopt when the run belongs to none.
  std::optional<ExperimentRowRecord> experiment_row(int64_t run_id) const;

  std::vector<StoredRun> runs() const;                       // ordered by id
  std::optional<StoredRun> run(int64_t id) const;            // nullopt when no run has that id
  std::vector<OpTimeRecord> op_times(int64_t run_id) const;  // ordered by op id
  // Whether a run with this configuration hash is stored; with mutwo_version, only one written by
  // that version counts.
  bool has_config(std::string_view config_hash, std::string_view mutwo_version = {}) const;

  // Reads every row of every table through the same checked readers as runs(), op_times() and the
  // experiment readers, keeping nothing: throws ResultsDbError "results database 'D': table T, run R,
  // column C = V: ..." at the first cell whose type or range the schema does not allow (a REAL or
  // TEXT in an INTEGER column, a negative time, oom = 2, an unknown kind). A merge runs it on every
  // file before writing, so it never stops half way through a run or copies a bad cell.
  void check_values() const;

  const std::filesystem::path& path() const { return connection_.path(); }
  int schema_version() const { return schema_version_; }
  // The open connection, for queries this class does not offer (plots, tests). Do not change the
  // schema through it.
  const sqlite::Connection& connection() const { return connection_; }

 private:
  ResultsDb(sqlite::Connection connection, int schema_version);
  // Runs matching `where`, which may use ?1: bound to id or else to text.
  std::vector<StoredRun> select_runs(std::string_view where, std::optional<int64_t> id,
                                     std::optional<std::string_view> text = std::nullopt) const;
  // Inside insert's transaction (results_db_experiments.cpp).
  void insert_experiment_row(int64_t run_id, const ExperimentRowRecord& row);
  // insert's rows, inside a transaction the caller holds.
  int64_t write_run(const RunRecord& run, const std::optional<PredictionRecord>& prediction,
                    const std::optional<MeasurementRecord>& measurement,
                    const std::vector<OpTimeRecord>& op_times,
                    const std::optional<ExperimentRowRecord>& experiment_row);
  // check_values() of the experiment tables (results_db_experiments.cpp).
  void check_experiment_values() const;

  sqlite::Connection connection_;
  int schema_version_ = kResultsSchemaVersion;
};

}  // namespace mutwo::experiments
