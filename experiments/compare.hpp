#pragma once
// Predicted against measured step time and peak memory, per stored run and summarised: how far the
// simulator is from the device (`mutwo compare`).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/records.hpp"

namespace mutwo::experiments {

// One run's figures side by side. A side that is absent or ran out of memory has no numbers; the
// status says why.
struct CompareRow {
  int64_t run_id = 0;
  std::string kind;   // the run's kind: "run", "simulate", "profile"
  std::string label;  // "bert-base x4 [2,2] capuchin on cuda:0 NVIDIA H100 80GB HBM3"
  std::optional<int64_t> predicted_step_ns;
  std::optional<int64_t> measured_step_ns;
  std::optional<int64_t> predicted_peak_bytes;
  std::optional<int64_t> measured_peak_bytes;
  // (predicted - measured) / measured; nullopt unless both sides have the figure and measured > 0.
  std::optional<double> step_rel_error;
  std::optional<double> peak_rel_error;
  bool predicted_oom = false;
  bool measured_oom = false;
  // "ok"; "predicted OOM", "measured OOM", "both OOM"; "no prediction", "no measurement",
  // "measured OOM, no prediction", "predicted OOM, no measurement"; "nothing stored" (neither side).
  std::string status;
};

// Absolute relative errors of one figure over the compared runs.
struct ErrorSummary {
  int count = 0;            // runs with this error; median and max are 0 when count is 0
  double median_abs = 0.0;  // median of |error|
  double max_abs = 0.0;     // largest |error|
};

struct CompareSummary {
  int runs = 0;      // rows in the report
  int compared = 0;  // rows with status "ok": both sides stored, neither out of memory
  ErrorSummary step;
  ErrorSummary peak;
};

struct CompareReport {
  std::vector<CompareRow> rows;  // in the order of the runs given
  CompareSummary summary;
};

// Compares each run's prediction with its measurement. Only runs with both and no OOM on either
// side ("ok") contribute to the summary; an OOM is reported in the status, never as a number.
CompareReport compare_runs(const std::vector<StoredRun>& runs);

// The label of a run: model, x count, [partition], policy, "on" device; empty parts left out.
std::string run_label(const RunRecord& run);

// support::median with the mean of the two middle values for an even count; 0 for no values.
double median(std::vector<double> values);

}  // namespace mutwo::experiments
