// The results database: schema and WAL on creation, exact round trip of every field, refusal of
// foreign, corrupt and other-version files (left untouched), all-or-nothing inserts, concurrent
// writers, the configuration lookup sweeps will use, version-1 files (read as they are, upgraded
// by writers) and the experiment tables of version 2.
#include "experiments/results_db.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "experiments/build_info.hpp"
#include "experiments/results_schema.hpp"
#include "sim/prediction.hpp"

using namespace mutwo::experiments;
namespace fs = std::filesystem;

namespace {

// One scratch directory per test, removed afterwards.
struct TempDir : mutwo::test::TempDir {
  TempDir() : mutwo::test::TempDir("results-db") {}
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A second, raw connection to the file, for what ResultsDb does not offer (pragmas, counts, damage).
sqlite::Connection raw(const fs::path& path) {
  return sqlite::Connection::open(path, sqlite::Connection::Mode::read_write);
}

// doctest's matcher for a message built at run time (it keeps its own copy of the text).
doctest::Contains contains(const std::string& text) {
  return doctest::Contains(text.c_str());
}

int64_t count_rows(const sqlite::Connection& c, const std::string& table) {
  return std::stoll(c.query_text("SELECT count(*) FROM " + table, "count"));
}

RunRecord full_run() {
  RunRecord r;
  r.kind = "run";
  r.created_at = "2026-11-23T03:00:00Z";
  r.model = "bert-base";
  r.models = 4;
  r.partition = "2,2";
  r.policy = "capuchin";
  r.batch_size = 16;
  r.seq_len = 128;
  r.image_size = 224;
  r.dtype = "fp16";
  r.optimizer = "adamw";
  r.device = "cuda:0 NVIDIA H100 80GB HBM3";
  r.gpu = "h100-sxm-80gb";
  r.memory_limit_bytes = int64_t{40} << 30;
  r.memory_cap_fraction = 0.5;
  r.cost_source = "measured";
  r.mutwo_version = "0.1.0";
  r.git_revision = "c1a9490+dirty";
  r.config_hash = "9f86d081884c7d65";
  r.schedule_hash = "60303ae22b998861";
  r.notes = "quotes ' \" and a ; survive; ünïcode too";
  return r;
}

PredictionRecord full_prediction() {
  PredictionRecord p;
  p.step_time_ns = 123'456'789;
  p.peak_bytes = std::numeric_limits<int64_t>::max();  // the full int64 range is exact
  p.resident_bytes = 7'046'811'392;
  p.compute_stall_ns = 1'500'000;
  p.recompute_ns = 2'500'000;
  p.bytes_swapped_out = 1'073'741'824;
  p.bytes_swapped_in = 1'073'741'825;
  p.memory_limit_bytes = int64_t{40} << 30;
  p.samples_per_step = 64;
  p.oom = true;
  p.oom_message = "out of memory at instruction 17";
  return p;
}

MeasurementRecord full_measurement() {
  MeasurementRecord m;
  m.step_time_ns = 130'000'000;
  m.step_time_min_ns = 120'000'001;
  m.step_time_max_ns = 140'000'002;
  m.iterations = 3;
  m.warmup_iterations = 2;
  m.step_times_ns = {140'000'002, 120'000'001, 130'000'000};
  m.peak_bytes = 41'000'000'000;
  m.peak_source = "cuda_allocator";
  m.oom = false;
  m.oom_message = "";
  m.losses = {2.302585092994046, 1.0 / 3.0, 1e-300, -0.0};
  m.samples_per_step = 64;
  return m;
}

std::vector<OpTimeRecord> some_op_times() {
  return {{0, "embeddings", "embedding", "forward", 4, 1'000, 900},
          {1, "s0/fc1", "linear", "forward", 2, 2'000, -1},
          {7, "s1/fc1_backward", "linear_backward", "backward", 2, 0, 0}};
}

// The version-1 layout as mutwo 0.1.0 created it (results_schema.cpp's kSchemaV1Sql, copied so the
// test keeps describing the old files even if that constant changes).
constexpr const char* kSchemaV1Sql = R"sql(
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

// Writes a version-1 file by hand (rollback journal, as SQLite starts): the schema, version 1 and
// full_run() as run 1.
void write_v1_file(const fs::path& path) {
  const sqlite::Connection c = sqlite::Connection::open(path, sqlite::Connection::Mode::read_write_create);
  c.exec(kSchemaV1Sql, "create v1");
  c.exec("INSERT INTO schema_version (version) VALUES (1)", "version 1");
  const RunRecord r = full_run();
  c.prepare(
       "INSERT INTO runs (kind, created_at, model, models, partition, policy, batch_size, seq_len, "
       "image_size, "
       "dtype, optimizer, device, gpu, memory_limit_bytes, memory_cap_fraction, cost_source, mutwo_version, "
       "git_revision, config_hash, schedule_hash, notes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
       "?11, "
       "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)",
       "insert run")
      .bind_all(r.kind, r.created_at, r.model, r.models, r.partition, r.policy, r.batch_size, r.seq_len,
                r.image_size, r.dtype, r.optimizer, r.device, r.gpu, r.memory_limit_bytes,
                r.memory_cap_fraction, r.cost_source, r.mutwo_version, r.git_revision, r.config_hash,
                r.schedule_hash, r.notes)
      .run();
}

// A run of configuration config_hash (the rest as full_run()).
RunRecord run_of_config(const std::string& config_hash) {
  RunRecord r = full_run();
  r.kind = "simulate";
  r.config_hash = config_hash;
  return r;
}

ExperimentRowRecord experiment_row_of(const std::string& experiment, const std::string& series,
                                      std::vector<Metric> metrics = {}) {
  ExperimentRowRecord row;
  row.experiment = experiment;
  row.series = series;
  row.feasible = true;
  row.config_json = R"({"experiment":")" + experiment + R"(","strategy":")" + series + R"("})";
  row.metrics = std::move(metrics);
  return row;
}

ExperimentRecord experiment_record(const std::string& name, const std::string& title) {
  ExperimentRecord e;
  e.name = name;
  e.kind = "strategies";
  e.title = title;
  e.figures = {"step_time_vs_models", "breakdown"};
  e.spec_hash = "spec-" + name;
  e.spec_toml = "name = \"" + name + "\"\nkind = \"strategies\"  # a 'comment' ; with \"quotes\"\n";
  e.updated_at = "2026-11-23T03:00:00Z";
  return e;
}

}  // namespace

TEST_CASE("open creates the file with every table, one version row, the config index, in WAL mode") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb db = ResultsDb::open(path);
  CHECK(fs::exists(path));
  CHECK(db.path() == path);

  const sqlite::Connection c = raw(path);
  // WAL is a property of the file: a second connection sees it.
  CHECK(c.query_text("PRAGMA journal_mode", "journal mode") == "wal");
  CHECK(db.connection().query_text("PRAGMA foreign_keys", "foreign keys") == "1");
  const std::vector<std::string> tables = table_names(c);
  // Version 2: version 1's five tables and the three experiment tables, listed by name.
  CHECK(tables == std::vector<std::string>{"experiment_metrics", "experiment_rows", "experiments",
                                           "measurements", "op_times", "predictions", "runs",
                                           "schema_version"});
  CHECK(c.query_text("SELECT group_concat(version) FROM schema_version", "version") == "2");
  CHECK(db.schema_version() == 2);
  CHECK(c.query_text("SELECT sql FROM sqlite_master WHERE name = 'runs_by_config'", "index") ==
        "CREATE INDEX runs_by_config ON runs (config_hash, mutwo_version)");
  CHECK(db.runs().empty());
}

TEST_CASE("every field, vector and optional part round trips exactly") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  RunRecord run = full_run();
  const int64_t id = db.insert(run, full_prediction(), full_measurement(), some_op_times());
  CHECK(id == 1);
  // Ids come from the database; the one passed in is ignored.
  run.id = 99;
  const int64_t second = db.insert(run, std::nullopt, std::nullopt);
  CHECK(second == 2);

