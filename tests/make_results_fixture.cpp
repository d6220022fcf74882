// Writes the results databases the `mutwo compare` and `mutwo db` CLI tests read
// (tests/cli_compare.cmake, tests/cli_db.cmake), through the library itself, so no binary fixture is
// checked in:
//   make_results_fixture runs <path>   six runs with hand-picked figures (below)
//   make_results_fixture empty <path>  the schema and no runs
//   make_results_fixture shard <path>  three runs, one of them run 1 of `runs`, and an experiment
//   make_results_fixture runs <path> SQL...  `runs`, then each SQL statement run on the file with its
//                                      CHECK constraints off: the cells another program could have
//                                      written ("UPDATE measurements SET step_time_ns = 1.5 WHERE ...")
//   make_results_fixture pages <path>  `runs` with the pages of its run tables overwritten by noise
//                                      (opens; SQLite's quick_check finds it corrupt)
// Any existing file at path (and its -wal/-shm) is replaced.
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/results_db.hpp"
#include "tests/support/result_records.hpp"

namespace {

using namespace mutwo::experiments;

using mutwo::test::kGiB;
using mutwo::test::kMs;
using mutwo::test::measured;
using mutwo::test::predicted;

RunRecord run(const std::string& kind, const std::string& model, int32_t models, const std::string& partition,
              const std::string& policy) {
  RunRecord r;
  r.kind = kind;
  r.created_at = "2026-11-23T03:00:00Z";
  r.model = model;
  r.models = models;
  r.partition = partition;
  r.policy = policy;
  r.batch_size = 8;
  r.dtype = "fp32";
  r.optimizer = "adam";
  r.device = kind == "run" ? "cuda:0" : "";
  r.gpu = "h100-sxm-80gb";
  r.cost_source = "analytic";
  r.mutwo_version = "0.1.0";
  r.git_revision = "fixture";
  r.config_hash = "fixture-" + model + "-" + partition + "-" + policy;
  return r;
}

// Relative errors chosen exact in binary, so the JSON checks can compare them as text:
//   1 bert-base x4 [2,2] capuchin: step 125 vs 100 ms -> +25.0 %; peak 28 vs 32 GiB -> -12.5 %
//   2 resnet18 x2 [1,1] none:      step  50 vs 100 ms -> -50.0 %; peak  9 vs  8 GiB -> +12.5 %
//   3 gpt2-small x2 [2] none:      predicted OOM (measured 200 ms, 30 GiB)
//   4 vit-b16 x8 [4,4] mutwo:      simulate only (no measurement)
//   5 resnet50 x1 [1] none:        step  80 vs  80 ms ->   0.0 %; peak  3 vs  2 GiB -> +50.0 %
//   6 bert-large x4 [4] none:      measured OOM (predicted 300 ms, 70 GiB)
// Summary over runs 1, 2, 5: |step errors| 0, 0.25, 0.5 -> median 25.0 %, max 50.0 %;
// |peak errors| 0.125, 0.125, 0.5 -> median 12.5 %, max 50.0 %.
void write_runs(ResultsDb& db) {
  db.insert(run("run", "bert-base", 4, "2,2", "capuchin"), predicted(125 * kMs, 28 * kGiB),
            measured(100 * kMs, 32 * kGiB));
  db.insert(run("run", "resnet18", 2, "1,1", "none"), predicted(50 * kMs, 9 * kGiB),
            measured(100 * kMs, 8 * kGiB));
  db.insert(run("run", "gpt2-small", 2, "2", "none"), predicted(10 * kMs, 90 * kGiB, /*oom=*/true),
            measured(200 * kMs, 30 * kGiB));
  db.insert(run("simulate", "vit-b16", 8, "4,4", "mutwo"), predicted(400 * kMs, 60 * kGiB), std::nullopt);
  db.insert(run("run", "resnet50", 1, "1", "none"), predicted(80 * kMs, 3 * kGiB),
            measured(80 * kMs, 2 * kGiB));
  db.insert(run("run", "bert-large", 4, "4", "none"), predicted(300 * kMs, 70 * kGiB),
            measured(0, 0, /*oom=*/true));
}

// A sweep shard beside `runs`: run 1 of `runs` again (same config hash and mutwo version, so a merge
// of both holds it once), and two simulate runs of experiment fixture_sweep with experiment rows.
void write_shard(ResultsDb& db) {
  db.insert(run("run", "bert-base", 4, "2,2", "capuchin"), predicted(125 * kMs, 28 * kGiB),
            measured(100 * kMs, 32 * kGiB));
  for (const char* policy : {"none", "mutwo"}) {
    ExperimentRowRecord row;
    row.experiment = "fixture_sweep";
    row.series = policy;
    row.feasible = true;
    row.config_json = std::string(R"({"experiment":"fixture_sweep","policy":")") + policy + R"("})";
    row.metrics = {{"step_time_ns", 50.0 * kMs}, {"peak_bytes", 9.0 * kGiB}};
    db.insert(run("simulate", "resnet34", 2, "2", policy), predicted(50 * kMs, 9 * kGiB), std::nullopt, {},
              row);
  }
  ExperimentRecord e;
  e.name = "fixture_sweep";
  e.kind = "policies";
  e.title = "Fixture sweep";
  e.figures = {"throughput_vs_memory"};
  e.spec_toml = "name = \"fixture_sweep\"\n";
  e.updated_at = "2026-11-23T03:00:00Z";
  db.put_experiment(e);
}

// Overwrites the pages of the run tables (runs, predictions, measurements, op_times; each fits its
// root page here) with noise, leaving the table list and schema_version: the file opens, and reading
// every page does not.
void damage_pages(const std::filesystem::path& path) {
  std::vector<int64_t> pages;
  int64_t page_size = 0;
  {
    const sqlite::Connection c = sqlite::Connection::open(path, sqlite::Connection::Mode::read_write);
    c.exec("PRAGMA journal_mode = DELETE", "cannot leave WAL mode");
    page_size = std::stoll(c.query_text("PRAGMA page_size", "cannot read the page size"));
    sqlite::Statement s = c.prepare(
        "SELECT rootpage FROM sqlite_master WHERE name IN ('runs', 'predictions', 'measurements', "
        "'op_times')",
        "cannot list the root pages");
    while (s.step()) pages.push_back(s.int64(0));
  }
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  for (const int64_t page : pages) {
    const size_t begin = static_cast<size_t>((page - 1) * page_size);
    if (begin + static_cast<size_t>(page_size) > bytes.size()) throw std::runtime_error("no such page");
    for (size_t i = begin; i < begin + static_cast<size_t>(page_size); ++i)
      bytes[i] = static_cast<char>((i * 31 + 7) % 256);
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 3 ? argv[1] : "";
  const bool sql = mode == "runs" && argc > 3;
  if ((mode != "runs" && mode != "empty" && mode != "shard" && mode != "pages") || (argc > 3 && !sql)) {
    std::cerr << "usage: make_results_fixture runs|empty|shard|pages <path>, or runs <path> SQL...\n";
    return 2;
  }
  const std::filesystem::path path = argv[2];
  try {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
    {
      ResultsDb db = ResultsDb::open(path);
      if (mode == "runs" || mode == "pages") write_runs(db);
      if (mode == "shard") write_shard(db);
    }
    // Closing the last connection wrote the WAL into the file; what follows changes the file itself.
    if (sql) {
      const sqlite::Connection c = sqlite::Connection::open(path, sqlite::Connection::Mode::read_write);
      c.exec("PRAGMA ignore_check_constraints = ON", "cannot turn the checks off");
      for (int i = 3; i < argc; ++i) c.exec(argv[i], argv[i]);
    }
    if (mode == "pages") damage_pages(path);
  } catch (const std::exception& e) {
    std::cerr << "make_results_fixture: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
