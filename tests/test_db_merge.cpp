// Merging results databases (sweep shards): the union of the runs with nothing duplicated, every part
// of a run copied exactly, merging again adds nothing, order does not change what is held, runs without
// a config hash dedupe by content, a file is never merged into itself, the newest experiment spec wins.
#include "experiments/db_merge.hpp"
#include "tests/support/temp_dir.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tests/support/result_records.hpp"

using namespace mutwo::experiments;
namespace fs = std::filesystem;

namespace {

using mutwo::test::kGiB;
using mutwo::test::kMs;
using mutwo::test::measured;
using mutwo::test::predicted;

// One scratch directory per test, removed afterwards.
struct TempDir : mutwo::test::TempDir {
  TempDir() : mutwo::test::TempDir("db-merge") {}
};

doctest::Contains contains(const std::string& text) {
  return doctest::Contains(text.c_str());
}

int64_t count_rows(const ResultsDb& db, const std::string& table) {
  return std::stoll(db.connection().query_text("SELECT count(*) FROM " + table, "count"));
}

// A simulate run of one configuration. created_at is in the past, so a merge that re-stamped it with
// the current time would show.
RunRecord run_of_config(const std::string& config_hash, const std::string& mutwo_version = "0.2.0") {
  RunRecord r;
  r.kind = "simulate";
  r.created_at = "2026-11-23T03:00:00Z";
  r.model = "resnet18";
  r.models = 2;
  r.partition = "1,1";
  r.policy = "capuchin";
  r.batch_size = 8;
  r.dtype = "fp32";
  r.optimizer = "adam";
  r.gpu = "h100-sxm-80gb";
  r.memory_limit_bytes = 8 * kGiB;
  r.memory_cap_fraction = 0.25;
  r.cost_source = "analytic";
  r.mutwo_version = mutwo_version;
  r.git_revision = "abc1234";
  r.config_hash = config_hash;
  r.notes = "config " + config_hash;
  return r;
}

ExperimentRowRecord row_of(const std::string& config_hash, double step_time_ns) {
  ExperimentRowRecord row;
  row.experiment = "sweep";
  row.series = "capuchin";
  row.feasible = true;
  row.config_json = R"({"experiment":"sweep","config":")" + config_hash + R"("})";
  row.metrics = {{"peak_bytes", 7.0 * kGiB}, {"step_time_ns", step_time_ns}, {"swap_overlap_ratio", 1.0 / 3}};
  return row;
}

std::vector<OpTimeRecord> op_times_of(int64_t base_ns) {
  return {{0, "conv1", "conv2d", "forward", 2, base_ns, base_ns + 1},
          {3, "conv1_backward", "conv2d_backward", "backward", 2, 2 * base_ns, -1}};
}

// Inserts one full run of config_hash: prediction, measurement, op times and experiment row.
int64_t insert_full(ResultsDb& db, const std::string& config_hash, int64_t step_ns) {
  return db.insert(run_of_config(config_hash), predicted(step_ns, 6 * kGiB),
                   measured(step_ns + kMs, 7 * kGiB), op_times_of(step_ns / 1000),
                   row_of(config_hash, static_cast<double>(step_ns)));
}

// Everything the database holds of one run, its id set aside.
struct FullRun {
  StoredRun stored;
  std::vector<OpTimeRecord> op_times;
  std::optional<ExperimentRowRecord> row;

  bool operator==(const FullRun&) const = default;
};

// Every run by its config hash (the hashes of these tests are unique within one database).
std::map<std::string, FullRun> by_config(const ResultsDb& db) {
  std::map<std::string, FullRun> out;
  for (StoredRun& s : db.runs()) {
    const int64_t id = s.run.id;
    s.run.id = 0;
    const std::string hash = s.run.config_hash;
    REQUIRE(out.count(hash) == 0);
    out[hash] = {std::move(s), db.op_times(id), db.experiment_row(id)};
  }
  return out;
}

std::set<std::pair<std::string, std::string>> config_keys(const ResultsDb& db) {
  std::set<std::pair<std::string, std::string>> keys;
  for (const StoredRun& s : db.runs()) keys.emplace(s.run.config_hash, s.run.mutwo_version);
  return keys;
}

// Shard a: a1, a2 and "shared"; shard b: b1 and "shared" (the same configuration and mutwo version,
// run on the other machine, so its figures differ: the merge keeps whichever came first).
struct Shards {
  TempDir dir;
  fs::path a_path = dir / "a.db";
  fs::path b_path = dir / "b.db";
  Shards() {
    ResultsDb a = ResultsDb::open(a_path);
    insert_full(a, "a1", 10 * kMs);
    insert_full(a, "shared", 20 * kMs);
    insert_full(a, "a2", 30 * kMs);
    ResultsDb b = ResultsDb::open(b_path);
    insert_full(b, "b1", 40 * kMs);
    insert_full(b, "shared", 50 * kMs);
  }
};

ExperimentRecord experiment(const std::string& name, const std::string& title,
                            const std::string& updated_at) {
  ExperimentRecord e;
  e.name = name;
  e.kind = "strategies";
  e.title = title;
  e.figures = {"step_time_vs_models", "breakdown"};
  e.spec_hash = "hash of " + title;
  e.spec_toml = "title = \"" + title + "\"\n";
  e.updated_at = updated_at;
  return e;
}

}  // namespace