  const std::vector<StoredRun> runs = db.runs();
  REQUIRE(runs.size() == 2);
  RunRecord expected = full_run();
  expected.id = 1;
  CHECK(runs[0].run == expected);
  REQUIRE(runs[0].prediction);
  CHECK(*runs[0].prediction == full_prediction());
  REQUIRE(runs[0].measurement);
  CHECK(*runs[0].measurement == full_measurement());
  CHECK(std::signbit(runs[0].measurement->losses[3]));  // -0.0 stays negative zero
  CHECK(db.op_times(1) == some_op_times());

  expected.id = 2;
  CHECK(runs[1].run == expected);
  CHECK_FALSE(runs[1].prediction);
  CHECK_FALSE(runs[1].measurement);
  CHECK(db.op_times(2).empty());

  CHECK(db.run(1) == runs[0]);
  CHECK(db.run(2) == runs[1]);
  CHECK_FALSE(db.run(3));
  CHECK(db.op_times(3).empty());
}

TEST_CASE("a measurement without a prediction, and one with non-finite losses, round trip") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  MeasurementRecord m = full_measurement();
  m.oom = true;
  m.oom_message = "CUDA out of memory";
  m.step_times_ns.clear();
  m.losses = {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
              0.5};
  db.insert(full_run(), std::nullopt, m);
  const StoredRun stored = db.runs().at(0);
  CHECK_FALSE(stored.prediction);
  REQUIRE(stored.measurement);
  const MeasurementRecord& back = *stored.measurement;
  CHECK(back.oom);
  CHECK(back.oom_message == "CUDA out of memory");
  CHECK(back.step_times_ns.empty());
  REQUIRE(back.losses.size() == 4);
  CHECK(std::isnan(back.losses[0]));
  CHECK(back.losses[1] == std::numeric_limits<double>::infinity());
  CHECK(back.losses[2] == -std::numeric_limits<double>::infinity());
  CHECK(back.losses[3] == 0.5);
}

