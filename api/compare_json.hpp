#pragma once
// Predicted against measured step time and peak memory from a results database: what `mutwo
// compare` prints and `mutwo.results()` returns.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/compare.hpp"

namespace mutwo::api {

// The runs of `run_ids` (empty: every run with a step figure; profile runs hold op times) compared.
// Throws ResultsDbError for a missing or corrupt database and for a cell a comparison cannot trust
// (a wrong type or range, ResultsDb's readers; a measurement without OOM and a step time of 0),
// naming the table, the run, the column and the value; Error naming a run id it lacks, one < 1 or
// one given twice.
experiments::CompareReport compare_database(const std::string& db_path, const std::vector<int64_t>& run_ids);

// database, rows (run_id, kind, label, status, predicted/measured step and peak with their relative
// errors (predicted - measured) / measured, or null; predicted_oom, measured_oom), summary.
nlohmann::ordered_json compare_json(const experiments::CompareReport& report, const std::string& db_path);

}  // namespace mutwo::api