TEST_CASE("two shards merge into their union: the shared configuration once, every part exact") {
  Shards shards;
  ResultsDb out = ResultsDb::open(shards.dir / "out.db");
  const ResultsDb a = ResultsDb::open(shards.a_path, ResultsDb::OpenMode::existing);
  const ResultsDb b = ResultsDb::open(shards.b_path, ResultsDb::OpenMode::existing);

  // a: 3 runs, all new. b: b1 new, "shared" already copied from a.
  const MergeCounts from_a = merge_results(out, a);
  CHECK(from_a.runs_added == 3);
  CHECK(from_a.runs_skipped == 0);
  const MergeCounts from_b = merge_results(out, b);
  CHECK(from_b.runs_added == 1);
  CHECK(from_b.runs_skipped == 1);

  // 3 + 2 runs, one configuration in both -> 4 runs, 4 x 2 op times, 4 x 3 metrics.
  CHECK(count_rows(out, "runs") == 4);
  CHECK(count_rows(out, "predictions") == 4);
  CHECK(count_rows(out, "measurements") == 4);
  CHECK(count_rows(out, "op_times") == 8);
  CHECK(count_rows(out, "experiment_rows") == 4);
  CHECK(count_rows(out, "experiment_metrics") == 12);

  // Every run round trips with its prediction, measurement, op times and experiment row; "shared"
  // is a's (merged first), not b's.
  const std::map<std::string, FullRun> merged = by_config(out);
  const std::map<std::string, FullRun> from_shard_a = by_config(a);
  const std::map<std::string, FullRun> from_shard_b = by_config(b);
  CHECK(merged.size() == 4);
  for (const char* hash : {"a1", "shared", "a2"}) {
    INFO(hash);
    CHECK(merged.at(hash) == from_shard_a.at(hash));
  }
  CHECK(merged.at("b1") == from_shard_b.at("b1"));
  CHECK(merged.at("shared").row->metric("step_time_ns") == 20.0 * kMs);
  // Runs are copied in the input's id order: a1, shared, a2, then b1.
  std::vector<std::string> order;
  for (const StoredRun& s : out.runs()) order.push_back(s.run.config_hash);
  CHECK(order == std::vector<std::string>{"a1", "shared", "a2", "b1"});
  CHECK(out.experiment_rows("sweep").size() == 4);
}

TEST_CASE("merging the same shards again adds nothing") {
  Shards shards;
  ResultsDb out = ResultsDb::open(shards.dir / "out.db");
  const ResultsDb a = ResultsDb::open(shards.a_path, ResultsDb::OpenMode::existing);
  const ResultsDb b = ResultsDb::open(shards.b_path, ResultsDb::OpenMode::existing);
  merge_results(out, a);
  merge_results(out, b);
  const std::vector<StoredRun> before = out.runs();

  const MergeCounts again_a = merge_results(out, a);
  const MergeCounts again_b = merge_results(out, b);
  CHECK(again_a == MergeCounts{.runs_added = 0, .runs_skipped = 3});
  CHECK(again_b == MergeCounts{.runs_added = 0, .runs_skipped = 2});
  CHECK(out.runs() == before);
  CHECK(count_rows(out, "op_times") == 8);
}

TEST_CASE("a merge leaves the output handle's synchronous level as it was") {
  Shards shards;
  ResultsDb out = ResultsDb::open(shards.dir / "out.db");
  const auto level = [&] { return out.connection().query_text("PRAGMA synchronous", "synchronous"); };
  const std::string before = level();
  CHECK(before == "2");  // FULL, SQLite's default: every commit of a plain insert reaches the disk
  merge_results(out, ResultsDb::open(shards.a_path, ResultsDb::OpenMode::existing));
  CHECK(level() == before);
}

