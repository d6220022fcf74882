#include "experiments/records.hpp"

#include "sim/prediction.hpp"

namespace mutwo::experiments {

std::optional<double> ExperimentRowRecord::metric(std::string_view name) const {
  for (const Metric& m : metrics) {
    if (m.name == name) return m.value;
  }
  return std::nullopt;
}

PredictionRecord prediction_record(const sim::Prediction& prediction, int64_t samples_per_step) {
  PredictionRecord out;
  out.step_time_ns = prediction.step_time_ns;
  out.peak_bytes = prediction.peak_bytes;
  out.resident_bytes = prediction.resident_bytes;
  out.compute_stall_ns = prediction.compute_stall_ns;
  out.recompute_ns = prediction.recompute_ns;
  out.bytes_swapped_out = prediction.bytes_swapped_out;
  out.bytes_swapped_in = prediction.bytes_swapped_in;
  out.memory_limit_bytes = prediction.memory_limit_bytes;
  out.samples_per_step = samples_per_step;
  out.oom = prediction.oom;
  out.oom_message = prediction.oom_message;
  return out;
}

}  // namespace mutwo::experiments
