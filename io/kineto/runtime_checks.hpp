#pragma once
// The consistency rules of a runtime window read from a PyTorch profiler trace (io/kineto_runtime.hpp,
// read_kineto_runtime): a trace that breaks one is refused with a FormatError naming the source, the
// event's index and name, the field and its value, since its replay would be a wrong number. Internal
// to the Kineto importer.
//
// Kineto stamps host calls and device work on two clocks it aligns (CUPTI's, or roctracer's with one
// offset for the whole trace), so real traces hold small skews: work starts before its launch call
// has returned (by up to 44 us in tests/fixtures/kineto), and NCCL kernels launched back to back on
// H100 have been reported a little before their cuLaunchKernelEx began (pytorch/kineto#1380). The
// rules leave kClockSkewNs (1 ms) for that, far more than any fixture needs (each starts its work >= 4 us
// after the launch began, and its syncs return >= 4 us after the work they wait for has ended):
// - device work starts no earlier than kClockSkewNs before its launch call begins;
// - a kernel launch call (a name holding "LaunchKernel", not "MultiDevice") launches one kernel;
//   a graph launch (or a copy) may launch many;
// - a device sync, and a stream sync whose stream the trace names, returns (+ kClockSkewNs) only
//   once the work launched before it (its launch call, in the window, returned before the sync
//   began) has ended; checked when the window's work runs on one device (a device sync waits for
//   its device only).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/runtime_trace.hpp"

namespace mutwo::io::kineto {

inline constexpr int64_t kClockSkewNs = 1'000'000;

// A call of the window as the trace has it: its event index and its "args.correlation".
struct CallOrigin {
  size_t event = 0;
  int64_t correlation = 0;
};

// ns as the trace's microseconds ("12.5"); whole ones past 2^53 ns, where epoch times read as
// doubles (us x 1000) hold no finer time.
std::string trace_us(int64_t ns);

// Throws FormatError for the first rule `t` breaks (t0: the window's start in the trace's ns).
void check_runtime_window(const ir::RuntimeTrace& t, const std::vector<CallOrigin>& origins, int64_t t0,
                          bool one_device);

}  // namespace mutwo::io::kineto
