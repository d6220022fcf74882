#pragma once
// An execution trace (io/execution_trace.hpp) has dataflow and sizes but no times; a profiler
// trace of the same step has times but no dataflow. Joined, each op of the execution trace's graph
// gets its measured duration (`--trace et.json --trace profile.json`):
// - Kineto traces: a cpu_op's "External id" is the record-function id (rf_id) of the execution
//   trace's node. On a GPU trace an op's duration is the GPU time of the kernels and copies its
//   nodes launched (each found through its launch's correlation id and the innermost cpu_op around
//   that launch), its host time the cpu_op's span; on a CPU trace, its duration is the cpu_op's span.
// - The legacy profiler's event array (PyTorch built without Kineto, as Debian's 1.13 is) has no
//   ids: the k-th op of a name matches the k-th outermost event of that name in start order (an
//   event with "::" in its name inside no other such event, nor inside Optimizer.zero_grad), and
//   every op's name must occur as often in both.
// An op the profiler trace does not have is refused, as is a pair whose counts differ: they are
// not the same step.
#include <filesystem>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "io/trace_import_result.hpp"

namespace mutwo::io {

// Fills `et.trace.op_duration_ns` (and device, op_host_ns on a GPU trace) from the profiler trace
// `profile` (a Chrome-trace object with "traceEvents" or the legacy event array). Throws
// FormatError naming both sources and the first op that does not match.
void join_profiler_trace(TraceImport& et, const nlohmann::json& profile, std::string_view et_source,
                         std::string_view profile_source);

// join_profiler_trace with the profiler trace read from a file (gzipped or not); clears
// et.needs_profile.
void join_profiler_file(TraceImport& et, const std::filesystem::path& profile_path,
                        std::string_view et_source);

// Reads both files (gzipped or not) and joins them; the first must be an execution trace.
TraceImport import_execution_trace_pair(const std::filesystem::path& et_path,
                                        const std::filesystem::path& profile_path);

}  // namespace mutwo::io
