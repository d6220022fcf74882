// The `published` experiment kind: its CSV read strictly, one row per published measurement x cost
// source (calibrated only where a profile calibrates the GPU) x host mode, and every predicted figure
// equal to a direct sim::simulate of the same configuration.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "costmodel/cost_setup.hpp"
#include "costmodel/op_cost_model.hpp"
#include "experiments/content_hash.hpp"
#include "experiments/csv_file.hpp"
#include "experiments/published_csv.hpp"
#include "experiments/results_db.hpp"
#include "experiments/runner.hpp"
#include "experiments/spec.hpp"
#include "ir/dtype.hpp"
#include "ir/precision.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/host_mode.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using namespace mutwo;
using namespace mutwo::experiments;

const std::string kDir = std::string(MUTWO_TEST_FIXTURES) + "/published/";
const std::string kHeader = std::string(kPublishedCsvHeader) + "\n";

struct Direct {
  sim::Prediction p;
  int64_t optimizer_ns = 0;  // the step's optimizer-phase ops, priced one after another
};

// The step of `model` as the kind builds it, priced by `source` on `gpu` in `host` mode.
Direct direct(const std::string& model, int64_t batch, int64_t seq_len, int64_t image_size,
              const std::string& precision, const std::string& optimizer, const std::string& gpu,
              const std::string& source, const std::string& host) {
  policies::ModelArray array;
  array.model = model;
  array.config.batch_size = batch;
  array.config.seq_len = seq_len;
  array.config.image_size = image_size;
  array.config.dtype = ir::parse_dtype("fp32");
  array.config.precision = ir::parse_precision(precision);
  array.optimizer.kind = transforms::parse_optimizer(optimizer);
  const ir::Schedule schedule = policies::build_plain_schedule(policies::sub_array_steps(array, {1}));
  costmodel::CostSetup setup;
  setup.gpu = gpu;
  setup.cost_source = source;
  sim::SimOptions options;
  options.host_mode = sim::parse_host_mode(host);
  options.continue_past_limit = true;
  const std::unique_ptr<costmodel::OpCostModel> cost = costmodel::make_cost_model(setup);
  Direct out{sim::simulate(schedule, *cost, options)};
  const std::vector<int64_t> ns = costmodel::op_durations_ns(*cost, schedule.graph);
  for (const ir::Op& op : schedule.graph.ops)
    if (op.phase == ir::Phase::optimizer) out.optimizer_ns += ns[static_cast<size_t>(op.id)];
  return out;
}

}  // namespace

