// A policy, a strategy and a server scheme, each defined in one file, register themselves (issue 33):
// tests/fixtures/plugins/fixture_{policy,strategy,scheme}.cpp are compiled into this test and nothing
// else names them, yet the built-in registries list them at their ranks and the search and the
// server engine run them.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/server_catalog.hpp"
#include "policies/layer_packs.hpp"
#include "policies/policy_registry.hpp"
#include "policies/search.hpp"
#include "policies/server_schemes.hpp"
#include "policies/strategy.hpp"
#include "sim/server_simulator.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;

TEST_CASE("a policy in one file joins the built-in registry at its rank") {
  std::vector<std::string> names = policies::builtin_policies().names();
  if (!names.empty() && names.back() == "checkmate") names.pop_back();  // built with COIN-OR CBC
  CHECK(names == std::vector<std::string>{"none", "checkpoint", "vdnn", "capuchin", "mutwo", "fixture", "dtr",
                                          "dtr-eqclass"});
  CHECK(policies::builtin_policies().create("fixture")->name() == "fixture");
  CHECK(policies::builtin_policies().find("fixture").citation == "tests/fixtures/plugins");
}

TEST_CASE("the search plans with the plugin policy like any other") {
  const costmodel::AnalyticCostModel cost(costmodel::find_device("a100-40gb"));
  const auto mutwo_rows = [&](const std::string& policy) {
    policies::SearchConfig config;
    zoo::ModelConfig model;
    model.batch_size = 2;
    config.architectures = {{"bert-mini", 2, model}};
    config.cost = &cost;
    config.policies = {policy};
    config.memory_limit_bytes = 1024;  // below every plan's peak, so that the policies run
    std::vector<std::string> rows;
    for (const policies::SearchRow& row : policies::run_search(config).rows) {
      if (row.strategy != "mutwo") continue;
      CHECK(row.policy == policy);
      rows.push_back(row.partition + " " + std::to_string(row.step_time_ns) + " " +
                     std::to_string(row.peak_bytes));
    }
    return rows;
  };
  // The fixture keeps the base schedule: the same plans (infeasible here) as none, partition for
  // partition.
  const std::vector<std::string> fixture = mutwo_rows("fixture");
  CHECK(fixture.size() == 2);  // bert-mini:2 and bert-mini:1+1
  CHECK(fixture == mutwo_rows("none"));
}

TEST_CASE("a strategy in one file joins the registry at its rank and the search's rows") {
  CHECK(policies::builtin_strategies().names() ==
        std::vector<std::string>{"sequential", "hfta", "hfta+capuchin", "fused-all", "mutwo"});
  const costmodel::AnalyticCostModel cost(costmodel::find_device("a100-40gb"));
  policies::SearchConfig config;
  zoo::ModelConfig model;
  model.batch_size = 2;
  config.architectures = {{"bert-mini", 2, model}};
  config.cost = &cost;
  config.policies = {"none"};
  std::map<std::string, int> rows;
  int64_t hfta_ns = -1;
  int64_t fused_all_ns = -2;
  for (const policies::SearchRow& row : policies::run_search(config).rows) {
    ++rows[row.strategy];
    if (row.strategy == "hfta") hfta_ns = row.step_time_ns;
    if (row.strategy == "fused-all") {
      CHECK(row.partition == "bert-mini:2");
      fused_all_ns = row.step_time_ns;
    }
  }
  // One row per baseline (rows are ranked by throughput, not by strategy); the search's own rows
  // are its partitions, bert-mini:2 and bert-mini:1+1.
  CHECK(rows == std::map<std::string, int>{
                    {"sequential", 1}, {"hfta", 1}, {"hfta+capuchin", 1}, {"fused-all", 1}, {"mutwo", 2}});
  // 40 GB holds both models fused: hfta makes the same one group, so the same step.
  CHECK(hfta_ns > 0);
  CHECK(fused_all_ns == hfta_ns);
}

TEST_CASE("a server scheme in one file builds and replays like the built-in ones") {
  std::vector<std::string> names;
  for (const policies::ServerSchemeInfo& s : policies::builtin_server_schemes().schemes())
    names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"dp", "dp-swap", "harmony-dp", "harmony-dp-p2p", "pp", "pp-swap",
                                          "harmony-pp", "solo"});
  const costmodel::AnalyticCostModel cost(costmodel::find_device("gtx1080ti"));
  zoo::ModelConfig config;
  config.batch_size = 2;
  transforms::OptimizerConfig adam;
  adam.kind = transforms::OptimizerKind::adam;
  const ir::Graph step = transforms::build_training_step(zoo::build_model("bert-mini", config), adam);
  const policies::PackedModel packed = policies::pack_training_step(step, cost, 4);
  const costmodel::ServerSpec server = costmodel::find_server("4x-gtx1080ti");
  const ir::ServerSchedule s = policies::build_server_schedule("solo", packed, server, {1, 2});
  const sim::ServerPrediction p = sim::simulate_server(s, server);
  // One chain of compute tasks: the step is their sum (two micro-batches' forward and backward, one
  // update), nothing is copied.
  int64_t expected = 0;
  for (const policies::LayerPack& k : packed.packs)
    expected += 2 * (k.forward_ns + k.backward_ns) + k.update_ns;
  CHECK(p.step_time_ns == expected);
  CHECK(p.gpus[0].bytes_to_host == 0);
  CHECK(policies::expected_volumes("solo", packed, {1, 2}).swap_weights == 0);
}
