#include "experiments/results_db.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "experiments/results_cells.hpp"
#include "experiments/results_schema.hpp"

namespace mutwo::experiments {
namespace {

using sqlite::Connection;
using sqlite::Statement;

// measurements.step_times_ns: a JSON array of integers.
std::string int_array_json(const std::vector<int64_t>& values) {
  return nlohmann::json(values).dump();
}

// measurements.losses: a JSON array of numbers; JSON has no NaN or infinity, so those are stored as
// the strings "nan", "inf" and "-inf" (a diverged model's loss is a result worth keeping).
std::string loss_array_json(const std::vector<double>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (double v : values) {
    if (std::isnan(v)) {
      out.push_back("nan");
    } else if (std::isinf(v)) {
      out.push_back(v > 0 ? "inf" : "-inf");
    } else {
      out.push_back(v);
    }
  }
  return out.dump();
}

[[noreturn]] void bad_column(const Connection& c, int64_t run_id, std::string_view column,
                             std::string_view want, std::string_view text) {
  throw ResultsDbError(fmt::format("results database '{}': measurements of run {}: column {} is not {}: '{}'",
                                   c.path().string(), run_id, column, want, text));
}

nlohmann::json parse_array(const Connection& c, int64_t run_id, std::string_view column,
                           const std::string& text, std::string_view want) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) bad_column(c, run_id, column, want, text);
  return j;
}

std::vector<int64_t> int_array(const Connection& c, int64_t run_id, const std::string& text) {
  constexpr std::string_view want = "a JSON array of integers";
  std::vector<int64_t> out;
  for (const nlohmann::json& v : parse_array(c, run_id, "step_times_ns", text, want)) {
    if (!v.is_number_integer()) bad_column(c, run_id, "step_times_ns", want, text);
    out.push_back(v.get<int64_t>());
  }
  return out;
}

std::vector<double> loss_array(const Connection& c, int64_t run_id, const std::string& text) {
  constexpr std::string_view want = "a JSON array of numbers, \"nan\", \"inf\" or \"-inf\"";
  std::vector<double> out;
  for (const nlohmann::json& v : parse_array(c, run_id, "losses", text, want)) {
    if (v.is_number()) {
      out.push_back(v.get<double>());
    } else if (v == "nan") {
      out.push_back(std::numeric_limits<double>::quiet_NaN());
    } else if (v == "inf" || v == "-inf") {
      out.push_back(v == "inf" ? std::numeric_limits<double>::infinity()
                               : -std::numeric_limits<double>::infinity());
    } else {
      bad_column(c, run_id, "losses", want, text);
    }
  }
  return out;
}

constexpr std::string_view kInsertRun = R"sql(
INSERT INTO runs (kind, created_at, model, models, partition, policy, batch_size, seq_len, image_size, dtype,
                  optimizer, device, gpu, memory_limit_bytes, memory_cap_fraction, cost_source, mutwo_version,
                  git_revision, config_hash, schedule_hash, notes)
VALUES (?1, COALESCE(NULLIF(?2, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
        ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)
)sql";

constexpr std::string_view kInsertPrediction = R"sql(
INSERT INTO predictions (run_id, step_time_ns, peak_bytes, resident_bytes, compute_stall_ns, recompute_ns,
                         bytes_swapped_out, bytes_swapped_in, memory_limit_bytes, samples_per_step, oom,
                         oom_message)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
)sql";

constexpr std::string_view kInsertMeasurement = R"sql(
INSERT INTO measurements (run_id, step_time_ns, step_time_min_ns, step_time_max_ns, iterations,
                          warmup_iterations, step_times_ns, peak_bytes, peak_source, oom, oom_message, losses,
                          samples_per_step)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
)sql";

constexpr std::string_view kInsertOpTime = R"sql(
INSERT INTO op_times (run_id, op_id, op_name, kind, phase, width, measured_ns, predicted_ns)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
)sql";

// Column order is the order read_op_time() reads them in.
constexpr std::string_view kSelectOpTimes =
    "SELECT run_id, op_id, op_name, kind, phase, width, measured_ns, predicted_ns FROM op_times";