TEST_CASE("an interrupted merge completes when run again: whole runs only, none twice") {
  Shards shards;
  ResultsDb out = ResultsDb::open(shards.dir / "out.db");
  const ResultsDb a = ResultsDb::open(shards.a_path, ResultsDb::OpenMode::existing);
  // As if the first merge was killed after committing a's first run (each run is one transaction).
  const StoredRun first = a.runs().at(0);
  out.insert(first.run, first.prediction, first.measurement, a.op_times(first.run.id),
             a.experiment_row(first.run.id));

  const MergeCounts rest = merge_results(out, a);
  CHECK(rest.runs_added == 2);  // 3 runs in a, 1 already copied
  CHECK(rest.runs_skipped == 1);
  CHECK(by_config(out) == by_config(a));
}

TEST_CASE("the merged set of configurations does not depend on the merge order") {
  Shards shards;
  const ResultsDb a = ResultsDb::open(shards.a_path, ResultsDb::OpenMode::existing);
  const ResultsDb b = ResultsDb::open(shards.b_path, ResultsDb::OpenMode::existing);
  ResultsDb ab = ResultsDb::open(shards.dir / "ab.db");
  ResultsDb ba = ResultsDb::open(shards.dir / "ba.db");
  MergeCounts ab_counts = merge_results(ab, a);
  ab_counts += merge_results(ab, b);
  MergeCounts ba_counts = merge_results(ba, b);
  ba_counts += merge_results(ba, a);

  // Either way 5 runs are read, 4 configurations kept, 1 skipped.
  CHECK(ab_counts.runs_added == 4);
  CHECK(ba_counts.runs_added == 4);
  CHECK(ab_counts.runs_skipped == 1);
  CHECK(ba_counts.runs_skipped == 1);
  const std::set<std::pair<std::string, std::string>> expected = {
      {"a1", "0.2.0"}, {"a2", "0.2.0"}, {"b1", "0.2.0"}, {"shared", "0.2.0"}};
  CHECK(config_keys(ab) == expected);
  CHECK(config_keys(ba) == expected);
}

TEST_CASE("a configuration twice in one input is copied once; another mutwo version is another run") {
  TempDir dir;
  const fs::path in_path = dir / "in.db";
  {
    ResultsDb in = ResultsDb::open(in_path);
    insert_full(in, "c", 1 * kMs);
    insert_full(in, "c", 2 * kMs);  // a re-run by the same mutwo: the first one stays
    in.insert(run_of_config("c", "0.3.0"), predicted(3 * kMs, kGiB), std::nullopt);
  }
  ResultsDb out = ResultsDb::open(dir / "out.db");
  const MergeCounts counts = merge_results(out, ResultsDb::open(in_path, ResultsDb::OpenMode::existing));
  CHECK(counts.runs_added == 2);  // (c, 0.2.0) and (c, 0.3.0)
  CHECK(counts.runs_skipped == 1);
  const std::vector<StoredRun> runs = out.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].prediction->step_time_ns == 1 * kMs);
  CHECK(runs[1].run.mutwo_version == "0.3.0");
  CHECK_FALSE(out.experiment_row(runs[1].run.id));
}

TEST_CASE("runs outside experiments are the same run only when every field but the id is equal") {
  TempDir dir;
  const fs::path in_path = dir / "in.db";
  RunRecord plain = run_of_config("");
  plain.kind = "run";
  RunRecord other_notes = plain;
  other_notes.notes = "second attempt";
  RunRecord other_time = plain;
  other_time.created_at = "2026-11-24T00:00:00Z";
  RunRecord other_cap = plain;
  other_cap.memory_cap_fraction = 0.5;
  {
    ResultsDb in = ResultsDb::open(in_path);
    in.insert(plain, std::nullopt, measured(kMs, kGiB));
    in.insert(plain, std::nullopt, measured(kMs, kGiB));      // equal in every part: a duplicate
    in.insert(plain, std::nullopt, measured(2 * kMs, kGiB));  // another measurement: kept
    in.insert(other_notes, std::nullopt, std::nullopt);
    in.insert(other_time, std::nullopt, std::nullopt);
    in.insert(other_cap, std::nullopt, std::nullopt);
  }
  const ResultsDb in = ResultsDb::open(in_path, ResultsDb::OpenMode::existing);
  TempDir out_dir;
  ResultsDb out = ResultsDb::open(out_dir / "out.db");
  out.insert(other_time, std::nullopt, std::nullopt);  // already held before the merge

  // 6 runs: the second plain repeats the first, other_time is in out -> 4 added, 2 skipped.
  const MergeCounts counts = merge_results(out, in);
  CHECK(counts.runs_added == 4);
  CHECK(counts.runs_skipped == 2);
  std::vector<RunRecord> held;
  for (StoredRun& s : out.runs()) {
    s.run.id = 0;
    held.push_back(s.run);
  }
  CHECK(held == std::vector<RunRecord>{other_time, plain, plain, other_notes, other_cap});
  CHECK(out.runs().at(1).measurement->step_time_ns == kMs);
  CHECK(out.runs().at(2).measurement->step_time_ns == 2 * kMs);

  CHECK(merge_results(out, in).runs_added == 0);
}

