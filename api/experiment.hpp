#pragma once
// An experiment spec's sweep run into a results database (experiments/runner.hpp): what `mutwo
// experiment` reports and `mutwo.experiment()` returns, with the spec's table.
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/experiment_kind.hpp"
#include "experiments/runner.hpp"
#include "experiments/spec.hpp"

namespace mutwo::api {

// experiment, kind, db, shard, tasks_total, tasks, tasks_skipped, tasks_run, rows_written,
// rows_present, interrupted, csv (the table's file; null when not written), elapsed_s.
nlohmann::json experiment_json(const experiments::ExperimentSpec& spec,
                               const experiments::RunnerReport& report, const std::string& db,
                               const std::string& shard, const std::string& csv);

// The spec's table (experiments::experiment_table) as one object per row, its header's names as keys
// and its cells as the CSV holds them (text).
nlohmann::ordered_json table_json(const experiments::CsvTable& table);

}  // namespace mutwo::api
