// The experiment runner: specs read strictly (unknown keys, wrong types and names refused with the
// key and line), sweeps expanded in a fixed order, rows equal to what the search and the policies
// compute directly, stored rows skipped, an interrupted run resumed to the table of an
// uninterrupted one, shards that cover the sweep once. More kinds: tests/test_experiment_kinds.cpp.
#include "tests/support/test_experiments_fixtures.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "experiments/run_pipeline.hpp"
#include "policies/model_array.hpp"

TEST_CASE("every shipped spec parses, validates and expands; mutwo_throughput is 96 arrays x 4 strategies") {
  REQUIRE(shipped_specs().size() == 10);
  for (const ShippedSpec& s : shipped_specs()) {
    CAPTURE(s.name);
    const ExperimentSpec spec = read_spec(std::string(s.name));
    CHECK(spec.name == s.name);
    const ExperimentPlan plan = plan_experiment(spec, nullptr, {});
    CHECK(plan.rows_stored == 0);
  }
  const ExperimentPlan plan = plan_experiment(read_spec("mutwo_throughput"), nullptr, {});
  // 6 families x 2 batch sizes x 8 counts (2, 4, ..., 16) x 1 GPU x 1 limit = 96 tasks of 4 rows.
  CHECK(plan.tasks.size() == 96);
  CHECK(plan.rows == 384);
  CHECK(plan.tasks.front().label == "vit-b16 x2, batch 32, a100-40gb, limit device");
  // dtr_pareto: 8 logs x 6 heuristics = 48 tasks of 10 ratios.
  const ExperimentPlan dtr = plan_experiment(read_spec("dtr_pareto"), nullptr, {});
  CHECK(dtr.tasks.size() == 48);
  CHECK(dtr.rows == 480);
  CHECK(plan_experiment(read_spec("predicted_vs_measured"), nullptr, {}).tasks.empty());
  // mutwo_table1: 6 families x 2 batch sizes x 6 counts x 2 host links (32, 25 GB/s) = 144 tasks.
  const ExperimentPlan table1 = plan_experiment(read_spec("mutwo_table1"), nullptr, {});
  CHECK(table1.tasks.size() == 144);
  CHECK(table1.rows == 576);
  CHECK(table1.tasks.front().label == "vit-b16 x2, batch 8, a100-40gb, link 32 GB/s, limit device");
  // max_models: 6 families x 2 batch sizes x 6 counts = 72 tasks of 2 rows (hfta, mutwo).
  const ExperimentPlan max_models = plan_experiment(read_spec("max_models"), nullptr, {});
  CHECK(max_models.tasks.size() == 72);
  CHECK(max_models.rows == 144);
  // lean_ops: (7 + 8 + 7) batch sizes x 2 counts x 2 lean options = 88 tasks of 2 rows.
  const ExperimentPlan lean = plan_experiment(read_spec("lean_ops"), nullptr, {});
  CHECK(lean.tasks.size() == 88);
  CHECK(lean.rows == 176);
  CHECK(lean.tasks[1].label == "bert-base x1, batch 64, v100-16gb, lean ops tempo, limit device");
}