TEST_CASE("created_at is filled with the current UTC time when empty") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  RunRecord run = full_run();
  run.created_at.clear();
  db.insert(run, std::nullopt, std::nullopt);
  const std::string created = db.runs().at(0).run.created_at;
  CHECK(std::regex_match(created,
                         std::regex(R"(20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z)")));
}

TEST_CASE("reopening an existing file keeps its runs, in either open mode") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  {
    ResultsDb db = ResultsDb::open(path);
    db.insert(full_run(), full_prediction(), full_measurement(), some_op_times());
  }
  for (ResultsDb::OpenMode mode : {ResultsDb::OpenMode::create, ResultsDb::OpenMode::existing}) {
    ResultsDb db = ResultsDb::open(path, mode);
    const std::vector<StoredRun> runs = db.runs();
    REQUIRE(runs.size() == 1);
    CHECK(*runs[0].measurement == full_measurement());
    CHECK(db.op_times(runs[0].run.id) == some_op_times());
  }
  // The schema was not created twice.
  CHECK(count_rows(raw(path), "schema_version") == 1);
}

TEST_CASE("existing mode refuses a missing file and does not create it") {
  TempDir dir;
  const fs::path path = dir / "absent.db";
  CHECK_THROWS_WITH_AS(ResultsDb::open(path, ResultsDb::OpenMode::existing),
                       contains("results database '" + path.string() + "' does not exist"), ResultsDbError);
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("existing mode refuses an empty file without writing a schema into it") {
  TempDir dir;
  const fs::path path = dir / "empty.db";
  write_bytes(path, "");
  CHECK_THROWS_WITH_AS(ResultsDb::open(path, ResultsDb::OpenMode::existing),
                       doctest::Contains("is not a mutwo results database (it has no table 'schema_version'; "
                                         "it has no tables at all)"),
                       ResultsDbError);
  CHECK(fs::file_size(path) == 0);
  // create mode makes an empty file a results database (SQLite's own view of a 0-byte file).
  ResultsDb::open(path);
  CHECK(count_rows(raw(path), "schema_version") == 1);
}

TEST_CASE("a schema version this mutwo does not know is refused with both versions named") {
  TempDir dir;
  const fs::path path = dir / "future.db";
  ResultsDb::open(path);
  raw(path).exec("UPDATE schema_version SET version = 7", "set version");
  for (ResultsDb::OpenMode mode : {ResultsDb::OpenMode::create, ResultsDb::OpenMode::existing}) {
    CHECK_THROWS_WITH_AS(ResultsDb::open(path, mode),
                         contains("results database '" + path.string() +
                                  "' has schema version 7; this mutwo reads versions 1 and 2"),
                         ResultsDbError);
  }
  raw(path).exec("INSERT INTO schema_version (version) VALUES (1)", "second row");
  CHECK_THROWS_WITH_AS(ResultsDb::open(path), doctest::Contains("has 2 rows in schema_version, expected 1"),
                       ResultsDbError);
}

TEST_CASE("a missing table is refused, naming it") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb::open(path);
  raw(path).exec("DROP TABLE op_times", "drop");
  CHECK_THROWS_WITH_AS(
      ResultsDb::open(path),
      doctest::Contains("has no table 'op_times' (schema version 2 has schema_version, runs, "
                        "predictions, measurements, op_times, experiments, experiment_rows, "
                        "experiment_metrics)"),
      ResultsDbError);
}