// Column order is the order read_stored_run() reads them in.
constexpr std::string_view kSelectRuns = R"sql(
SELECT r.id, r.kind, r.created_at, r.model, r.models, r.partition, r.policy, r.batch_size, r.seq_len,
       r.image_size, r.dtype, r.optimizer, r.device, r.gpu, r.memory_limit_bytes, r.memory_cap_fraction,
       r.cost_source, r.mutwo_version, r.git_revision, r.config_hash, r.schedule_hash, r.notes,
       p.run_id, p.step_time_ns, p.peak_bytes, p.resident_bytes, p.compute_stall_ns, p.recompute_ns,
       p.bytes_swapped_out, p.bytes_swapped_in, p.memory_limit_bytes, p.samples_per_step, p.oom, p.oom_message,
       m.run_id, m.step_time_ns, m.step_time_min_ns, m.step_time_max_ns, m.iterations, m.warmup_iterations,
       m.step_times_ns, m.peak_bytes, m.peak_source, m.oom, m.oom_message, m.losses, m.samples_per_step
FROM runs AS r
LEFT JOIN predictions AS p ON p.run_id = r.id
LEFT JOIN measurements AS m ON m.run_id = r.id
)sql";

// Each cell is checked against its column's type and the schema's CHECK (results_cells.hpp), so a
// file written by another program with other values reads as an error naming the cell, never as a
// wrong number.
StoredRun read_stored_run(const Connection& connection, const Statement& s) {
  StoredRun out;
  int c = 0;
  RunRecord& r = out.run;
  r.id = s.int64(c++);  // INTEGER PRIMARY KEY: SQLite keeps nothing else there
  const std::string row = fmt::format("run {}", r.id);
  const CellReader run(connection, s, "runs", row);
  r.kind = run.one_of(c++, {"run", "simulate", "profile"});
  r.created_at = run.text(c++);
  r.model = run.text(c++);
  r.models = run.int32(c++, 0);
  r.partition = run.text(c++);
  r.policy = run.text(c++);
  r.batch_size = run.integer(c++, 0);
  r.seq_len = run.integer(c++, 0);
  r.image_size = run.integer(c++, 0);
  r.dtype = run.text(c++);
  r.optimizer = run.text(c++);
  r.device = run.text(c++);
  r.gpu = run.text(c++);
  r.memory_limit_bytes = run.integer(c++, 0);
  r.memory_cap_fraction = run.real(c++, 0.0, 1.0);
  r.cost_source = run.text(c++);
  r.mutwo_version = run.text(c++);
  r.git_revision = run.text(c++);
  r.config_hash = run.text(c++);
  r.schedule_hash = run.text(c++);
  r.notes = run.text(c++);

  if (!s.is_null(c++)) {
    const CellReader cell(connection, s, "predictions", row);
    PredictionRecord& p = out.prediction.emplace();
    p.step_time_ns = cell.integer(c++, 0);
    p.peak_bytes = cell.integer(c++, 0);
    p.resident_bytes = cell.integer(c++, 0);
    p.compute_stall_ns = cell.integer(c++, 0);
    p.recompute_ns = cell.integer(c++, 0);
    p.bytes_swapped_out = cell.integer(c++, 0);
    p.bytes_swapped_in = cell.integer(c++, 0);
    p.memory_limit_bytes = cell.integer(c++, 0);
    p.samples_per_step = cell.integer(c++, 0);
    p.oom = cell.flag(c++);
    p.oom_message = cell.text(c++);
  } else {
    c += 11;
  }

  if (!s.is_null(c++)) {
    const CellReader cell(connection, s, "measurements", row);
    MeasurementRecord& m = out.measurement.emplace();
    m.step_time_ns = cell.integer(c++, 0);
    m.step_time_min_ns = cell.integer(c++, 0);
    m.step_time_max_ns = cell.integer(c++, 0);
    m.iterations = cell.int32(c++, 0);
    m.warmup_iterations = cell.int32(c++, 0);
    m.step_times_ns = int_array(connection, r.id, cell.text(c++));
    m.peak_bytes = cell.integer(c++, 0);
    m.peak_source = cell.text(c++);
    m.oom = cell.flag(c++);
    m.oom_message = cell.text(c++);
    m.losses = loss_array(connection, r.id, cell.text(c++));
    m.samples_per_step = cell.integer(c++, 0);
  }
  return out;
}

