#pragma once
// A PyTorch profiler trace replayed at the CUDA-runtime level with its what-ifs (sim/runtime_replay.hpp,
// sim/runtime_other_gpu.hpp): what `mutwo replay-trace` prints and `mutwo.replay()` returns.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/runtime_trace.hpp"
#include "sim/runtime_other_gpu.hpp"
#include "sim/runtime_replay.hpp"

namespace mutwo::api {

struct ReplayTraceRequest {
  std::string trace;                      // the profiler trace's path (.json or .json.gz)
  std::optional<int64_t> step;            // the ProfilerStep replayed; nullopt: the last complete one
  bool all = false;                       // report every step's error, their mean and spread
  double kernel_speedup = 2.0;            // the what-if "kernels k x faster"
  std::vector<std::string> what_if_gpus;  // the work moved to each of these GPUs (names or device files)
  std::string what_if_source = "waves";   // ... priced by this source where the trace has shapes
  std::string trace_gpu;  // the catalog GPU the trace ran on, when its deviceProperties do not say
};

// The what-if "work moved to another GPU", with what each rule covered.
struct OtherGpuRun {
  std::string gpu;
  sim::OtherGpuWork work;
};

struct ReplayTraceResult {
  std::string source;  // the trace's file name
  bool all = false;
  ir::RuntimeTrace trace;
  // The replay first, then the what-ifs: host infinitely fast, CUDA graph (when the GPU the trace
  // ran on is known), kernels k x faster, collectives without their wait (when it has any), one per
  // GPU moved to.
  std::vector<sim::RuntimeReplay> runs;
  std::vector<OtherGpuRun> other_gpus;
  std::vector<double> step_errors;  // per step: (replayed - profiled) / profiled
  double mean_error = 0;
  double spread = 0;  // the largest distance of a step's error from the mean
};

// Throws FormatError for a file that is not a trace (naming the event and field), Error for a step it
// lacks, UnknownNameError for an unknown GPU or pricing source.
ReplayTraceResult replay_trace(const ReplayTraceRequest& request);

// trace, replay {window, annotated, profiled_step_ns, calls, device_work, streams, device,
// replayed_step_ns, error, breakdown, what_ifs, moved_to_gpus when asked}, steps, and with `all`
// mean_error and spread.
nlohmann::ordered_json replay_trace_json(const ReplayTraceResult& result);

}  // namespace mutwo::api