TEST_CASE(
    "max_models rows are the search's own; the summary gives HFTA's widest group and mutwo's one-run array") {
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "m.db");
  const ExperimentSpec spec = read_spec(kFixtures + "tiny_max_models.toml");
  const RunnerReport report = run_experiment(spec, db, jobs(2));
  CHECK(report.progress.rows_written == 8);  // counts {1, 2, 3, 4} x {hfta, mutwo}
  const std::vector<StoredExperimentRow> rows = db.experiment_rows("tiny_max_models");

  // 4 bert-mini at 1.6 MiB, searched directly: hfta fuses at most 2; the best one-run mutwo plan
  // keeps the state on the host.
  const int64_t limit = 1677722;
  const auto cost = costmodel::builtin_cost_sources().create(costmodel::kDefaultCostSource,
                                                             costmodel::find_device("a100-40gb"));
  policies::SearchConfig config;
  zoo::ModelConfig model;
  model.batch_size = 4;
  config.architectures.push_back({"bert-mini", 4, model});
  config.cost = cost.get();
  config.memory_limit_bytes = limit;
  config.policies = {"none", "capuchin"};
  config.top = 1;
  config.host_mode = sim::HostMode::eager;
  const policies::SearchReport searched = policies::run_search(config);
  const policies::SearchRow* one_run = nullptr;
  for (const policies::SearchRow& r : searched.rows) {
    if (r.strategy == "mutwo" && r.runs == 1 && !r.pruned) {
      one_run = &r;
      break;
    }
  }
  REQUIRE(one_run != nullptr);
  REQUIRE(one_run->feasible);
  CHECK(one_run->state_offloaded);
  const StoredExperimentRow& mutwo = row_where(rows, {{"models", 4}}, "mutwo");
  CHECK(mutwo.row.feasible);
  CHECK(mutwo.run.run.partition == one_run->partition);
  CHECK(mutwo.run.run.policy == one_run->policy);
  CHECK(mutwo.row.metric("step_time_ns") == static_cast<double>(one_run->step_time_ns));
  CHECK(mutwo.row.metric("models_at_once") == 4);
  CHECK(mutwo.row.metric("state_offloaded") == 1);
  const StoredExperimentRow& hfta = row_where(rows, {{"models", 4}}, "hfta");
  CHECK(hfta.run.run.partition == "bert-mini:2+2");
  CHECK(hfta.row.metric("models_at_once") == 2);

  const CsvTable table = experiment_table(spec, db);
  REQUIRE(table.rows.size() == 1);
  CHECK(table.header[7] == "hfta_max_models");
  CHECK(table.rows[0][7] == "2");
  CHECK(table.rows[0][8] == "4");
  CHECK(table.rows[0][9] == "yes");  // at the sweep's largest count: a lower bound
  CHECK(table.rows[0][10] == "2");
}

TEST_CASE("spec errors name the file, the line, the key and the value") {
  CHECK_THROWS_WITH_AS(
      spec_text(strategies_spec("model_count = [2]\n")),
      doctest::Contains("spec.toml:10: 'sweep.model_count' is not a known key here; valid: models, "
                        "model_counts, gpus"),
      FormatError);
  CHECK_THROWS_WITH_AS(spec_text("nmae = \"x\"\n" + strategies_spec()),
                       doctest::Contains("spec.toml:1: 'nmae' is not a known key here; valid: name, title"),
                       FormatError);
  CHECK_THROWS_WITH_AS(spec_text(strategies_spec("memory_fractions = [0.5]\n")),
                       doctest::Contains("'sweep.memory_fractions' is not a known key here"), FormatError);
  CHECK_THROWS_WITH_AS(
      spec_text("name = \"t\"\ntitle = \"T\"\nkind = \"policies\"\n[sweep]\nmodel_counts = \"2\"\n"),
      doctest::Contains("spec.toml:5: 'sweep.model_counts' must be an array, not a string"), FormatError);
  CHECK_THROWS_WITH_AS(
      spec_text("name = \"t\"\ntitle = \"T\"\nkind = \"policies\"\n[sweep]\nmemory_fractions = [0.5, 1.5]\n"),
      doctest::Contains("'sweep.memory_fractions' holds 1.5, outside (0, 1]"), FormatError);
  CHECK_THROWS_WITH_AS(
      spec_text("name = \"t\"\ntitle = \"T\"\nkind = \"policies\"\n[sweep]\nmodel_counts = [0]\n"),
      doctest::Contains("'sweep.model_counts' = 0 must be from 1 to 1024"), FormatError);
  CHECK_THROWS_WITH_AS(spec_text("name = \"T x\"\ntitle = \"T\"\nkind = \"dtr\"\n"),
                       doctest::Contains("'name' = 'T x' must be lower-case letters, digits"), FormatError);
  CHECK_THROWS_WITH_AS(spec_text("title = \"T\"\nkind = \"dtr\"\n"), doctest::Contains("'name' is missing"),
                       FormatError);
  CHECK_THROWS_WITH_AS(
      spec_text("name = \"t\"\ntitle = \"T\"\nkind = \"sweep\"\n"),
      doctest::Contains("unknown experiment kind 'sweep'; valid: strategies, policies, dtr, measured"),
      UnknownNameError);
  CHECK_THROWS_WITH_AS(
      spec_text("name = \"t\"\ntitle = \"T\"\nkind = \"dtr\"\nfigures = [\"breakdown\"]\n"),
      doctest::Contains("'figures' names 'breakdown', which kind 'dtr' does not draw; valid: "
                        "overhead_vs_budget"),
      FormatError);
  CHECK_THROWS_WITH_AS(spec_text("name = \"t\"\ntitle = [\n"), doctest::Contains("spec.toml:2:"),
                       FormatError);
  CHECK_THROWS_WITH_AS(
      read_spec("mutwo_thruput"),
      doctest::Contains("unknown experiment 'mutwo_thruput': not a file, nor a shipped spec; "
                        "shipped: dtr_pareto, fidelity, harmony, lean_ops, max_models, memory_sweep"),
      UnknownNameError);
  CHECK_THROWS_WITH_AS(read_spec("missing/spec.toml"),
                       doctest::Contains("cannot read experiment spec 'missing/spec.toml': no such file"),
                       Error);
}

