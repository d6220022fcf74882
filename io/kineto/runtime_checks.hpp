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
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/runtime_trace.hpp"
#include "support/error.hpp"

namespace mutwo::io::kineto {

inline constexpr int64_t kClockSkewNs = 1'000'000;

// A call of the window as the trace has it: its event index and its "args.correlation".
struct CallOrigin {
  size_t event = 0;
  int64_t correlation = 0;
};

// ns as the trace's microseconds ("12.5"); whole ones past 2^53 ns, where epoch times read as
// doubles (us x 1000) hold no finer time.
inline std::string trace_us(int64_t ns) {
  uint64_t a = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (a > (uint64_t{1} << 53)) a = (a + 500) / 1000 * 1000;
  std::string s = fmt::format("{}{}", ns < 0 ? "-" : "", a / 1000);
  if (a % 1000 != 0) {
    s += fmt::format(".{:03}", a % 1000);
    while (s.back() == '0') s.pop_back();
  }
  return s;
}

// Throws FormatError for the first rule `t` breaks (t0: the window's start in the trace's ns).
inline void check_runtime_window(const ir::RuntimeTrace& t, const std::vector<CallOrigin>& origins,
                                 int64_t t0, bool one_device) {
  auto call_label = [&](size_t c) {
    return fmt::format("event {} '{}', correlation {}", origins[c].event, t.calls[c].name,
                       origins[c].correlation);
  };
  auto fail = [&](const ir::DeviceWork& w, const std::string& what) {
    throw FormatError(fmt::format("{}: event {} ('{}'): {}", t.source, w.event, w.name, what));
  };
  for (size_t c = 0; c < t.calls.size(); ++c) {
    const ir::RuntimeCall& call = t.calls[c];
    for (const int32_t k : call.work) {
      const ir::DeviceWork& w = t.work[static_cast<size_t>(k)];
      if (w.start_ns < call.start_ns - kClockSkewNs)
        fail(w, fmt::format("field 'ts' = {} us, {} us before its launch ({}) began at {} us; device work "
                            "starts after its launch (up to {} us earlier is taken for clock skew)",
                            trace_us(w.start_ns + t0), trace_us(call.start_ns - w.start_ns), call_label(c),
                            trace_us(call.start_ns + t0), trace_us(kClockSkewNs)));
    }
    if (call.work.size() > 1 && call.name.find("LaunchKernel") != std::string::npos &&
        call.name.find("MultiDevice") == std::string::npos) {
      const ir::DeviceWork& first = t.work[static_cast<size_t>(call.work[0])];
      fail(t.work[static_cast<size_t>(call.work[1])],
           fmt::format("field 'args.correlation' = {} is also event {}'s ('{}'): its launch ({}) starts one "
                       "kernel",
                       origins[c].correlation, first.event, first.name, call_label(c)));
    }
  }
  if (!one_device) return;
  // Per stream (and for the device: index streams.size()), the work by when its launch returned,
  // with the latest end so far.
  struct Done {
    int64_t launched = 0;
    int64_t end = 0;
    size_t work = 0;
  };
  std::vector<std::vector<Done>> done(t.streams.size() + 1);
  for (size_t k = 0; k < t.work.size(); ++k) {
    const ir::DeviceWork& w = t.work[k];
    if (w.call < 0) continue;  // its launch may be missing from the trace (a sampled one): when is unknown
    const ir::RuntimeCall& launch = t.calls[static_cast<size_t>(w.call)];
    const Done d{launch.start_ns + launch.duration_ns, w.start_ns + w.duration_ns, k};
    done[static_cast<size_t>(w.stream)].push_back(d);
    done.back().push_back(d);
  }
  for (std::vector<Done>& list : done) {
    std::sort(list.begin(), list.end(), [](const Done& a, const Done& b) { return a.launched < b.launched; });
    for (size_t i = 1; i < list.size(); ++i) {
      if (list[i].end < list[i - 1].end) {
        list[i].end = list[i - 1].end;
        list[i].work = list[i - 1].work;
      }
    }
  }
  for (size_t c = 0; c < t.calls.size(); ++c) {
    const ir::RuntimeCall& call = t.calls[c];
    const bool device = call.kind == ir::RuntimeCallKind::device_sync;
    if (!device && !(call.kind == ir::RuntimeCallKind::stream_sync && call.stream >= 0)) continue;
    const std::vector<Done>& list = done[device ? t.streams.size() : static_cast<size_t>(call.stream)];
    const auto it = std::lower_bound(list.begin(), list.end(), call.start_ns,
                                     [](const Done& d, int64_t at) { return d.launched < at; });
    if (it == list.begin()) continue;
    const Done& last = *(it - 1);
    const int64_t returned = call.start_ns + call.duration_ns;
    if (last.end > returned + kClockSkewNs)
      fail(t.work[last.work],
           fmt::format(
               "ends at {} us ('ts' + 'dur'), {} us after the {} sync ({}) that waited for it returned at "
               "{} us; a sync returns once the work launched before it has ended",
               trace_us(last.end + t0), trace_us(last.end - returned), device ? "device" : "stream",
               call_label(c), trace_us(returned + t0)));
  }
}

}  // namespace mutwo::io::kineto