OpTimeRecord read_op_time(const Connection& connection, const Statement& s) {
  // run_id, op_id, op_name, kind, phase, width, measured_ns, predicted_ns
  OpTimeRecord o;
  const int64_t run_id = s.int64(0);
  const CellReader cell(
      connection, s, "op_times",
      fmt::format("run {}, op {}", run_id,
                  s.type(1) == Statement::Type::integer ? std::to_string(s.int64(1)) : s.text(1)));
  cell.integer(0, 0);  // run_id: an integer (the foreign key to runs.id)
  o.op_id = cell.int32(1, 0);
  o.op_name = cell.text(2);
  o.kind = cell.text(3);
  o.phase = cell.text(4);
  o.width = cell.int32(5, 1);
  o.measured_ns = cell.integer(6, 0);
  o.predicted_ns = cell.integer(7, -1);
  return o;
}

}  // namespace

ResultsDb::ResultsDb(sqlite::Connection connection, int schema_version)
    : connection_(std::move(connection)), schema_version_(schema_version) {}
ResultsDb::ResultsDb(ResultsDb&&) noexcept = default;
ResultsDb& ResultsDb::operator=(ResultsDb&&) noexcept = default;
ResultsDb::~ResultsDb() = default;

ResultsDb ResultsDb::open(const std::filesystem::path& path, OpenMode mode) {
  // SQLite opens these as a private temporary database, which never switches to WAL: create mode
  // retried for the whole busy timeout (30 s) before failing, and nothing would be kept.
  if (path.empty() || path == ":memory:") {
    throw ResultsDbError(fmt::format("results database '{}': give the path of a file", path.string()));
  }
  Connection connection = Connection::open(
      path, mode == OpenMode::create ? Connection::Mode::read_write_create : Connection::Mode::read_only);
  connection.set_busy_timeout(std::chrono::milliseconds(kResultsBusyTimeoutMs));
  connection.exec("PRAGMA foreign_keys = ON", "cannot enable foreign keys");
  // Listing the tables is the first read: a file that is not a database or is corrupt fails here,
  // before anything is written to it.
  const bool empty = table_names(connection).empty();
  int version = 0;
  if (!empty) version = check_results_schema(connection);  // refuse a foreign file before changing it
  if (mode == OpenMode::create) {
    // WAL: readers (compare, plots) never block the writer, and a crash mid-write leaves the last
    // committed state. The mode is stored in the file, so readers get it too.
    // Switching needs the file to itself: while another connection is creating the schema the pragma
    // returns the old mode at once (SQLite does not wait for it), so it is retried within the busy
    // timeout.
    // The pragma may also fail at once as locked (SQLite does not call the busy handler for it):
    // retried the same way, the last failure reported once the timeout has passed.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(kResultsBusyTimeoutMs);
    auto switch_to_wal = [&] {
      try {
        return connection.query_text("PRAGMA journal_mode = WAL", "cannot switch to WAL");
      } catch (const ResultsDbBusyError&) {
        if (std::chrono::steady_clock::now() >= give_up) throw;
        return std::string();
      }
    };
    std::string journal = switch_to_wal();
    while (journal != "wal" && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      journal = switch_to_wal();
    }
    if (journal != "wal") {
      throw ResultsDbError(fmt::format("results database '{}' cannot use WAL mode (journal mode stays '{}')",
                                       path.string(), journal));
    }
    if (empty) create_results_schema(connection);
    if (version != 0 && version != kResultsSchemaVersion) upgrade_results_schema(connection);
  }
  if (empty || mode == OpenMode::create) version = check_results_schema(connection);
  return ResultsDb(std::move(connection), version);
}

int64_t ResultsDb::insert(const RunRecord& run, const std::optional<PredictionRecord>& prediction,
                          const std::optional<MeasurementRecord>& measurement,
                          const std::vector<OpTimeRecord>& op_times,
                          const std::optional<ExperimentRowRecord>& experiment_row) {
  sqlite::Transaction transaction(connection_);
  const int64_t id = write_run(run, prediction, measurement, op_times, experiment_row);
  transaction.commit();
  return id;
}

std::optional<int64_t> ResultsDb::insert_once(const RunRecord& run,
                                              const std::optional<PredictionRecord>& prediction,
                                              const std::optional<MeasurementRecord>& measurement,
                                              const ExperimentRowRecord& experiment_row) {
  sqlite::Transaction transaction(connection_);  // BEGIN IMMEDIATE: no writer between check and insert
  if (has_config(run.config_hash, run.mutwo_version)) return std::nullopt;  // rolled back
  const int64_t id = write_run(run, prediction, measurement, {}, experiment_row);
  transaction.commit();
  return id;
}