TEST_CASE("another program's SQLite file is refused and keeps its journal mode") {
  TempDir dir;
  const fs::path path = dir / "other.db";
  {
    const sqlite::Connection c = sqlite::Connection::open(path, sqlite::Connection::Mode::read_write_create);
    c.exec("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)", "create");
  }
  CHECK_THROWS_WITH_AS(
      ResultsDb::open(path),
      doctest::Contains("is not a mutwo results database (it has no table 'schema_version'; its "
                        "tables: photos)"),
      ResultsDbError);
  CHECK(raw(path).query_text("PRAGMA journal_mode", "journal mode") == "delete");
}

TEST_CASE("a file of garbage bytes is refused and left byte for byte as it was") {
  TempDir dir;
  const fs::path path = dir / "notes.db";
  std::string garbage = "these are my notes, not a database\n";
  for (int i = 0; i < 5000; ++i) garbage += static_cast<char>((i * 7919 + 13) % 251);
  write_bytes(path, garbage);
  for (ResultsDb::OpenMode mode : {ResultsDb::OpenMode::create, ResultsDb::OpenMode::existing}) {
    CHECK_THROWS_WITH_AS(ResultsDb::open(path, mode),
                         contains("results database '" + path.string() +
                                  "' is not a SQLite database (file is not a database)"),
                         ResultsDbError);
  }
  CHECK(read_bytes(path) == garbage);
  CHECK_FALSE(fs::exists(dir / "notes.db-wal"));
  CHECK_FALSE(fs::exists(dir / "notes.db-shm"));
  CHECK_FALSE(fs::exists(dir / "notes.db-journal"));
}

TEST_CASE("a truncated database is refused as corrupt") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  {
    ResultsDb db = ResultsDb::open(path);
    std::vector<OpTimeRecord> ops;
    for (int32_t i = 0; i < 500; ++i)
      ops.push_back({i, fmt::format("op{}", i), "linear", "forward", 1, i, i});
    for (int i = 0; i < 5; ++i) db.insert(full_run(), full_prediction(), full_measurement(), ops);
  }
  const std::string whole = read_bytes(path);
  REQUIRE(whole.size() > 8 * 4096);  // several pages, so the cut loses table pages
  write_bytes(path, whole.substr(0, 2 * 4096));
  CHECK_THROWS_WITH_AS(
      {
        ResultsDb db = ResultsDb::open(path);
        db.runs();
      },
      contains("results database '" + path.string() + "' is corrupt (database disk image is malformed"),
      ResultsDbError);
}

TEST_CASE("a database with overwritten table pages is refused as corrupt") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  {
    ResultsDb db = ResultsDb::open(path);
    for (int i = 0; i < 50; ++i)
      db.insert(full_run(), full_prediction(), full_measurement(), some_op_times());
  }
  std::string bytes = read_bytes(path);
  REQUIRE(bytes.size() > 4 * 4096);
  // Page 1 (the header and table list) stays; every later page becomes noise.
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 31) % 256);
  write_bytes(path, bytes);
  CHECK_THROWS_WITH_AS(
      {
        ResultsDb db = ResultsDb::open(path);
        for (const StoredRun& r : db.runs()) db.op_times(r.run.id);
      },
      doctest::Contains("is corrupt"), ResultsDbError);
}