TEST_CASE("the kind checks the sweep's names and files before anything runs") {
  const auto plan = [](const std::string& text) { return plan_experiment(spec_text(text), nullptr, {}); };
  std::string text = strategies_spec();
  text.replace(text.find("bert-mini"), 9, "bert-huge");
  CHECK_THROWS_WITH_AS(plan(text),
                       doctest::Contains("spec.toml: 'sweep.models' = 'bert-huge': unknown model"),
                       UnknownNameError);
  // max_models: a memory limit that is not a size; strategies: a host link of 0 GB/s.
  const std::string max_models =
      "name = \"m\"\ntitle = \"M\"\nkind = \"max_models\"\n[sweep]\n"
      "models = [{ name = \"bert-mini\" }]\nmodel_counts = [2]\ngpus = [\"a100-40gb\"]\n";
  CHECK_THROWS_WITH_AS(plan(max_models + "memory_limits = [\"lots\"]\n"),
                       doctest::Contains("spec.toml: 'sweep.memory_limits' = 'lots': "), Error);
  CHECK_NOTHROW(plan(max_models + "memory_limits = [\"device\", \"2MiB\"]\n"));
  CHECK_THROWS_WITH_AS(spec_text(strategies_spec("host_link_gbps = [0.0]\n")),
                       doctest::Contains("'sweep.host_link_gbps' holds 0"), FormatError);
  text = strategies_spec();
  text.replace(text.find("\"hfta\""), 6, "\"hfta+dtr\"");
  CHECK_THROWS_WITH_AS(
      plan(text),
      doctest::Contains("'sweep.strategies' = 'hfta+dtr': unknown strategy; valid: sequential, hfta"),
      UnknownNameError);
  CHECK_THROWS_WITH_AS(
      plan(strategies_spec("policies = [\"vdnnn\"]\n")),
      doctest::Contains("spec.toml: 'sweep.policies' = 'vdnnn': unknown policy 'vdnnn'; valid: none"),
      UnknownNameError);
  CHECK_THROWS_WITH_AS(plan(strategies_spec("memory_limits = [\"lots\"]\n")),
                       doctest::Contains("'sweep.memory_limits' = 'lots': invalid memory size"), Error);
  CHECK_THROWS_WITH_AS(
      plan(strategies_spec("cost_source = \"measured\"\n")),
      doctest::Contains("'sweep.cost_source' = 'measured': cost source 'measured' needs measured traces"),
      UnknownNameError);
  CHECK_THROWS_WITH_AS(plan("name = \"t\"\ntitle = \"T\"\nkind = \"dtr\"\n[sweep]\nlogs = [\"nope.log\"]\n"),
                       doctest::Contains("'sweep.logs' = 'nope.log': no such file"), Error);
  {  // two logs of one file name, in two folders, were drawn as one log
    const std::filesystem::path dtr = std::string(MUTWO_TEST_FIXTURES) + "/dtr";
    const std::filesystem::path log = "resnet32-56-9000000000.0-2020-10-1-13-3-30-default.log.gz";
    TempDir other("experiments");
    std::filesystem::copy_file(dtr / log, other / log);
    CHECK_THROWS_WITH_AS(plan("name = \"t\"\ntitle = \"T\"\nkind = \"dtr\"\n[sweep]\nlogs = [\"" +
                              (dtr / log).string() + "\", \"" + (other / log).string() + "\"]\n"),
                         doctest::Contains(("has the file name of '" + (dtr / log).string() + "'").c_str()),
                         Error);
  }
  CHECK_THROWS_WITH_AS(
      plan("name = \"t\"\ntitle = \"T\"\nkind = \"policies\"\n[sweep]\nmodel_counts = [2]\n"),
      doctest::Contains("'sweep.models' is missing (kind 'policies' needs models, model_counts, gpus)"),
      FormatError);
}