int64_t ResultsDb::write_run(const RunRecord& run, const std::optional<PredictionRecord>& prediction,
                             const std::optional<MeasurementRecord>& measurement,
                             const std::vector<OpTimeRecord>& op_times,
                             const std::optional<ExperimentRowRecord>& experiment_row) {
  const RunRecord& r = run;
  connection_.prepare(kInsertRun, "cannot insert into runs")
      .bind_all(r.kind, r.created_at, r.model, r.models, r.partition, r.policy, r.batch_size, r.seq_len,
                r.image_size, r.dtype, r.optimizer, r.device, r.gpu, r.memory_limit_bytes,
                r.memory_cap_fraction, r.cost_source, r.mutwo_version, r.git_revision, r.config_hash,
                r.schedule_hash, r.notes)
      .run();
  const int64_t id = connection_.last_insert_rowid();
  if (prediction) {
    const PredictionRecord& p = *prediction;
    connection_.prepare(kInsertPrediction, "cannot insert into predictions")
        .bind_all(id, p.step_time_ns, p.peak_bytes, p.resident_bytes, p.compute_stall_ns, p.recompute_ns,
                  p.bytes_swapped_out, p.bytes_swapped_in, p.memory_limit_bytes, p.samples_per_step, p.oom,
                  p.oom_message)
        .run();
  }
  if (measurement) {
    const MeasurementRecord& m = *measurement;
    connection_.prepare(kInsertMeasurement, "cannot insert into measurements")
        .bind_all(id, m.step_time_ns, m.step_time_min_ns, m.step_time_max_ns, m.iterations,
                  m.warmup_iterations, int_array_json(m.step_times_ns), m.peak_bytes, m.peak_source, m.oom,
                  m.oom_message, loss_array_json(m.losses), m.samples_per_step)
        .run();
  }
  if (!op_times.empty()) {
    Statement s = connection_.prepare(kInsertOpTime, "cannot insert into op_times");
    for (const OpTimeRecord& o : op_times) {
      s.bind_all(id, o.op_id, o.op_name, o.kind, o.phase, o.width, o.measured_ns, o.predicted_ns).run();
      s.reset();
    }
  }
  if (experiment_row) insert_experiment_row(id, *experiment_row);
  return id;
}

std::vector<StoredRun> ResultsDb::select_runs(std::string_view where, std::optional<int64_t> id,
                                              std::optional<std::string_view> text) const {
  Statement s =
      connection_.prepare(fmt::format("{} {} ORDER BY r.id", kSelectRuns, where), "cannot read runs");
  if (id) s.bind(1, *id);
  if (text) s.bind(1, *text);
  std::vector<StoredRun> out;
  while (s.step()) out.push_back(read_stored_run(connection_, s));
  return out;
}

std::vector<StoredRun> ResultsDb::runs() const {
  return select_runs("", std::nullopt);
}

std::optional<StoredRun> ResultsDb::run(int64_t id) const {
  std::vector<StoredRun> found = select_runs("WHERE r.id = ?1", id);
  if (found.empty()) return std::nullopt;
  return std::move(found.front());
}

std::vector<OpTimeRecord> ResultsDb::op_times(int64_t run_id) const {
  Statement s = connection_.prepare(fmt::format("{} WHERE run_id = ?1 ORDER BY op_id", kSelectOpTimes),
                                    "cannot read op_times");
  s.bind(1, run_id);
  std::vector<OpTimeRecord> out;
  while (s.step()) out.push_back(read_op_time(connection_, s));
  return out;
}

void ResultsDb::check_values() const {
  Statement runs = connection_.prepare(fmt::format("{} ORDER BY r.id", kSelectRuns), "cannot read runs");
  while (runs.step()) read_stored_run(connection_, runs);
  Statement ops = connection_.prepare(kSelectOpTimes, "cannot read op_times");
  while (ops.step()) read_op_time(connection_, ops);
  check_experiment_values();
}

bool ResultsDb::has_config(std::string_view config_hash, std::string_view mutwo_version) const {
  Statement s = connection_.prepare(
      "SELECT 1 FROM runs WHERE config_hash = ?1 AND (?2 = '' OR mutwo_version = ?2) LIMIT 1",
      "cannot read runs");
  s.bind_all(config_hash, mutwo_version);
  return s.step();
}

}  // namespace mutwo::experiments