TEST_CASE("the published CSV is read with its citation; bad rows name the file, line and field") {
  const std::vector<PublishedThroughput> rows = read_published_csv(kDir + "two_rows.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].id == "r18-v100-amp");
  CHECK(rows[0].image_size == 224);
  CHECK(rows[0].source_note == "made up, with a comma");
  CHECK(rows[1].samples_per_s == 400.5);
  CHECK(rows[1].seq_len == 128);
  CHECK(rows[0].accumulation_steps == 1);
  CHECK(rows[1].accumulation_steps == 4);
  const std::string row = "a,M,resnet18,v100-16gb,1,fp32,8,0,224,sgd,1,,,,10,f,https://x,n\n";
  CHECK_THROWS_WITH_AS(parse_published_csv("id,model\n", "p.csv"), doctest::Contains("p.csv:1: header"),
                       FormatError);
  CHECK_THROWS_WITH_AS(parse_published_csv(kHeader + row + row, "p.csv"),
                       "p.csv:3: field 'id' = 'a' repeats an earlier row's id", FormatError);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,resnet18,v100-16gb,1,fp32,8,0,224,sgd,1,,,,0,f,u,n\n", "p.csv"),
      "p.csv:2: field 'samples_per_s' = '0' must be > 0", FormatError);
  // A subnormal or astronomic throughput ended the run in "metric 'error_pct' is inf"; a GPU count past
  // 2^31 was stored wrapped negative.
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,resnet18,v100-16gb,1,fp32,8,0,224,sgd,1,,,,1e-320,f,u,n\n", "p.csv"),
      "p.csv:2: field 'samples_per_s' = '1e-320' must be from 1e-6 to 1e12 samples/s", FormatError);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,resnet18,v100-16gb,2147483648,fp32,8,0,224,sgd,1,,,,5,f,u,n\n",
                          "p.csv"),
      "p.csv:2: field 'gpus_in_run' = '2147483648' must be from 1 to 2147483647", FormatError);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,resnet18,v100-16gb,1,fp32,0,0,224,sgd,1,,,,5,f,u,n\n", "p.csv"),
      "p.csv:2: field 'batch_size' = '0' must be >= 1", FormatError);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,resnet18,v100-16gb,1,fp32,8,0,224,sgd,0,,,,5,f,u,n\n", "p.csv"),
      "p.csv:2: field 'accumulation_steps' = '0' must be >= 1", FormatError);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,resnet18,v100-16gb,1,fp32,8,0,224,sgd,1,,,,5,f,,n\n", "p.csv"),
      "p.csv:2: field 'source_url' = '' must cite the measurement", FormatError);
  // A length histogram comes with the loader's bin and alignment, and a sequence length to bound it.
  const std::vector<PublishedThroughput> binned = parse_published_csv(
      kHeader + "a,M,bert-mini,a100-40gb,1,fp32,2,16,0,sgd,1,tiny_lengths.csv,8,4,5,f,u,n\n", "p.csv");
  CHECK(binned[0].length_histogram == "tiny_lengths.csv");
  CHECK(binned[0].length_bin_tokens == 8);
  CHECK(binned[0].length_align_tokens == 4);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,bert-mini,a100-40gb,1,fp32,2,16,0,sgd,1,h.csv,,4,5,f,u,n\n",
                          "p.csv"),
      "p.csv:2: field 'length_bin_tokens' = '' is not an integer", FormatError);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,bert-mini,a100-40gb,1,fp32,2,0,0,sgd,1,h.csv,8,4,5,f,u,n\n",
                          "p.csv"),
      "p.csv:2: field 'seq_len' = '0' must be >= 1 with a length_histogram", FormatError);
  CHECK_THROWS_WITH_AS(
      parse_published_csv(kHeader + "a,M,bert-mini,a100-40gb,1,fp32,2,16,0,sgd,1,,64,,5,f,u,n\n", "p.csv"),
      "p.csv:2: field 'length_bin_tokens' = '64' must be empty without a length_histogram", FormatError);
}

TEST_CASE("a published row with an unknown zoo model or GPU is refused before anything runs") {
  test::TempDir dir("published");
  {
    std::ofstream(dir / "bad.csv") << kHeader
                                   << "a,M,resnet5,v100-16gb,1,fp32,8,0,224,sgd,1,,,,10,f,https://x,n\n";
  }
  const ExperimentSpec spec =
      parse_spec("name = \"b\"\ntitle = \"B\"\nkind = \"published\"\n[sweep]\npublished = \"bad.csv\"\n",
                 "s.toml", dir.path());
  CHECK_THROWS_WITH_AS(plan_experiment(spec, nullptr, {}), doctest::Contains("zoo_model = 'resnet5'"),
                       UnknownNameError);
}

