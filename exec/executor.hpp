#pragma once
// Measured runs of a Schedule on a device: `measure_schedule` (mutwo run: warm-up, then timed
// training steps; median step time, peak memory, losses) and `profile_schedule` (mutwo profile:
// per-op times over a few steps, as μ-TWO profiles, written as a measured trace that the
// simulator's `measured` cost source replays).
#include <cstdint>
#include <string>
#include <vector>

#include "profiles/schedule.hpp"
#include "profiles/trace_file.hpp"

namespace mutwo::exec {

struct RunOptions {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
  int32_t warmup_iterations = 3;
  int32_t timed_iterations = 20;
  uint64_t seed = 0;
  // Accounted cap on the step's tensors (interpreter.hpp): the CPU's way to emulate a smaller
  // device. 0: none.
  int64_t memory_limit_bytes = 0;
  // CUDA: cap the caching allocator at this fraction of the device's memory. 0: none.
  double memory_cap_fraction = 0.0;
  bool cuda_graph = false;  // capture one step as a CUDA graph after warm-up and replay it
};

struct Measurement {
  std::string device;  // product name: "cpu", "NVIDIA H100 80GB HBM3"
  bool oom = false;
  profiles::InstrId oom_instruction = profiles::kNoId;
  std::string oom_message;
  int32_t warmup_iterations = 0;
  int32_t iterations = 0;              // timed steps completed
  std::vector<int64_t> step_times_ns;  // one per timed step
  // Median of step_times_ns (an even count: the mean of the two middle values, rounded down).
  int64_t step_time_ns = 0;
  int64_t step_time_min_ns = 0;
  int64_t step_time_max_ns = 0;
  // The device allocator's peak over the timed steps (CUDA), else the accounted peak.
  int64_t peak_bytes = 0;
  std::string peak_source;  // "cuda_allocator" or "accounted"
  int64_t accounted_peak_bytes = 0;
  int64_t resident_bytes = 0;
  std::vector<double> first_losses;  // per model: the first step's losses
  std::vector<double> losses;        // per model: the last step's
  bool cuda_graph = false;           // the timed steps replayed a captured graph
};

// Runs warm-up + timed steps. An out-of-memory step ends the run with oom set (and whatever was
// timed before it); other errors throw mutwo::Error. Throws on bad options (iterations < 1, a cap
// outside (0, 1], a device this build cannot use).
Measurement measure_schedule(const profiles::Schedule& schedule, const RunOptions& options);

struct ProfileOptions {
  std::string device = "cpu";
  int32_t warmup_iterations = 1;
  int32_t measured_iterations = 3;
  uint64_t seed = 0;
};

// Per-op durations of the schedule's graph: every compute instruction timed on its own (CUDA
// events around it on the compute stream; wall clock on the CPU) in each measured step, the
// median per op (an odd count's middle; an even count's lower middle). Returns a trace of the
// schedule's graph with those durations and the device's product name. Throws mutwo::Error on OOM.
profiles::Trace profile_schedule(const profiles::Schedule& schedule, const ProfileOptions& options);

// The median as measure_schedule defines it; 0 for an empty list.
int64_t median_ns(std::vector<int64_t> values);

}  // namespace mutwo::exec