TEST_CASE("an insert that fails midway leaves no row in any table") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb db = ResultsDb::open(path);
  std::vector<OpTimeRecord> ops = some_op_times();
  ops[2].measured_ns = -5;  // the third op time breaks CHECK (measured_ns >= 0), after the run,
                            // prediction, measurement and two op times are written
  CHECK_THROWS_WITH_AS(
      db.insert(full_run(), full_prediction(), full_measurement(), ops),
      doctest::Contains("cannot insert into op_times: CHECK constraint failed: measured_ns >= 0"),
      ResultsDbError);
  const sqlite::Connection c = raw(path);
  for (const char* table : {"runs", "predictions", "measurements", "op_times"}) {
    INFO(table);
    CHECK(count_rows(c, table) == 0);
  }
  // The handle is usable afterwards: no transaction was left open.
  CHECK(db.insert(full_run(), full_prediction(), std::nullopt) >= 1);
  CHECK(count_rows(c, "runs") == 1);
  CHECK(count_rows(c, "predictions") == 1);
}

TEST_CASE("values the schema refuses name their table") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  RunRecord run = full_run();
  run.kind = "benchmark";
  CHECK_THROWS_WITH_AS(db.insert(run, std::nullopt, std::nullopt),
                       doctest::Contains("cannot insert into runs: CHECK constraint failed: kind IN"),
                       ResultsDbError);
  PredictionRecord p = full_prediction();
  p.peak_bytes = -1;
  CHECK_THROWS_WITH_AS(
      db.insert(full_run(), p, std::nullopt),
      doctest::Contains("cannot insert into predictions: CHECK constraint failed: peak_bytes >= 0"),
      ResultsDbError);
  std::vector<OpTimeRecord> twice = {some_op_times()[0], some_op_times()[0]};
  CHECK_THROWS_WITH_AS(db.insert(full_run(), std::nullopt, std::nullopt, twice),
                       doctest::Contains("cannot insert into op_times: UNIQUE constraint failed"),
                       ResultsDbError);
  CHECK(db.runs().empty());
}

TEST_CASE("deleting a run deletes its prediction, measurement and op times (foreign keys cascade)") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb db = ResultsDb::open(path);
  const int64_t a = db.insert(full_run(), full_prediction(), full_measurement(), some_op_times());
  const int64_t b = db.insert(full_run(), full_prediction(), full_measurement(), some_op_times());
  db.connection().exec(fmt::format("DELETE FROM runs WHERE id = {}", a), "delete");
  const sqlite::Connection c = raw(path);
  CHECK(count_rows(c, "predictions") == 1);
  CHECK(count_rows(c, "measurements") == 1);
  CHECK(count_rows(c, "op_times") == 3);
  CHECK(db.runs().at(0).run.id == b);
}

TEST_CASE("two handles on one file inserting interleaved both land") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb a = ResultsDb::open(path);
  ResultsDb b = ResultsDb::open(path);
  for (int i = 0; i < 10; ++i) {
    RunRecord run = full_run();
    run.notes = fmt::format("a{}", i);
    a.insert(run, full_prediction(), std::nullopt);
    run.notes = fmt::format("b{}", i);
    b.insert(run, std::nullopt, full_measurement(), some_op_times());
  }
  // Each handle reads what the other wrote, in insertion order.
  for (const ResultsDb* db : {&a, &b}) {
    const std::vector<StoredRun> runs = db->runs();
    REQUIRE(runs.size() == 20);
    CHECK(runs[0].run.notes == "a0");
    CHECK(runs[1].run.notes == "b0");
    CHECK(runs[19].run.notes == "b9");
  }
}

TEST_CASE("parallel writers on one file wait for each other instead of failing (WAL + busy timeout)") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  constexpr int kThreads = 4;
  constexpr int kRunsEach = 25;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        // Every thread opens (and so possibly creates) the file itself: creation races too.
        ResultsDb db = ResultsDb::open(path);
        for (int i = 0; i < kRunsEach; ++i) {
          RunRecord run = full_run();
          run.config_hash = fmt::format("t{}-{}", t, i);
          db.insert(run, full_prediction(), full_measurement(), some_op_times());
        }
      } catch (const std::exception& e) {
        ++failures;
        MESSAGE(std::string(e.what()));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(failures == 0);
  ResultsDb db = ResultsDb::open(path, ResultsDb::OpenMode::existing);
  CHECK(db.runs().size() == kThreads * kRunsEach);
  CHECK(count_rows(db.connection(), "op_times") == kThreads * kRunsEach * 3);
  CHECK(count_rows(db.connection(), "schema_version") == 1);
}