TEST_CASE("shards are i/n, 0-based, and every task belongs to exactly one") {
  CHECK(parse_shard("0/1").index == 0);
  CHECK(parse_shard("3/4").index == 3);
  CHECK(parse_shard("3/4").count == 4);
  for (const char* bad : {"4/4", "1", "-1/2", "a/2", "1/0", "1/2/3", ""}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_shard(bad), doctest::Contains("must be i/n with whole numbers 0 <= i < n"),
                         Error);
  }
  const ExperimentSpec spec = read_spec("mutwo_throughput");
  std::set<std::string> labels;
  size_t total = 0;
  for (int32_t i = 0; i < 3; ++i) {
    const ExperimentPlan plan = plan_experiment(spec, nullptr, {i, 3});
    CHECK(plan.planned.size() == 32);  // 96 / 3
    for (const PlannedTask& t : plan.planned) labels.insert(t.task->label);
    total += plan.planned.size();
  }
  CHECK(total == 96);
  CHECK(labels.size() == 96);
}

TEST_CASE("strategies rows are the search's own rows; a second run skips every configuration") {
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const ExperimentSpec spec = read_spec(kFixtures + "tiny_strategies.toml");
  const RunnerReport first = run_experiment(spec, db, jobs(2));
  // 1 model x 1 batch x counts {2, 3} x limits {device, 1.6 MiB} = 4 tasks x 4 strategies.
  CHECK(first.tasks_total == 4);
  CHECK(first.progress.tasks_done == 4);
  CHECK(first.progress.rows_written == 16);
  CHECK_FALSE(first.interrupted);
  const std::vector<StoredExperimentRow> rows = db.experiment_rows("tiny_strategies");
  REQUIRE(rows.size() == 16);

  // The 3-model array at 1.6 MiB, searched directly.
  const int64_t limit = 1677722;  // 1.6 MiB = 1.6 x 2^20 = 1677721.6, rounded
  const auto cost = costmodel::builtin_cost_sources().create(costmodel::kDefaultCostSource,
                                                             costmodel::find_device("a100-40gb"));
  policies::SearchConfig config;
  zoo::ModelConfig model;
  model.batch_size = 4;
  config.architectures.push_back({"bert-mini", 3, model});
  config.cost = cost.get();
  config.memory_limit_bytes = limit;
  config.top = 1;
  config.host_mode = sim::HostMode::eager;  // a spec's default: the host timeline of PyTorch eager
  const policies::SearchReport report = policies::run_search(config);
  int checked = 0;
  for (const StoredExperimentRow& r : rows) {
    const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
    if (c["models"] != 3 || c["memory_limit_bytes"] != limit) continue;
    for (const policies::SearchRow& s : report.rows) {
      if (s.strategy != r.row.series) continue;
      CAPTURE(s.strategy);
      CHECK(r.row.feasible == s.feasible);
      CHECK(r.run.run.partition == s.partition);
      CHECK(r.row.metric("peak_bytes") == static_cast<double>(s.peak_bytes));
      if (s.feasible) CHECK(r.row.metric("step_time_ns") == static_cast<double>(s.step_time_ns));
      ++checked;
      break;
    }
  }
  CHECK(checked == 4);
  // hfta splits 3 models into 2 + 1 at 1.6 MiB; hfta+capuchin (all 3 fused) does not fit.
  const nlohmann::json three_at_limit = {{"models", 3}, {"memory_limit_bytes", limit}};
  CHECK(row_where(rows, three_at_limit, "hfta").run.run.partition == "bert-mini:2+1");
  CHECK(row_where(rows, three_at_limit, "hfta").row.metric("runs") == 2);
  CHECK_FALSE(row_where(rows, three_at_limit, "hfta+capuchin").row.feasible);
  CHECK(row_where(rows, three_at_limit, "sequential").row.metric("runs") == 3);  // one run per model

  const RunnerReport second = run_experiment(spec, db, jobs(2));
  CHECK(second.progress.tasks_skipped == 4);
  CHECK(second.progress.tasks_done == 0);
  CHECK(second.progress.rows_written == 0);
  CHECK(second.rows_present == 16);
  CHECK(db.runs().size() == 16);

  // The table: header, then one line per row in sweep order; normalised to hfta's step time.
  const CsvTable table = experiment_table(spec, db);
  REQUIRE(table.rows.size() == 16);
  CHECK(table.header.front() == "model");
  CHECK(table.header.back() == "step_time_over_hfta");
  CHECK(table.rows[1][8] == "hfta");
  CHECK(table.rows[1].back() == "1");  // hfta over itself
}

