// The results database's writes: all-or-nothing inserts, refused values, cascading deletes,
// concurrent writers, the configuration lookup sweeps use, version-1 files (read as they are,
// upgraded by writers), the experiment tables of version 2, and records made from a Prediction.
#include "tests/support/test_results_db_fixtures.hpp"

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

TEST_CASE("insert_once stores a sweep's row once, however many writers planned it as missing") {
  // Three `mutwo experiment`s (or threads) on one file each planned every row as missing and wrote it:
  // 27 runs for 9 configurations. The check now sits inside the write transaction.
  TempDir dir;
  const fs::path path = dir / "results.db";
  ResultsDb first = ResultsDb::open(path);
  ResultsDb second = ResultsDb::open(path);
  const ExperimentRowRecord row = experiment_row_of("e", "hfta", {{"step_time_ns", 5.0}});
  RunRecord run = run_of_config("c");
  CHECK(first.insert_once(run, std::nullopt, std::nullopt, row) == 1);
  CHECK_FALSE(second.insert_once(run, std::nullopt, std::nullopt, row).has_value());
  run.mutwo_version = "9.9.9";  // another mutwo's row of the configuration is its own
  CHECK(second.insert_once(run, std::nullopt, std::nullopt, row) == 2);
  const sqlite::Connection c = raw(path);
  CHECK(count_rows(c, "runs") == 2);
  CHECK(count_rows(c, "experiment_rows") == 2);
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

TEST_CASE("the latest row of a configuration is the one run last, not the one inserted last") {
  // An older database merged in (another mutwo's rows, run earlier) gets the higher ids: it replaced
  // the rows run since in the table and the figures.
  TempDir dir;
  ResultsDb db = ResultsDb::open(dir / "results.db");
  RunRecord now = run_of_config("h1");
  now.created_at = "2026-12-03T10:00:00Z";
  RunRecord earlier = now;
  earlier.created_at = "2026-11-01T10:00:00Z";
  earlier.mutwo_version = "0.1.0";
  const int64_t current = db.insert(now, std::nullopt, std::nullopt, {}, experiment_row_of("a", "now"));
  const int64_t merged =
      db.insert(earlier, std::nullopt, std::nullopt, {}, experiment_row_of("a", "earlier"));
  CHECK(merged > current);
  const std::vector<StoredExperimentRow> a = db.experiment_rows("a");
  REQUIRE(a.size() == 1);
  CHECK(a[0].run.run.id == current);
  CHECK(a[0].row.series == "now");
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