TEST_CASE("an insert waits while another connection holds the write lock") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb db = ResultsDb::open(path);
  std::atomic<bool> locked{false};
  std::thread holder([&] {
    const sqlite::Connection c = raw(path);
    sqlite::Transaction hold(c);
    c.exec(
        "INSERT INTO runs (kind, created_at, model, models, partition, policy, batch_size, seq_len, "
        "image_size, dtype, optimizer, device, gpu, memory_limit_bytes, memory_cap_fraction, cost_source, "
        "mutwo_version, git_revision, config_hash, schedule_hash, notes) VALUES ('simulate', 'now', '', 0, "
        "'', "
        "'', 0, 0, 0, '', '', '', '', 0, 0, '', '', '', 'held', '', '')",
        "insert");
    locked = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    hold.commit();
  });
  while (!locked) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  const int64_t id = db.insert(full_run(), std::nullopt, std::nullopt);
  const auto waited = std::chrono::steady_clock::now() - start;
  holder.join();
  CHECK(id == 2);  // after the holder's row
  CHECK(waited >= std::chrono::milliseconds(100));
  CHECK(db.has_config("held"));
}

TEST_CASE("has_config finds a stored configuration hash, optionally of one mutwo version") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  CHECK_FALSE(db.has_config("9f86d081884c7d65"));
  db.insert(full_run(), std::nullopt, std::nullopt);  // config 9f86d081884c7d65, version 0.1.0
  CHECK(db.has_config("9f86d081884c7d65"));
  CHECK_FALSE(db.has_config("9f86d081884c7d66"));
  CHECK_FALSE(db.has_config(""));
  CHECK(db.has_config("9f86d081884c7d65", "0.1.0"));
  CHECK_FALSE(db.has_config("9f86d081884c7d65", "0.2.0"));
}

TEST_CASE("a version-1 file is read as one without experiments and left unchanged in existing mode") {
  TempDir dir;
  const fs::path path = dir / "v1.db";
  write_v1_file(path);
  const std::string before = read_bytes(path);
  {
    const ResultsDb db = ResultsDb::open(path, ResultsDb::OpenMode::existing);
    CHECK(db.schema_version() == 1);
    RunRecord expected = full_run();
    expected.id = 1;
    REQUIRE(db.runs().size() == 1);
    CHECK(db.runs()[0].run == expected);
    CHECK(db.experiments().empty());
    CHECK_FALSE(db.experiment("mutwo_throughput"));
    CHECK(db.experiment_rows("mutwo_throughput").empty());
    CHECK_FALSE(db.experiment_row(1));
    CHECK(db.has_config(full_run().config_hash));
  }
  // Readers write nothing: the same five tables, version 1, the same bytes, no WAL switch.
  const sqlite::Connection c = raw(path);
  CHECK(table_names(c) ==
        std::vector<std::string>{"measurements", "op_times", "predictions", "runs", "schema_version"});
  CHECK(c.query_text("SELECT group_concat(version) FROM schema_version", "version") == "1");
  CHECK(c.query_text("PRAGMA journal_mode", "journal mode") == "delete");
  CHECK(read_bytes(path) == before);
}

TEST_CASE("create mode upgrades a version-1 file to version 2 in place, keeping its runs") {
  TempDir dir;
  const fs::path path = dir / "v1.db";
  write_v1_file(path);
  RunRecord expected = full_run();
  expected.id = 1;
  {
    ResultsDb db = ResultsDb::open(path);
    CHECK(db.schema_version() == 2);
    REQUIRE(db.runs().size() == 1);
    CHECK(db.runs()[0].run == expected);
    // The upgraded file takes experiment rows: run 2 (after the old run 1).
    const ExperimentRowRecord row = experiment_row_of("e", "hfta", {{"step_time_ns", 5.0}});
    CHECK(db.insert(run_of_config("new"), std::nullopt, std::nullopt, {}, row) == 2);
    CHECK(db.experiment_row(2) == row);
  }
  const sqlite::Connection c = raw(path);
  CHECK(table_names(c) == std::vector<std::string>{"experiment_metrics", "experiment_rows", "experiments",
                                                   "measurements", "op_times", "predictions", "runs",
                                                   "schema_version"});
  CHECK(c.query_text("SELECT group_concat(version) FROM schema_version", "version") == "2");
  CHECK(c.query_text("PRAGMA journal_mode", "journal mode") == "wal");
  // Readers now see version 2, the old run unchanged.
  const ResultsDb db = ResultsDb::open(path, ResultsDb::OpenMode::existing);
  CHECK(db.schema_version() == 2);
  CHECK(db.run(1)->run == expected);
  CHECK_FALSE(db.experiment_row(1));
}

