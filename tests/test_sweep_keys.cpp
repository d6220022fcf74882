// The sweep-key table (experiments/sweep_keys.hpp), read by the spec reader, `mutwo experiment --help`
// and the kinds' CSV tables: every key a kind accepts is in it once, and the tables' config columns
// come from it.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/experiment_kind.hpp"
#include "experiments/kinds/array_point.hpp"
#include "experiments/spec.hpp"
#include "experiments/sweep_keys.hpp"
#include "support/error.hpp"

using namespace mutwo;

namespace {

// A valid strategies spec with `extra` appended to its [sweep] table.
experiments::ExperimentSpec strategies_spec(const std::string& extra = "") {
  return experiments::parse_spec(
      "name = \"t\"\ntitle = \"T\"\nkind = \"strategies\"\nfigures = [\"breakdown\"]\n[sweep]\n"
      "models = [{ name = \"bert-mini\", batch_sizes = [4] }]\nmodel_counts = [2]\ngpus = [\"a100-40gb\"]\n"
      "strategies = [\"hfta\"]\n" +
          extra,
      "spec.toml", ".");
}

}  // namespace

TEST_CASE("every sweep key a kind accepts is declared once in the key table, with its help") {
  std::vector<std::string_view> names;
  for (const experiments::SweepKeyInfo& k : experiments::sweep_key_table()) {
    CAPTURE(k.name);
    CHECK_FALSE(k.help.empty());
    CHECK(std::find(names.begin(), names.end(), k.name) == names.end());
    names.push_back(k.name);
  }
  for (const auto& kind : experiments::builtin_experiment_kinds().kinds()) {
    for (std::string_view key : kind->sweep_keys()) {
      CAPTURE(kind->name());
      CAPTURE(key);
      CHECK(experiments::find_sweep_key(key) != nullptr);
    }
  }
  CHECK(experiments::find_sweep_key("no_such_key") == nullptr);
}

TEST_CASE("a table's config columns come from the key table, optional ones only when the spec sets them") {
  const std::vector<std::string_view> keys = {"models",         "model_counts",  "lean_ops",  "gpus",
                                              "host_link_gbps", "memory_limits", "strategies"};
  CHECK(experiments::sweep_columns(strategies_spec(), keys) ==
        std::vector<std::string>{"model", "batch_size", "models", "gpu", "memory_limit_bytes", "strategy"});
  CHECK(experiments::sweep_columns(
            strategies_spec("lean_ops = [\"none\", \"tempo\"]\nhost_link_gbps = [16.0]\n"), keys) ==
        std::vector<std::string>{"model", "batch_size", "models", "lean_ops", "gpu", "host_link_gbps",
                                 "memory_limit_bytes", "strategy"});
  // Keys that tell no row apart give no column.
  CHECK(experiments::sweep_columns(strategies_spec(), {"traces", "iterations"}).empty());
  CHECK_THROWS_WITH_AS(experiments::sweep_columns(strategies_spec(), {"model"}),
                       "sweep columns: 'model' is not a sweep key", Error);
}

TEST_CASE("a row without a column reads the column's absent cell") {
  const nlohmann::json plain = {{"model", "bert-mini"}, {"batch_size", 4}, {"memory_fraction", 0.5}};
  CHECK(experiments::config_cells(plain, {"model", "batch_size", "lean_ops", "memory_fraction", "gpu"}) ==
        std::vector<std::string>{"bert-mini", "4", "none", "0.5", ""});
  CHECK(experiments::absent_cell("lean_ops") == "none");
  CHECK(experiments::absent_cell("gpu") == "");
}
