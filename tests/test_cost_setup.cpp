// The one cost setup (costmodel/cost_setup.hpp) the command line and experiment specs share: the
// GPU (named, or a measured trace's, or the default), overrides, a source and the inputs its entry
// declares; a spec may name the measured source with its traces and prices exactly as
// `mutwo simulate --cost-source measured --trace FILE` does.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodel/cost_setup.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"
#include "experiments/runner.hpp"
#include "experiments/spec.hpp"
#include "io/trace_file.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using namespace mutwo;
using costmodel::CostSetup;
using mutwo::test::TempDir;

// Measured on "NVIDIA H100 80GB HBM3": its one relu took 2,500 ns (tests/fixtures/traces).
const std::string kTinyRelu = std::string(MUTWO_TEST_FIXTURES) + "/traces/tiny_relu_measured.json";

CostSetup measured(std::vector<std::string> traces) {
  CostSetup s;
  s.cost_source = "measured";
  s.trace_files = std::move(traces);
  return s;
}

// bert-mini (batch 4, Adam) alone: its training step, as the search and `mutwo simulate` build it.
ir::Graph bert_mini_step() {
  zoo::ModelConfig model;
  model.batch_size = 4;
  policies::StepGraphCache graphs({{"bert-mini", 1, model}}, transforms::OptimizerConfig{});
  return graphs.get(0, 1);
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("the GPU is the one named, else a measured trace's, else the default") {
  CHECK(costmodel::make_cost_model(CostSetup{})->device().name == costmodel::kDefaultGpu);
  // The trace names an H100: with no GPU named the measured source predicts that device.
  CHECK(costmodel::make_cost_model(measured({kTinyRelu}))->device().name == "h100-sxm-80gb");
  CostSetup named = measured({kTinyRelu});
  named.gpu = "v100-16gb";
  CHECK(costmodel::make_cost_model(named)->device().name == "v100-16gb");
  CostSetup run = measured({});
  run.cost_source = "analytic";
  run.default_gpu = "a100-80gb";  // `mutwo run`: the executing device's catalog GPU
  CHECK(costmodel::make_cost_model(run)->device().name == "a100-80gb");
}

TEST_CASE("overrides apply to the resolved device") {
  CostSetup s;
  s.gpu = "a100-40gb";
  s.overrides.memory_bytes = int64_t{1} << 30;
  s.overrides.half_duplex = true;
  const auto model = costmodel::make_cost_model(s);
  CHECK(model->device().memory_bytes == int64_t{1} << 30);
  CHECK_FALSE(model->device().full_duplex);
}

TEST_CASE("inputs are checked against what the source's entry declares") {
  CostSetup s = measured({kTinyRelu});
  s.cost_source = "analytic";
  CHECK_THROWS_WITH_AS(costmodel::make_cost_model(s),
                       "--trace is read only by --cost-source measured; cost source 'analytic' ignores it",
                       Error);
  s.traces_name = "'sweep.traces'";
  CHECK_THROWS_WITH_AS(costmodel::check_cost_setup(s), doctest::Contains("'sweep.traces' is read only by"),
                       Error);
  CHECK_THROWS_WITH_AS(costmodel::make_cost_model(measured({})),
                       "cost source 'measured' needs at least one measured trace (--trace FILE)", Error);
  CHECK_THROWS_WITH_AS(costmodel::make_cost_model(measured({"nowhere.json"})),
                       "cannot open trace file 'nowhere.json'", Error);
  CostSetup unknown;
  unknown.cost_source = "roofline";
  CHECK_THROWS_WITH_AS(costmodel::make_cost_model(unknown),
                       "unknown cost source 'roofline'; valid: waves, analytic, measured, calibrated",
                       UnknownNameError);
  // calibrated on a GPU with no profile shipped or given says which have one.
  CostSetup uncalibrated;
  uncalibrated.cost_source = "calibrated";
  CHECK_THROWS_WITH_AS(costmodel::make_cost_model(uncalibrated),
                       doctest::Contains("no calibration profile for device 'a100-40gb' (shipped: gtx1080ti, "
                                         "h200, p100-pcie-16gb, t4, titan-xp, v100-16gb)"),
                       Error);
  CostSetup profile_to_analytic;
  profile_to_analytic.profile_files = {"v100.json"};
  CHECK_THROWS_WITH_AS(
      costmodel::check_cost_setup(profile_to_analytic),
      "--profile is read only by --cost-source measured, calibrated; cost source 'waves' ignores it", Error);
}

TEST_CASE("a trace is read once, whatever path or hard link names it") {
  TempDir dir("cost-setup-links");
  std::filesystem::copy_file(kTinyRelu, dir / "relu.json");
  std::filesystem::create_hard_link(dir / "relu.json", dir / "same_inode.json");
  std::filesystem::copy_file(kTinyRelu, dir / "copy.json");
  const std::string relu = (dir / "relu.json").string();
  const std::string linked = (dir / "same_inode.json").string();
  CHECK_THROWS_WITH_AS(
      costmodel::check_cost_setup(measured({relu, linked})),
      fmt::format("--trace '{}' is given already as '{}'; give each file once", linked, relu).c_str(), Error);
  // A copy is another file (it may be another GPU's run of the same model): both are read.
  CHECK_NOTHROW(costmodel::check_cost_setup(measured({relu, (dir / "copy.json").string()})));
}

TEST_CASE("the measured source describes its coverage through the interface") {
  const auto model = costmodel::make_cost_model(measured({kTinyRelu}));
  const ir::Trace trace = io::trace_from_json(nlohmann::json::parse(std::ifstream(kTinyRelu)));
  CHECK(model->describe(trace.graph) == "measured (1 of 1 ops from 1 trace on NVIDIA H100 80GB HBM3)");
  CostSetup analytic;
  analytic.cost_source = "analytic";
  CHECK(costmodel::make_cost_model(analytic)->describe(trace.graph) == "analytic");
  // The default source says what it is and what it covers.
  CHECK(costmodel::make_cost_model(CostSetup{})
            ->describe(trace.graph)
            .rfind("waves (kernel model fitted ", 0) == 0);
}

TEST_CASE("a spec prices with the measured source and its traces as `mutwo simulate --trace` does") {
  TempDir dir("cost-setup");
  // Every op of bert-mini's step measured 1,000 ns on an H100.
  ir::Trace trace;
  trace.graph = bert_mini_step();
  trace.op_duration_ns.assign(trace.graph.ops.size(), 1000);
  trace.device = "NVIDIA H100 80GB HBM3";
  io::write_trace(trace, dir / "bert-mini.json");
  const auto ops = static_cast<int64_t>(trace.graph.ops.size());

  // What `mutwo simulate --model bert-mini --batch 4 --cost-source measured --trace bert-mini.json`
  // computes: the same setup, the plain schedule, one op after another -> ops x 1,000 ns.
  const auto cost = costmodel::make_cost_model(measured({(dir / "bert-mini.json").string()}));
  CHECK(cost->device().name == "h100-sxm-80gb");
  const sim::Prediction simulated =
      sim::simulate(policies::build_plain_schedule({trace.graph}), *cost, sim::SimOptions{});
  CHECK(simulated.step_time_ns == ops * 1000);

  // The spec names the trace relative to its own folder.
  write_text(dir / "spec.toml",
             "name = \"measured_cost\"\n"
             "title = \"Measured cost source\"\n"
             "kind = \"strategies\"\n"
             "figures = [\"breakdown\"]\n"
             "[sweep]\n"
             "models = [{ name = \"bert-mini\", batch_sizes = [4] }]\n"
             "model_counts = [2]\n"
             "gpus = [\"h100-sxm-80gb\"]\n"
             "strategies = [\"sequential\"]\n"
             "cost_source = \"measured\"\n"
             "traces = [\"bert-mini.json\"]\n"
             "host_mode = \"none\"\n");  // GPU time alone, as simulated above
  const experiments::ExperimentSpec spec = experiments::read_spec((dir / "spec.toml").string());
  experiments::ResultsDb db = experiments::ResultsDb::open(dir / "r.db");
  experiments::RunnerOptions options;
  options.jobs = 1;
  experiments::run_experiment(spec, db, options);
  const std::vector<experiments::StoredExperimentRow> rows = db.experiment_rows("measured_cost");
  REQUIRE(rows.size() == 1);
  const nlohmann::json config = nlohmann::json::parse(rows[0].row.config_json);
  CHECK(config["cost_source"] == "measured");
  CHECK(config["traces"] == nlohmann::json::array({"bert-mini.json"}));  // as the spec names it
  CHECK(rows[0].run.run.cost_source == "measured");
  // sequential: the two models one after another, each the simulated step above.
  CHECK(rows[0].row.metric("step_time_ns") == static_cast<double>(2 * simulated.step_time_ns));
}

TEST_CASE("a spec's traces are checked against its cost source before anything runs") {
  TempDir dir("cost-setup");
  const std::string head =
      "name = \"t\"\ntitle = \"T\"\nkind = \"strategies\"\n[sweep]\n"
      "models = [{ name = \"bert-mini\", batch_sizes = [4] }]\nmodel_counts = [1]\ngpus = [\"a100-40gb\"]\n"
      "strategies = [\"sequential\"]\n";
  const auto plan = [&](const std::string& sweep) {
    return experiments::plan_experiment(experiments::parse_spec(head + sweep, "spec.toml", dir.path()),
                                        nullptr, {});
  };
  CHECK_THROWS_WITH_AS(
      plan("traces = [\"x.json\"]\n"),
      "spec.toml: 'sweep.traces' is read only by cost source measured; 'sweep.cost_source' = "
      "'waves' ignores it",
      Error);
  CHECK_THROWS_WITH_AS(plan("cost_source = \"measured\"\ntraces = [\"x.json\"]\n"),
                       doctest::Contains("spec.toml: 'sweep.traces' = 'x.json': no such file"), Error);
  CHECK_THROWS_WITH_AS(
      plan("cost_source = \"measured\"\n"),
      doctest::Contains("cost source 'measured' needs measured traces; name them in 'sweep.traces'"),
      UnknownNameError);
  // One trace by two paths: refused here, not by the first configuration once the database was made.
  write_text(dir / "relu.json", support::read_text_file(kTinyRelu));
  CHECK_THROWS_WITH_AS(
      plan("cost_source = \"measured\"\ntraces = [\"relu.json\", \"./relu.json\"]\n"),
      "spec.toml: 'sweep.traces' = './relu.json' is the file given already as 'relu.json'; give "
      "each file once",
      Error);
}