TEST_CASE("an experiment row round trips exactly, its metrics sorted by name") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  ExperimentRowRecord row = experiment_row_of(
      "mutwo_throughput", "mutwo",
      {{"step_time_ns", 123'456'789.0},
       {"peak_over_limit", 1.0 / 3.0},
       {"bytes_swapped", 9'007'199'254'740'992.0},  // 2^53: the largest exactly held integer range
       {"compute_stall_ns", 0.0},
       {"swap_overlap_ratio", 1e-300},
       {"runs", -2.5}});
  row.feasible = false;
  row.config_json = R"({"batch_size":16,"experiment":"mutwo_throughput","note":"quotes ' \" ; ünïcode"})";
  const int64_t id = db.insert(run_of_config("c1"), full_prediction(), std::nullopt, some_op_times(), row);
  const int64_t without = db.insert(run_of_config("c2"), full_prediction(), std::nullopt);

  ExperimentRowRecord expected = row;
  std::sort(expected.metrics.begin(), expected.metrics.end(),
            [](const Metric& a, const Metric& b) { return a.name < b.name; });
  const std::optional<ExperimentRowRecord> back = db.experiment_row(id);
  REQUIRE(back);
  CHECK(*back == expected);
  CHECK(back->metrics.front().name == "bytes_swapped");  // b < c < p < r < st < sw
  CHECK(back->metric("peak_over_limit") == 1.0 / 3.0);
  CHECK_FALSE(back->metric("samples_per_s"));
  // The run and what came with it are stored as without an experiment row.
  CHECK(*db.run(id)->prediction == full_prediction());
  CHECK(db.op_times(id) == some_op_times());

  CHECK_FALSE(db.experiment_row(without));
  CHECK_FALSE(db.experiment_row(99));  // no such run
}

TEST_CASE("experiment_rows keeps the latest run per configuration, ordered by id, of that experiment only") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  auto insert = [&](const std::string& config, const std::optional<ExperimentRowRecord>& row) {
    return db.insert(run_of_config(config), std::nullopt, std::nullopt, {}, row);
  };
  const int64_t a_h1_old = insert("h1", experiment_row_of("a", "old", {{"step_time_ns", 1}}));
  const int64_t a_h2 = insert("h2", experiment_row_of("a", "hfta", {{"step_time_ns", 2}}));
  const int64_t b_h3 = insert("h3", experiment_row_of("b", "hfta"));
  const int64_t a_h1_new = insert("h1", experiment_row_of("a", "new", {{"step_time_ns", 3}}));
  insert("h2", std::nullopt);  // the same configuration, in no experiment: not a row of a
  const int64_t b_h1 = insert("h1", experiment_row_of("b", "mutwo"));  // h1 in b too: b's own row

  // a: h1 twice (ids 1 and 4) -> 4; h2 once in a (id 2; id 5 has no row) -> 2; ordered 2, 4.
  const std::vector<StoredExperimentRow> a = db.experiment_rows("a");
  REQUIRE(a.size() == 2);
  CHECK(a[0].run.run.id == a_h2);
  CHECK(a[0].row.series == "hfta");
  CHECK(a[1].run.run.id == a_h1_new);
  CHECK(a[1].row.series == "new");
  CHECK(a[1].row.metric("step_time_ns") == 3.0);
  CHECK(a[1].run == *db.run(a_h1_new));
  CHECK(a[1].row == *db.experiment_row(a_h1_new));
  CHECK(a_h1_old < a_h1_new);

  // b: h3 (id 3) and h1 (id 6), untouched by a's rows of h1.
  const std::vector<StoredExperimentRow> b = db.experiment_rows("b");
  REQUIRE(b.size() == 2);
  CHECK(b[0].run.run.id == b_h3);
  CHECK(b[1].run.run.id == b_h1);
  CHECK(b[1].row.series == "mutwo");

  CHECK(db.experiment_rows("c").empty());
}

