#pragma once
// Hand-built results-database records for the compare suite and the CLI fixture database.
#include <cstdint>

#include "experiments/records.hpp"

namespace mutwo::test {

inline constexpr int64_t kMs = 1'000'000;
inline constexpr int64_t kGiB = int64_t{1} << 30;

inline experiments::PredictionRecord predicted(int64_t step_ns, int64_t peak_bytes, bool oom = false) {
  experiments::PredictionRecord p;
  p.step_time_ns = step_ns;
  p.peak_bytes = peak_bytes;
  p.oom = oom;
  if (oom) p.oom_message = "out of memory at instruction 3";
  return p;
}

// One timed step of step_ns (none when out of memory), the peak from the CUDA allocator.
inline experiments::MeasurementRecord measured(int64_t step_ns, int64_t peak_bytes, bool oom = false) {
  experiments::MeasurementRecord m;
  m.step_time_ns = step_ns;
  m.step_time_min_ns = step_ns;
  m.step_time_max_ns = step_ns;
  m.iterations = oom ? 0 : 1;
  if (!oom) m.step_times_ns = {step_ns};
  m.peak_bytes = peak_bytes;
  m.peak_source = "cuda_allocator";
  m.oom = oom;
  if (oom) m.oom_message = "CUDA out of memory";
  return m;
}

}  // namespace mutwo::test
