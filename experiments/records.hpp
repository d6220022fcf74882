#pragma once
// The rows of the results database as plain structs: what was run, what the simulator predicted,
// what the executor measured, and per-op times. Units are in the names.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mutwo::sim {
struct Prediction;
}

namespace mutwo::experiments {

// What was run (table runs). Text fields that do not apply stay "" and numbers 0.
struct RunRecord {
  int64_t id = 0;          // assigned by ResultsDb::insert; ignored on insert
  std::string kind;        // "run" (measured + predicted), "simulate" or "profile"
  std::string created_at;  // ISO-8601 UTC "2026-11-23T03:00:00Z"; filled on insert when empty
  std::string model;       // array description: "bert-base", or a schedule file name
  int32_t models = 0;      // models in the array
  std::string partition;   // sub-array sizes: "2,2"
  std::string policy;      // "none", "capuchin", ...
  int64_t batch_size = 0;  // per model
  int64_t seq_len = 0;
  int64_t image_size = 0;
  std::string dtype;                 // "fp32"
  std::string optimizer;             // "adam"
  std::string device;                // where it executed: "cpu", "cuda:0 NVIDIA H100 80GB HBM3"
  std::string gpu;                   // catalog device of the prediction: "h100-sxm-80gb"
  int64_t memory_limit_bytes = 0;    // 0 = none
  double memory_cap_fraction = 0.0;  // allocator cap as a fraction of the device, 0 = none
  std::string cost_source;           // "analytic", "calibrated", "measured"
  std::string mutwo_version;         // build_info's mutwo_version()
  std::string git_revision;          // build_info's git_revision()
  std::string config_hash;           // hash of the full configuration (sweeps skip what is present)
  std::string schedule_hash;         // hash of the schedule JSON that ran
  std::string notes;

  bool operator==(const RunRecord&) const = default;
};

// The simulator's figures for the run's schedule and device (table predictions; sim::Prediction).
struct PredictionRecord {
  int64_t step_time_ns = 0;  // at OOM: the time the simulation stopped
  int64_t peak_bytes = 0;
  int64_t resident_bytes = 0;
  int64_t compute_stall_ns = 0;
  int64_t recompute_ns = 0;
  int64_t bytes_swapped_out = 0;
  int64_t bytes_swapped_in = 0;
  int64_t memory_limit_bytes = 0;  // 0 = none
  int64_t samples_per_step = 0;
  bool oom = false;
  std::string oom_message;

  bool operator==(const PredictionRecord&) const = default;
};

// What the executor measured (table measurements).
struct MeasurementRecord {
  int64_t step_time_ns = 0;  // median of step_times_ns
  int64_t step_time_min_ns = 0;
  int64_t step_time_max_ns = 0;
  int32_t iterations = 0;              // timed iterations
  int32_t warmup_iterations = 0;       // untimed iterations before them
  std::vector<int64_t> step_times_ns;  // every timed iteration, in order
  int64_t peak_bytes = 0;
  std::string peak_source;  // "cuda_allocator" or "accounted"
  bool oom = false;
  std::string oom_message;
  std::vector<double> losses;  // per model, last timed iteration (NaN and infinities kept)
  int64_t samples_per_step = 0;

  bool operator==(const MeasurementRecord&) const = default;
};

// One op's time in a run (table op_times); op ids are those of the schedule's graph.
struct OpTimeRecord {
  int32_t op_id = 0;
  std::string op_name;
  std::string kind;   // op kind name: "linear", "linear_backward", ...
  std::string phase;  // "forward", "backward", "optimizer"
  int32_t width = 1;  // models fused in the op
  int64_t measured_ns = 0;
  int64_t predicted_ns = -1;  // -1 when unknown

  bool operator==(const OpTimeRecord&) const = default;
};

// A run as read back, with whatever was stored beside it.
struct StoredRun {
  RunRecord run;
  std::optional<PredictionRecord> prediction;
  std::optional<MeasurementRecord> measurement;

  bool operator==(const StoredRun&) const = default;
};

// An experiment spec as the runner registered it (table experiments): what plots need to draw it.
struct ExperimentRecord {
  std::string name;                  // "mutwo_throughput"
  std::string kind;                  // experiment kind: "strategies", "policies", "dtr", "measured"
  std::string title;                 // the figure title's first line
  std::vector<std::string> figures;  // figure names scripts/plot.py draws
  std::string spec_hash;             // content_hash of spec_toml
  std::string spec_toml;             // the spec's text, as read
  std::string updated_at;            // ISO-8601 UTC; filled on put when empty

  bool operator==(const ExperimentRecord&) const = default;
};

// One named figure of an experiment row (table experiment_metrics); units in the name.
struct Metric {
  std::string name;  // "step_time_ns", "swap_overlap_ratio"
  double value = 0;

  bool operator==(const Metric&) const = default;
};

// A run's place in an experiment (tables experiment_rows and experiment_metrics).
struct ExperimentRowRecord {
  std::string experiment;       // ExperimentRecord::name
  std::string series;           // the legend entry: strategy, policy or heuristic
  bool feasible = false;        // fits the memory limit (DTR: neither OOM nor over the remat limit)
  std::string config_json;      // canonical JSON of the configuration; runs.config_hash hashes it
  std::vector<Metric> metrics;  // stored sorted by name; read back in that order

  bool operator==(const ExperimentRowRecord&) const = default;
  // The value of a metric; nullopt when absent.
  std::optional<double> metric(std::string_view name) const;
};

// A stored run with its experiment row.
struct StoredExperimentRow {
  StoredRun run;
  ExperimentRowRecord row;

  bool operator==(const StoredExperimentRow&) const = default;
};

// The figures of a simulator Prediction that the database keeps. samples_per_step comes from the
// schedule (sum of sub-array widths x batch per model), which the Prediction does not hold.
PredictionRecord prediction_record(const sim::Prediction& prediction, int64_t samples_per_step);

}  // namespace mutwo::experiments