TEST_CASE(
    "published rows equal a direct simulation of each configuration; calibrated only where calibrated") {
  test::TempDir dir("published");
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const ExperimentSpec spec = read_spec(kDir + "tiny_fidelity.toml");
  const ExperimentPlan plan = plan_experiment(spec, nullptr, {});
  // r18 on v100-16gb (a shipped profile): 2 sources x 2 host modes; bert-base on a100-40gb (none): 1 x 2.
  CHECK(plan.tasks.size() == 2);
  CHECK(plan.rows == 6);
  RunnerOptions options;
  options.jobs = 2;
  run_experiment(spec, db, options);
  const std::vector<StoredExperimentRow> rows = db.experiment_rows("tiny_fidelity");
  REQUIRE(rows.size() == 6);
  for (const StoredExperimentRow& r : rows) {
    const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
    CAPTURE(c.dump());
    const bool resnet = c.at("model") == "resnet18";
    const Direct d = resnet ? direct("resnet18", 32, 0, 224, "amp-fp16", "sgd", "v100-16gb",
                                     c.at("cost_source"), c.at("host_mode"))
                            : direct("bert-base", 8, 128, 0, "tf32", "adam", "a100-40gb", c.at("cost_source"),
                                     c.at("host_mode"));
    const sim::Prediction& p = d.p;
    const double samples = resnet ? 32.0 : 8.0;
    const double published = resnet ? 2000.0 : 400.5;
    // bert-base accumulates 4 micro-batches: each pays the step less its optimizer, and a quarter of it.
    const double micro_ns = resnet ? static_cast<double>(p.step_time_ns)
                                   : static_cast<double>(p.step_time_ns - d.optimizer_ns) +
                                         static_cast<double>(d.optimizer_ns) / 4;
    if (!resnet) CHECK(d.optimizer_ns > 0);
    CHECK(r.row.metric("step_time_ns") == static_cast<double>(p.step_time_ns));
    CHECK(r.row.metric("optimizer_ns") == (resnet ? 0.0 : static_cast<double>(d.optimizer_ns)));
    CHECK(*r.row.metric("predicted_samples_per_s") == doctest::Approx(samples * 1e9 / micro_ns));
    CHECK(r.row.metric("published_samples_per_s") == published);
    CHECK(*r.row.metric("error_pct") ==
          doctest::Approx(100.0 * (samples * 1e9 / micro_ns - published) / published));
    CHECK(r.row.metric("host_busy_ns") == static_cast<double>(p.host_busy_ns));
    CHECK(r.row.metric("peak_bytes") == static_cast<double>(p.peak_bytes));
    CHECK(r.row.feasible == !p.oom);
    CHECK(r.run.prediction.has_value());
    if (!resnet) CHECK(c.at("cost_source") == "analytic");
  }
  // The host timeline only adds waiting: eager is never faster than the GPU alone.
  std::map<std::string, double> none_ns;
  for (const StoredExperimentRow& r : rows) {
    const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
    if (c.at("host_mode") == "none")
      none_ns[c.at("published_id").get<std::string>() + c.at("cost_source").get<std::string>()] =
          *r.row.metric("step_time_ns");
  }
  for (const StoredExperimentRow& r : rows) {
    const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
    if (c.at("host_mode") == "eager")
      CHECK(*r.row.metric("step_time_ns") >=
            none_ns.at(c.at("published_id").get<std::string>() + c.at("cost_source").get<std::string>()));
  }
  const std::string csv = csv_text(experiment_table(spec, db));
  CHECK(csv.find("published_id,model,batch_size,seq_len,image_size,precision,optimizer,gpu,gpus_in_run,"
                 "cost_source,host_mode,series,feasible") == 0);
}