TEST_CASE(
    "repeated mutwo runs of one configuration are each kept: they are measurements, not a sweep's row") {
  // `mutwo run` stores its configuration's hash; three runs of one array merged as one (the first),
  // and compare's median then stood on one measurement of three.
  TempDir dir;
  const fs::path in_path = dir / "in.db";
  {
    ResultsDb in = ResultsDb::open(in_path);
    for (int i = 1; i <= 3; ++i) {
      RunRecord r = run_of_config("same-array");
      r.kind = "run";
      r.created_at = fmt::format("2026-11-23T03:00:0{}Z", i);
      in.insert(r, predicted(kMs, kGiB), measured(i * kMs, kGiB));
    }
  }
  const ResultsDb in = ResultsDb::open(in_path, ResultsDb::OpenMode::existing);
  ResultsDb out = ResultsDb::open(dir / "out.db");
  CHECK(merge_results(out, in) == MergeCounts{.runs_added = 3});
  REQUIRE(out.runs().size() == 3);
  CHECK(out.runs().at(2).measurement->step_time_ns == 3 * kMs);
  CHECK(merge_results(out, in).runs_added == 0);  // merged again: each is present
}

TEST_CASE("a database is never merged into itself, however its path is spelled") {
  Shards shards;
  ResultsDb a = ResultsDb::open(shards.a_path);
  const int64_t runs = count_rows(a, "runs");
  fs::create_directories(shards.dir / "sub");
  fs::create_symlink(shards.a_path, shards.dir / "link.db");
  for (const fs::path& spelling :
       {shards.a_path, shards.dir / "sub" / ".." / "a.db", fs::path(shards.dir / "link.db")}) {
    INFO(spelling.string());
    const ResultsDb same = ResultsDb::open(spelling, ResultsDb::OpenMode::existing);
    CHECK_THROWS_WITH_AS(merge_results(a, same),
                         contains("cannot merge results database '" + spelling.string() + "' into itself"),
                         ResultsDbError);
  }
  CHECK(count_rows(a, "runs") == runs);
  CHECK(same_file(shards.a_path, shards.dir / "link.db"));
  CHECK_FALSE(same_file(shards.a_path, shards.b_path));
  CHECK_FALSE(same_file(shards.dir / "absent.db", shards.a_path));
  CHECK(same_file(shards.dir / "absent.db", shards.dir / "sub" / ".." / "absent.db"));
}

TEST_CASE(
    "experiments: an absent one is added, a later updated_at replaces, an earlier or equal one is kept") {
  TempDir dir;
  const fs::path in_path = dir / "in.db";
  ResultsDb out = ResultsDb::open(dir / "out.db");
  out.put_experiment(experiment("newer_in_input", "old title", "2026-11-23T03:00:00Z"));
  out.put_experiment(experiment("older_in_input", "kept title", "2026-11-23T03:00:00Z"));
  out.put_experiment(experiment("same_time", "ours", "2026-11-23T03:00:00Z"));
  {
    ResultsDb in = ResultsDb::open(in_path);
    in.put_experiment(experiment("newer_in_input", "new title", "2026-11-23T03:00:01Z"));
    in.put_experiment(experiment("older_in_input", "stale title", "2026-11-22T23:59:59Z"));
    in.put_experiment(experiment("same_time", "theirs", "2026-11-23T03:00:00Z"));
    in.put_experiment(experiment("only_in_input", "added", "2025-01-01T00:00:00Z"));
  }
  const MergeCounts counts = merge_results(out, ResultsDb::open(in_path, ResultsDb::OpenMode::existing));
  CHECK(counts == MergeCounts{.experiments_added = 1, .experiments_updated = 1, .experiments_kept = 2});
  CHECK(out.experiments() ==
        std::vector<ExperimentRecord>{experiment("newer_in_input", "new title", "2026-11-23T03:00:01Z"),
                                      experiment("older_in_input", "kept title", "2026-11-23T03:00:00Z"),
                                      experiment("only_in_input", "added", "2025-01-01T00:00:00Z"),
                                      experiment("same_time", "ours", "2026-11-23T03:00:00Z")});
}

