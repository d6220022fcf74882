// The results database's files: schema and WAL on creation, exact round trip of every field, and
// refusal of foreign, corrupt and other-version files (left untouched). Writes are in
// tests/test_results_db_writes.cpp.
#include "tests/support/test_results_db_fixtures.hpp"

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

TEST_CASE("a renamed, dropped or added column is refused at open, naming it, with the file left as it was") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  {
    ResultsDb db = ResultsDb::open(path);
    db.insert(full_run(), full_prediction(), full_measurement(), some_op_times());
  }
  raw(path).exec("ALTER TABLE measurements RENAME COLUMN peak_bytes TO peakb", "rename");
  const std::string renamed = read_bytes(path);
  for (ResultsDb::OpenMode mode : {ResultsDb::OpenMode::create, ResultsDb::OpenMode::existing}) {
    // Found before anything is written, not at the first statement that names the column.
    CHECK_THROWS_WITH_AS(ResultsDb::open(path, mode),
                         contains("results database '" + path.string() +
                                  "' has no column 'peak_bytes' in table measurements (schema version 2: "
                                  "run_id, step_time_ns, "),
                         ResultsDbError);
  }
  CHECK(read_bytes(path) == renamed);
  raw(path).exec("ALTER TABLE measurements RENAME COLUMN peakb TO peak_bytes", "rename back");
  raw(path).exec("ALTER TABLE runs DROP COLUMN notes", "drop");
  CHECK_THROWS_WITH_AS(ResultsDb::open(path), doctest::Contains("has no column 'notes' in table runs"),
                       ResultsDbError);
  raw(path).exec("ALTER TABLE runs ADD COLUMN notes TEXT NOT NULL DEFAULT ''", "add back");
  CHECK(ResultsDb::open(path).runs().size() == 1);
  raw(path).exec("ALTER TABLE op_times ADD COLUMN extra INTEGER NOT NULL DEFAULT 0", "add");
  CHECK_THROWS_WITH_AS(
      ResultsDb::open(path),
      doctest::Contains("has a column 'extra' in table op_times that schema version 2 does not have"),
      ResultsDbError);
}

TEST_CASE("a cell of the wrong type or outside its column's range is an error naming it, never a number") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  const std::string db_name = "results database '" + path.string() + "': ";
  {
    ResultsDb db = ResultsDb::open(path);
    db.insert(full_run(), full_prediction(), full_measurement(), some_op_times(),
              experiment_row_of("sweep", "mutwo", {{"step_time_ns", 1.0}}));
  }
  // Each damage as another program could write it (CHECK constraints off), the message it gives, and
  // the SQL that mends it again.
  struct Damage {
    std::string set, message, undo;
  };
  const std::vector<Damage> damages = {
      {"UPDATE measurements SET step_time_ns = 1.5",
       "table measurements, run 1, column step_time_ns = 1.5: not an integer (a REAL value)",
       "UPDATE measurements SET step_time_ns = 130000000"},
      {"UPDATE measurements SET step_time_ns = 'abc'",
       "table measurements, run 1, column step_time_ns = 'abc': not an integer (a TEXT value)",
       "UPDATE measurements SET step_time_ns = 130000000"},
      {"UPDATE measurements SET step_time_ns = -100",
       "table measurements, run 1, column step_time_ns = -100: "
       "must be >= 0",
       "UPDATE measurements SET step_time_ns = 130000000"},
      {"UPDATE measurements SET oom = 2", "table measurements, run 1, column oom = 2: must be 0 or 1",
       "UPDATE measurements SET oom = 0"},
      {"UPDATE measurements SET iterations = 4294967296",
       "table measurements, run 1, column iterations = 4294967296: must be between 0 and 2147483647",
       "UPDATE measurements SET iterations = 3"},
      {"UPDATE predictions SET samples_per_step = 2.5",
       "table predictions, run 1, column samples_per_step = 2.5: not an integer (a REAL value)",
       "UPDATE predictions SET samples_per_step = 64"},
      {"UPDATE runs SET kind = 'zzz'",
       "table runs, run 1, column kind = 'zzz': must be one of run, simulate, profile",
       "UPDATE runs SET kind = 'run'"},
      {"UPDATE runs SET model = x'00ff'", "table runs, run 1, column model = a BLOB of 2 bytes: not text",
       "UPDATE runs SET model = 'bert-base'"},
      {"UPDATE runs SET memory_cap_fraction = 2.5",
       "table runs, run 1, column memory_cap_fraction = 2.5: must be between 0 and 1",
       "UPDATE runs SET memory_cap_fraction = 0.5"},
      {"UPDATE op_times SET width = 0 WHERE op_id = 7",
       "table op_times, run 1, op 7, column width = 0: must be "
       "between 1 and 2147483647",
       "UPDATE op_times SET width = 2 WHERE op_id = 7"},
      {"UPDATE experiment_rows SET feasible = 7",
       "table experiment_rows, run 1, column feasible = 7: must be 0 "
       "or 1",
       "UPDATE experiment_rows SET feasible = 1"},
      {"UPDATE experiment_metrics SET value = 'fast'",
       "table experiment_metrics, run 1, metric 'step_time_ns', "
       "column value = 'fast': not a number (a TEXT value)",
       "UPDATE experiment_metrics SET value = 1.0"},
  };
  const sqlite::Connection c = raw(path);
  c.exec("PRAGMA ignore_check_constraints = ON", "checks off");
  for (const Damage& d : damages) {
    CAPTURE(d.set);
    c.exec(d.set, "damage");
    const ResultsDb db = ResultsDb::open(path, ResultsDb::OpenMode::existing);  // opening reads no row
    CHECK_THROWS_WITH_AS(db.check_values(), contains(db_name + d.message), ResultsDbError);
    // Every reader of that row reads it the same way.
    if (d.set.find("op_times") != std::string::npos) {
      CHECK_THROWS_WITH_AS(db.op_times(1), contains(d.message), ResultsDbError);
    } else if (d.set.find("experiment") != std::string::npos) {
      CHECK_THROWS_WITH_AS(db.experiment_row(1), contains(d.message), ResultsDbError);
      CHECK_THROWS_WITH_AS(db.experiment_rows("sweep"), contains(d.message), ResultsDbError);
    } else {
      CHECK_THROWS_WITH_AS(db.runs(), contains(d.message), ResultsDbError);
      CHECK_THROWS_WITH_AS(db.run(1), contains(d.message), ResultsDbError);
    }
    c.exec(d.undo, "mend");
    CHECK_NOTHROW(db.check_values());
  }
  const ResultsDb db = ResultsDb::open(path, ResultsDb::OpenMode::existing);
  CHECK(*db.run(1)->measurement == full_measurement());
  c.exec("UPDATE schema_version SET version = 2.0001", "version");
  CHECK_THROWS_WITH_AS(ResultsDb::open(path),
                       doctest::Contains("has schema version '2.0001', not an integer"), ResultsDbError);
}