TEST_CASE("a binned row is priced at each padded length, weighted by its share of batches") {
  test::TempDir dir("published");
  const std::string histogram = kDir + "tiny_lengths.csv";
  {
    // The binned row's CSV in a folder of its own, naming its histogram relative to that folder.
    std::filesystem::create_directories(dir / "data");
    std::filesystem::copy_file(histogram, dir / "data" / "lengths.csv");
    std::ofstream(dir / "data" / "binned.csv") << kHeader << "b,M,bert-mini,a100-40gb,1,fp32,2,16,0,adam,4,"
                                               << "lengths.csv,8,4,100,f,https://x,n\n";
    std::ofstream(dir / "long.csv") << kHeader << "b,M,bert-mini,a100-40gb,1,fp32,2,12,0,adam,1," << histogram
                                    << ",8,4,100,f,https://x,n\n";
    std::ofstream(dir / "vision.csv") << kHeader << "b,M,resnet18,a100-40gb,1,fp32,2,16,224,sgd,1,"
                                      << histogram << ",8,4,100,f,https://x,n\n";
  }
  const auto spec_of = [&](const std::string& csv) {
    return parse_spec("name = \"b\"\ntitle = \"B\"\nkind = \"published\"\n[sweep]\npublished = \"" + csv +
                          "\"\ncost_sources = [\"analytic\"]\nhost_modes = [\"none\"]\n",
                      "s.toml", dir.path());
  };
  // tiny_lengths.csv in bins of 8, aligned to 4, batches of 2 (tests/test_padded_lengths.cpp):
  // 4 tokens for 1/16 of batches, 8 for 3/16, 12 for 1/12, 16 for 2/3.
  const std::vector<std::pair<int64_t, double>> shares = {
      {4, 1.0 / 16}, {8, 3.0 / 16}, {12, 1.0 / 12}, {16, 2.0 / 3}};
  double micro_ns = 0, step_ns = 0;
  for (const auto& [tokens, share] : shares) {
    const Direct d = direct("bert-mini", 2, tokens, 0, "fp32", "adam", "a100-40gb", "analytic", "none");
    // Each length's micro-batch pays its step less the optimizer, and a quarter of the optimizer.
    micro_ns += share * (static_cast<double>(d.p.step_time_ns - d.optimizer_ns) + d.optimizer_ns / 4.0);
    step_ns += share * static_cast<double>(d.p.step_time_ns);
  }
  ResultsDb db = ResultsDb::open(dir / "r.db");
  const ExperimentSpec spec = spec_of("data/binned.csv");
  run_experiment(spec, db, {});
  const std::vector<StoredExperimentRow> rows = db.experiment_rows("b");
  REQUIRE(rows.size() == 1);
  const auto& r = rows.front().row;
  CHECK(*r.metric("predicted_samples_per_s") == doctest::Approx(2 * 1e9 / micro_ns));
  CHECK(*r.metric("step_time_ns") == doctest::Approx(step_ns));
  CHECK(*r.metric("mean_seq_len") == doctest::Approx(4.0 / 16 + 8 * 3.0 / 16 + 12.0 / 12 + 16 * 2.0 / 3));
  CHECK(r.metric("padded_lengths") == 4.0);
  CHECK(rows.front().run.prediction->step_time_ns == std::llround(step_ns));
  // The 16-token sequences do not fit a row of 12.
  CHECK_THROWS_WITH_AS(plan_experiment(spec_of("long.csv"), nullptr, {}),
                       doctest::Contains("holds sequences of 16 tokens, more than its seq_len = 12"), Error);
  // A model without a sequence length has no lengths to pad.
  CHECK_THROWS_WITH_AS(plan_experiment(spec_of("vision.csv"), nullptr, {}),
                       doctest::Contains("zoo model 'resnet18' takes no sequence length"), Error);
}

TEST_CASE("an edited length histogram is a new configuration") {
  // The histogram was keyed by its path: after an edit the rows stayed "already stored" with the old
  // lengths (DTR logs are keyed by their content too).
  test::TempDir dir("published");
  {
    std::ofstream(dir / "pub.csv")
        << kHeader << "bm,M,bert-mini,a100-40gb,1,fp32,8,16,0,adam,1,hist.csv,4,4,400.5,f,u,n\n";
    std::ofstream(dir / "hist.csv") << "length,sequences\n4,1\n7,1\n12,2\n16,4\n";
  }
  const ExperimentSpec spec =
      parse_spec("name = \"h\"\ntitle = \"H\"\nkind = \"published\"\n[sweep]\npublished = \"pub.csv\"\n",
                 "s.toml", dir.path());
  const auto config = [&] { return plan_experiment(spec, nullptr, {}).tasks.at(0).configs.at(0); };
  const nlohmann::json before = config();
  CHECK(before.at("length_histogram") == "hist.csv");
  std::ofstream(dir / "hist.csv") << "length,sequences\n16,8\n";
  const nlohmann::json after = config();
  CHECK(after.at("length_histogram_hash") != before.at("length_histogram_hash"));
  CHECK(config_hash(after) != config_hash(before));
}