TEST_CASE("a run stopped part-way resumes to the table an uninterrupted run writes") {
  TempDir dir("experiments");
  const ExperimentSpec spec = read_spec(kFixtures + "tiny_strategies.toml");
  ResultsDb whole = ResultsDb::open(dir / "whole.db");
  run_experiment(spec, whole, jobs(1));

  // Stopped before any task starts (the flag is read before each task; the first progress call
  // comes before the workers start): nothing is written and the run says it was interrupted.
  ResultsDb db = ResultsDb::open(dir / "stopped.db");
  std::atomic<bool> stop{false};
  RunnerOptions options = jobs(1);
  options.stop = &stop;
  options.on_progress = [&](const RunnerProgress&) { stop = true; };
  const RunnerReport stopped = run_experiment(spec, db, options);
  CHECK(stopped.interrupted);
  CHECK(stopped.progress.tasks_done == 0);
  CHECK(db.runs().empty());

  // Half the tasks stored (as a run killed after them leaves the file: whole rows only), then the
  // whole sweep: only the other half runs, and the table is the uninterrupted run's.
  RunnerOptions half = jobs(1);
  half.shard = {1, 2};
  CHECK(run_experiment(spec, db, half).progress.rows_written == 8);
  const RunnerReport resumed = run_experiment(spec, db, jobs(2));
  CHECK_FALSE(resumed.interrupted);
  CHECK(resumed.progress.tasks_skipped == 2);
  CHECK(resumed.progress.tasks_done == 2);
  CHECK(resumed.progress.rows_written == 8);
  CHECK(db.runs().size() == 16);
  CHECK(csv_of(spec, db) == csv_of(spec, whole));
}

TEST_CASE("one thread or three, the same rows") {
  TempDir dir("experiments");
  const ExperimentSpec spec = read_spec(kFixtures + "tiny_policies.toml");
  ResultsDb one = ResultsDb::open(dir / "one.db");
  ResultsDb three = ResultsDb::open(dir / "three.db");
  run_experiment(spec, one, jobs(1));
  run_experiment(spec, three, jobs(3));
  CHECK(csv_of(spec, one) == csv_of(spec, three));
}

TEST_CASE("two shards merged hold the rows of the whole sweep, once") {
  TempDir dir("experiments");
  const ExperimentSpec spec = read_spec(kFixtures + "tiny_strategies.toml");
  ResultsDb whole = ResultsDb::open(dir / "whole.db");
  run_experiment(spec, whole, jobs(2));
  ResultsDb merged = ResultsDb::open(dir / "merged.db");
  for (int32_t i = 0; i < 2; ++i) {
    ResultsDb shard = ResultsDb::open(dir / fmt::format("shard-{}.db", i));
    RunnerOptions o = jobs(1);
    o.shard = {i, 2};
    const RunnerReport r = run_experiment(spec, shard, o);
    CHECK(r.progress.tasks == 2);
    CHECK(shard.runs().size() == 8);
    CHECK(merge_results(merged, shard).runs_added == 8);
    CHECK(merge_results(merged, shard).runs_added == 0);  // merging again adds nothing
  }
  CHECK(merged.runs().size() == 16);
  CHECK(csv_of(spec, merged) == csv_of(spec, whole));
  // The merged file is complete: running the spec on it runs nothing.
  CHECK(run_experiment(spec, merged, jobs(1)).progress.tasks_skipped == 4);
}

