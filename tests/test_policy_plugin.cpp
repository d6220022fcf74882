// A policy defined in one file registers itself (issue 33): tests/fixtures/plugins/fixture_policy.cpp
// is compiled into this test and nothing else names it, yet the built-in registry lists it at its
// rank, creates it and searches with it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "policies/policy_registry.hpp"
#include "policies/search.hpp"

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
