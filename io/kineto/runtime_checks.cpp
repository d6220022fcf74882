// The consistency rules of a runtime window (io/kineto/runtime_checks.hpp says which and why).
#include "io/kineto/runtime_checks.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::io::kineto {

std::string trace_us(int64_t ns) {
  uint64_t a = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (a > (uint64_t{1} << 53)) a = (a + 500) / 1000 * 1000;
  std::string s = fmt::format("{}{}", ns < 0 ? "-" : "", a / 1000);
  if (a % 1000 != 0) {
    s += fmt::format(".{:03}", a % 1000);
    while (s.back() == '0') s.pop_back();
  }
  return s;
}

void check_runtime_window(const ir::RuntimeTrace& t, const std::vector<CallOrigin>& origins, int64_t t0,
                          bool one_device) {
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