TEST_CASE("policies rows: limits are fractions of the plain peak; 'none' fits only at 100 %") {
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const ExperimentSpec spec = read_spec(kFixtures + "tiny_policies.toml");
  run_experiment(spec, db, jobs(2));
  const std::vector<StoredExperimentRow> rows = db.experiment_rows("tiny_policies");
  REQUIRE(rows.size() == 9);  // 3 policies x 3 fractions
  for (const StoredExperimentRow& r : rows) {
    const double fraction = *r.row.metric("memory_fraction");
    const double peak = *r.row.metric("unoptimised_peak_bytes");
    CHECK(*r.row.metric("memory_limit_bytes") == std::floor(fraction * peak));
    CHECK(r.run.prediction.has_value());
    if (r.row.feasible) CHECK(*r.row.metric("peak_bytes") <= *r.row.metric("memory_limit_bytes"));
  }
  const StoredExperimentRow& full = row_where(rows, {{"memory_fraction", 1.0}}, "none");
  CHECK(full.row.feasible);
  // The plain schedule at its own peak: the unoptimised step itself.
  CHECK(full.row.metric("step_time_ns") == full.row.metric("unoptimised_step_time_ns"));
  CHECK(full.row.metric("throughput_over_unoptimised") == 1.0);
  CHECK(full.row.metric("peak_bytes") == full.row.metric("unoptimised_peak_bytes"));
  CHECK_FALSE(row_where(rows, {{"memory_fraction", 0.75}}, "none").row.feasible);
}

namespace {

namespace fs = std::filesystem;

// doctest's matcher for a message built at run time (it keeps its own copy of the text).
doctest::Contains contains_text(const std::string& text) {
  return doctest::Contains(text.c_str());
}

}  // namespace

TEST_CASE("a sweep is counted before it is expanded; one over the limit is refused naming its factors") {
  // Every shipped spec is far below the limit, and its count is the rows it expands to (fidelity's
  // is an upper bound: a calibrated source prices only the GPUs a profile covers).
  for (const ShippedSpec& s : shipped_specs()) {
    CAPTURE(s.name);
    const ExperimentSpec spec = read_spec(std::string(s.name));
    const std::optional<int64_t> size = sweep_size(spec);
    REQUIRE(size);
    CHECK(*size <= kMaxSweepConfigurations / 100);
    const int64_t rows = plan_experiment(spec, nullptr, {}).rows;
    if (spec.kind == "published") {
      CHECK(*size >= rows);
    } else {
      CHECK(*size == rows);
    }
  }
  CHECK(sweep_size(read_spec("mutwo_throughput")) == 384);
  // 1024 counts x 21 GPUs x 200 batch sizes x 100 limits x 4 strategies: refused in milliseconds,
  // before a configuration is made (listing 1M of them took 34 s and 9.3 GB).
  std::string counts;
  for (int i = 1; i <= 1024; ++i) counts += fmt::format("{}{}", i == 1 ? "" : ", ", i);
  std::string batches;
  for (int i = 1; i <= 200; ++i) batches += fmt::format("{}{}", i == 1 ? "" : ", ", i);
  const std::string gpus =
      "\"a10\", \"a100-40gb\", \"a100-80gb\", \"a100-pcie-40gb\", \"a100-pcie-80gb\", \"b200\", "
      "\"gtx1080ti\", "
      "\"h100-pcie\", \"h100-sxm-80gb\", \"h200\", \"l4\", \"l40s\", \"p100-pcie-16gb\", \"p4\", "
      "\"rtx3090\", "
      "\"rtx4090\", \"t4\", \"titan-xp\", \"v100-16gb\", \"v100-32gb\", \"v100-pcie-32gb\"";
  std::string limits;
  for (int i = 1; i <= 100; ++i) limits += fmt::format("{}\"{}MiB\"", i == 1 ? "" : ", ", i);
  const ExperimentSpec huge = spec_text(
      "name = \"huge\"\ntitle = \"T\"\nkind = \"strategies\"\n[sweep]\nmodels = [{ name = \"bert-mini\", "
      "batch_sizes = [" +
      batches + "] }]\nmodel_counts = [" + counts + "]\ngpus = [" + gpus + "]\nmemory_limits = [" + limits +
      "]\nstrategies = [\"mutwo\", \"sequential\", \"hfta\", \"hfta+capuchin\"]\n");
  CHECK(sweep_size(huge) == int64_t{200} * 1024 * 21 * 100 * 4);
  const std::string message =
      "spec.toml: sweep has 1720320000 configurations (200 model/batch pairs x 1024 model_counts x 21 gpus x "
      "100 memory_limits x 4 strategies), more than the limit 100000";
  CHECK_THROWS_WITH_AS(validate_experiment(huge), contains_text(message), Error);
  CHECK_THROWS_WITH_AS(plan_experiment(huge, nullptr, {}), contains_text(message), Error);
  TempDir dir("experiments");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  CHECK_THROWS_WITH_AS(run_experiment(huge, db, jobs(1)), contains_text(message), Error);
  CHECK(db.experiments().empty());  // refused before the spec was registered
  CHECK_THROWS_WITH_AS(experiment_table(huge, db), contains_text(message), Error);
}

