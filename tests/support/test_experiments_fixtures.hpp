#pragma once
// Fixtures shared by tests/test_experiments.cpp and tests/test_experiment_kinds.cpp.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "experiments/csv_file.hpp"
#include "experiments/db_merge.hpp"
#include "experiments/experiment_kind.hpp"
#include "experiments/results_db.hpp"
#include "experiments/runner.hpp"
#include "experiments/spec.hpp"
#include "policies/search.hpp"
#include "sim/host_mode.hpp"
#include "support/error.hpp"
#include "tests/support/temp_dir.hpp"

namespace {

using namespace mutwo;
using namespace mutwo::experiments;
using mutwo::test::TempDir;

inline const std::string kFixtures = std::string(MUTWO_TEST_FIXTURES) + "/experiments/";

inline ExperimentSpec spec_text(const std::string& text) {
  return parse_spec(text, "spec.toml", ".");
}

// A valid strategies spec with `extra` appended to its [sweep] table.
inline std::string strategies_spec(const std::string& extra = "") {
  return "name = \"t\"\n"
         "title = \"T\"\n"
         "kind = \"strategies\"\n"
         "figures = [\"breakdown\"]\n"
         "[sweep]\n"
         "models = [{ name = \"bert-mini\", batch_sizes = [4] }]\n"
         "model_counts = [2]\n"
         "gpus = [\"a100-40gb\"]\n"
         "strategies = [\"hfta\"]\n" +
         extra;
}

inline std::string csv_of(const ExperimentSpec& spec, const ResultsDb& db) {
  return csv_text(experiment_table(spec, db));
}

// The row of `series` whose config holds every key of `where` with its value.
inline const StoredExperimentRow& row_where(const std::vector<StoredExperimentRow>& rows,
                                            const nlohmann::json& where, const std::string& series) {
  for (const StoredExperimentRow& r : rows) {
    const nlohmann::json c = nlohmann::json::parse(r.row.config_json);
    bool match = r.row.series == series;
    for (const auto& [key, value] : where.items()) match = match && c.at(key) == value;
    if (match) return r;
  }
  FAIL("no row with ", where.dump(), " and series ", series);
  return rows.front();
}

inline RunnerOptions jobs(int n) {
  RunnerOptions o;
  o.jobs = n;
  return o;
}

}  // namespace
