// The results database: schema and WAL on creation, exact round trip of every field, refusal of
// foreign, corrupt and other-version files (left untouched), all-or-nothing inserts, concurrent
// writers, and the configuration lookup sweeps will use.
#include "experiments/results_db.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

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

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / fmt::format("mutwo-test-results-db-{}-{}", ::getpid(), counter++);
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
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
  CHECK(tables ==
        std::vector<std::string>{"measurements", "op_times", "predictions", "runs", "schema_version"});
  CHECK(c.query_text("SELECT group_concat(version) FROM schema_version", "version") == "1");
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
    CHECK_THROWS_WITH_AS(
        ResultsDb::open(path, mode),
        contains("results database '" + path.string() + "' has schema version 7; this mutwo reads version 1"),
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
      doctest::Contains("has no table 'op_times' (schema version 1 has schema_version, runs, "
                        "predictions, measurements, op_times)"),
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
        MESSAGE(e.what());
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
  CHECK(mutwo_version() == "0.1.0");
  CHECK_FALSE(git_revision().empty());
  CHECK(std::regex_match(std::string(git_revision()), std::regex("unknown|[0-9a-f]{4,40}(\\+dirty)?")));
}