TEST_CASE("a memory limit of zero bytes or a fraction of a byte is refused naming the key and value") {
  const auto plan = [](const std::string& limit) {
    return plan_experiment(spec_text(strategies_spec("memory_limits = [\"" + limit + "\"]\n")), nullptr, {});
  };
  // The simulator reads 0 as "no limit": every row would be feasible.
  for (const char* zero : {"0", "0B", "0GiB", "0.0000001KiB"}) {
    CAPTURE(zero);
    CHECK_THROWS_WITH_AS(
        plan(zero),
        contains_text(fmt::format("spec.toml: 'sweep.memory_limits' = '{}' is 0 bytes: a memory "
                                  "limit must be at least 1 byte",
                                  zero)),
        Error);
  }
  CHECK_THROWS_WITH_AS(
      plan("1.5B"),
      doctest::Contains("'sweep.memory_limits' = '1.5B': invalid memory size '1.5B': a size in "
                        "bytes (B) is a whole number of bytes"),
      Error);
  CHECK(plan("1B").rows == 1);
  CHECK(plan("1.6MiB").tasks.front().configs.front()["memory_limit_bytes"] == 1677722);  // rounded
}

TEST_CASE("the CSV's destination is checked before a sweep runs, and nothing is left behind") {
  TempDir dir("experiments");
  const fs::path file = dir / "afile";
  std::ofstream(file) << "x";
  CHECK_NOTHROW(check_csv_destination(dir / "t.csv"));
  CHECK_NOTHROW(check_csv_destination(dir / "new" / "deeper" / "t.csv"));
  CHECK_FALSE(fs::exists(dir / "new"));  // probed, not created
  CHECK_THROWS_WITH_AS(check_csv_destination(file / "t.csv"),
                       contains_text("'" + file.string() + "' is a file, not a folder"), Error);
  CHECK_THROWS_WITH_AS(check_csv_destination(file / "sub" / "t.csv"),
                       contains_text("'" + file.string() + "' is a file, not a folder"), Error);
  fs::create_directory(dir / "t.csv");
  CHECK_THROWS_WITH_AS(check_csv_destination(dir / "t.csv"), doctest::Contains("it is a folder"), Error);
  CHECK_THROWS_WITH_AS(check_csv_destination("/proc/mutwo-no-such/t.csv"),
                       doctest::Contains("cannot create folder '/proc/mutwo-no-such' in '/proc'"), Error);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir.path())) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"afile", "t.csv"});
}

TEST_CASE("a requested model array holds 1 to 1024 models, refused before its graph is built") {
  experiments::ArrayRequest request;
  request.model = "bert-mini";
  request.models = policies::kMaxArrayModels;
  CHECK(request.model_array().count == 1024);
  for (const int32_t models : {0, 1025}) {
    request.models = models;
    CHECK_THROWS_WITH_AS(request.model_array(),
                         fmt::format("models = {}: must be from 1 to 1024", models).c_str(), Error);
  }
}