TEST_CASE("a non-finite metric is refused by name and nothing of the run is written") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb db = ResultsDb::open(path);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    double value;
    const char* shown;
  };
  for (const Case& bad : {Case{nan, "nan"}, Case{inf, "inf"}, Case{-inf, "-inf"}}) {
    INFO(bad.shown);
    // "a_fine" sorts first, so its metric row is written before the bad one is refused.
    const ExperimentRowRecord row =
        experiment_row_of("mutwo_throughput", "mutwo", {{"overhead", bad.value}, {"a_fine", 1.0}});
    CHECK_THROWS_WITH_AS(
        db.insert(run_of_config("c1"), full_prediction(), full_measurement(), some_op_times(), row),
        contains("results database '" + path.string() +
                 "': experiment 'mutwo_throughput': metric 'overhead' is " + bad.shown +
                 ", not a finite number"),
        ResultsDbError);
  }
  const sqlite::Connection c = raw(path);
  for (const char* table :
       {"runs", "predictions", "measurements", "op_times", "experiment_rows", "experiment_metrics"}) {
    INFO(table);
    CHECK(count_rows(c, table) == 0);
  }
  // No transaction was left open; the refused runs took no id, so the next one is run 1.
  CHECK(db.insert(run_of_config("c1"), std::nullopt, std::nullopt, {},
                  experiment_row_of("mutwo_throughput", "mutwo", {{"overhead", 1.5}})) == 1);
  CHECK(count_rows(c, "experiment_metrics") == 1);
}

TEST_CASE("put_experiment replaces the row of the same name; experiments are listed by name") {
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  CHECK(db.experiments().empty());
  const ExperimentRecord b_first = experiment_record("b_sweep", "first title");
  const ExperimentRecord a = experiment_record("a_sweep", "A");
  db.put_experiment(b_first);
  db.put_experiment(a);
  ExperimentRecord b_second = experiment_record("b_sweep", "second title");
  b_second.figures = {};  // an empty figure list round trips as empty, not as absent
  b_second.kind = "dtr";
  b_second.updated_at = "2026-12-01T00:00:00Z";
  db.put_experiment(b_second);

  CHECK(db.experiments() == std::vector<ExperimentRecord>{a, b_second});
  CHECK(db.experiment("a_sweep") == a);
  CHECK(db.experiment("b_sweep") == b_second);
  CHECK_FALSE(db.experiment("c_sweep"));
  CHECK(count_rows(db.connection(), "experiments") == 2);

  // updated_at is filled with the current UTC time when empty.
  ExperimentRecord c = experiment_record("c_sweep", "C");
  c.updated_at.clear();
  db.put_experiment(c);
  CHECK(std::regex_match(db.experiment("c_sweep")->updated_at,
                         std::regex(R"(20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z)")));
}

TEST_CASE("a simulator Prediction maps onto a PredictionRecord field by field") {
  mutwo::sim::Prediction p;
  p.step_time_ns = 11;
  p.peak_bytes = 22;
  p.resident_bytes = 33;
  p.compute_stall_ns = 44;
  p.recompute_ns = 55;
  p.bytes_swapped_out = 66;
  p.bytes_swapped_in = 77;
  p.memory_limit_bytes = 88;
  p.oom = true;
  p.oom_message = "oom";
  const PredictionRecord r = prediction_record(p, 99);
  CHECK(r == PredictionRecord{11, 22, 33, 44, 55, 66, 77, 88, 99, true, "oom"});
}

TEST_CASE("build info names the project version and a git revision") {
  CHECK(mutwo_version() == "0.2.0");  // project(mutwo VERSION 0.2.0) in CMakeLists.txt
  CHECK_FALSE(git_revision().empty());
  CHECK(std::regex_match(std::string(git_revision()), std::regex("unknown|[0-9a-f]{4,40}(\\+dirty)?")));
}