TEST_CASE("an experiment of another kind under the same name is refused before a run is copied") {
  // Its rows of two kinds under one name were drawn as the kept spec's kind.
  TempDir dir;
  const fs::path in_path = dir / "in.db";
  ResultsDb out = ResultsDb::open(dir / "out.db");
  out.put_experiment(experiment("same", "strategies", "2026-11-23T03:00:00Z"));
  {
    ResultsDb in = ResultsDb::open(in_path);
    insert_full(in, "c", kMs);
    ExperimentRecord dtr = experiment("same", "dtr", "2026-11-24T03:00:00Z");
    dtr.kind = "dtr";
    in.put_experiment(dtr);
  }
  CHECK_THROWS_WITH_AS(
      merge_results(out, ResultsDb::open(in_path, ResultsDb::OpenMode::existing)),
      contains("experiment 'same' is of kind 'dtr' in one and 'strategies' in the other; rename "
               "one of them (its spec's name) and run it again"),
      ResultsDbError);
  CHECK(out.runs().empty());
  CHECK(out.experiment("same")->kind == "strategies");
}

TEST_CASE("a version-1 shard merges as runs without experiment rows") {
  TempDir dir;
  const fs::path v1_path = dir / "v1.db";
  {
    ResultsDb v1 = ResultsDb::open(v1_path);
    v1.insert(run_of_config("old"), predicted(kMs, kGiB), std::nullopt, op_times_of(5));
    // Version 2 is version 1 plus the experiment tables: dropping them gives a version-1 file.
    v1.connection().exec(
        "DROP TABLE experiment_metrics; DROP TABLE experiment_rows; DROP TABLE experiments; "
        "UPDATE schema_version SET version = 1",
        "downgrade");
  }
  const ResultsDb in = ResultsDb::open(v1_path, ResultsDb::OpenMode::existing);
  REQUIRE(in.schema_version() == 1);
  ResultsDb out = ResultsDb::open(dir / "out.db");
  CHECK(merge_results(out, in) == MergeCounts{.runs_added = 1});
  CHECK(by_config(out) == by_config(in));
  CHECK(out.op_times(1) == op_times_of(5));
}

TEST_CASE("check_readable passes a sound file and refuses one with damaged pages as corrupt") {
  TempDir dir;
  const fs::path path = dir / "results.db";
  {
    ResultsDb db = ResultsDb::open(path);
    for (int i = 0; i < 200; ++i) insert_full(db, fmt::format("c{}", i), (i + 1) * kMs);
    check_readable(db);
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  REQUIRE(bytes.size() > 16 * 4096);
  // The schema lives in the first pages; the last half (run and op-time pages) becomes noise.
  for (size_t i = bytes.size() / 2; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 31) % 256);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  const ResultsDb damaged = ResultsDb::open(path, ResultsDb::OpenMode::existing);  // opening reads page 1
  CHECK_THROWS_WITH_AS(check_readable(damaged),
                       contains("results database '" + path.string() + "' is corrupt"), ResultsDbError);
}

TEST_CASE(
    "check_sound refuses a file with a cell of the wrong type or range, naming it; a sound file passes") {
  Shards shards;
  {
    const ResultsDb a = ResultsDb::open(shards.a_path, ResultsDb::OpenMode::existing);
    check_sound(a);
  }
  {
    const sqlite::Connection c =
        sqlite::Connection::open(shards.a_path, sqlite::Connection::Mode::read_write);
    c.exec("UPDATE measurements SET step_time_ns = 'abc' WHERE run_id = 2", "damage");
  }
  const ResultsDb a = ResultsDb::open(shards.a_path, ResultsDb::OpenMode::existing);
  CHECK_THROWS_WITH_AS(
      check_sound(a),
      contains("results database '" + shards.a_path.string() +
               "': table measurements, run 2, column step_time_ns = 'abc': not an integer (a "
               "TEXT value)"),
      ResultsDbError);
  // A merge that went ahead would stop at run 2, with run 1 already copied: the caller checks first.
  ResultsDb out = ResultsDb::open(shards.dir / "out.db");
  CHECK_THROWS_AS(merge_results(out, a), ResultsDbError);
}
