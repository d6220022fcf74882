// The runtime replay's dependencies (sim/runtime_replay_deps.hpp; the rules: sim/runtime_replay.hpp).
#include "sim/runtime_replay_deps.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "sim/runtime_replay.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

namespace mutwo::sim {
namespace {

using ir::RuntimeCall;
using ir::RuntimeCallKind;
using ir::RuntimeTrace;
using Plan = ReplayDeps;

constexpr int64_t kUnknown = kUnknownNs;
// A launch call held by a full queue: at least this much over its name's median, with at least
// this many launches pending (CUDA's queue holds about 1,024).
constexpr int64_t kHeldNs = 10'000;
constexpr int64_t kPendingForFullQueue = 64;
// A host thread idle this long was waiting for another thread (autograd's engine threads wait for
// backward(); the main thread waits in backward() for them).
constexpr int64_t kWakeNs = 100'000;

int64_t trace_end(const RuntimeTrace& t, int32_t w) {
  const ir::DeviceWork& d = t.work[static_cast<size_t>(w)];
  return d.start_ns + d.duration_ns;
}

int64_t launched_ns(const RuntimeTrace& t, int32_t w) {  // work launched before the window: long before
  const ir::DeviceWork& d = t.work[static_cast<size_t>(w)];
  return d.call < 0 ? kUnknown : t.calls[static_cast<size_t>(d.call)].start_ns;
}

// The last work on `stream` launched by a call that started before `before_ns` (trace times), -1
// none. A stream's work is in launch order (ir/runtime_trace.hpp), so a binary search.
int32_t last_launched_before(const RuntimeTrace& t, const std::vector<std::vector<int32_t>>& by_stream,
                             int32_t stream, int64_t before_ns) {
  const std::vector<int32_t>& list = by_stream[static_cast<size_t>(stream)];
  const auto it = std::partition_point(list.begin(), list.end(),
                                       [&](int32_t w) { return launched_ns(t, w) < before_ns; });
  return it == list.begin() ? -1 : *(it - 1);
}

// The first work on `stream` launched by a call that started after `after_ns`, -1 none.
int32_t first_launched_after(const RuntimeTrace& t, const std::vector<std::vector<int32_t>>& by_stream,
                             int32_t stream, int64_t after_ns) {
  const std::vector<int32_t>& list = by_stream[static_cast<size_t>(stream)];
  const auto it = std::partition_point(list.begin(), list.end(),
                                       [&](int32_t w) { return launched_ns(t, w) <= after_ns; });
  return it == list.end() ? -1 : *it;
}

// Launch calls held by a full launch queue: a call much longer than its name's median that returned
// while many launches were pending waited for a slot, which the start of earlier work freed.
void mark_queue_holds(const RuntimeTrace& t, Plan& p) {
  std::map<std::string, std::vector<int64_t>> by_name;
  for (const RuntimeCall& c : t.calls) by_name[c.name].push_back(c.duration_ns);
  std::map<std::string, int64_t> usual;
  for (auto& [name, ds] : by_name) usual[name] = support::median(ds, support::EvenMedian::lower_middle);
  std::vector<int64_t> launches, starts;
  std::vector<int32_t> by_start;  // work launched in the window, by start
  for (size_t w = 0; w < t.work.size(); ++w) {
    const ir::DeviceWork& d = t.work[w];
    launches.push_back(launched_ns(t, static_cast<int32_t>(w)));
    starts.push_back(d.start_ns);
    by_start.push_back(static_cast<int32_t>(w));
  }
  std::sort(launches.begin(), launches.end());
  std::sort(starts.begin(), starts.end());
  std::sort(by_start.begin(), by_start.end(), [&](int32_t a, int32_t b) {
    return t.work[static_cast<size_t>(a)].start_ns < t.work[static_cast<size_t>(b)].start_ns;
  });
  for (size_t c = 0; c < t.calls.size(); ++c) {
    const RuntimeCall& call = t.calls[c];
    p.usual_ns[c] = usual[call.name];
    if (p.blocks[c] != 0 || call.kind == RuntimeCallKind::device_sync ||
        call.kind == RuntimeCallKind::stream_sync || call.kind == RuntimeCallKind::event_sync)
      continue;
    if (call.duration_ns < 2 * p.usual_ns[c] || call.duration_ns - p.usual_ns[c] < kHeldNs) continue;
    const auto pending =
        (std::lower_bound(launches.begin(), launches.end(), call.start_ns) - launches.begin()) -
        (std::lower_bound(starts.begin(), starts.end(), call.start_ns) - starts.begin());
    if (pending < kPendingForFullQueue) continue;
    const int64_t call_end = call.start_ns + call.duration_ns;
    auto it = std::upper_bound(by_start.begin(), by_start.end(), call_end, [&](int64_t v, int32_t w) {
      return v < t.work[static_cast<size_t>(w)].start_ns;
    });
    while (it != by_start.begin()) {
      --it;
      const ir::DeviceWork& d = t.work[static_cast<size_t>(*it)];
      if (d.start_ns < call.start_ns) break;
      if (launched_ns(t, *it) < call.start_ns) {
        p.released_by[c] = *it;
        p.after_release_ns[c] = call_end - d.start_ns;
        ++p.held;
        break;
      }
    }
  }
}

void mark_wakes(const RuntimeTrace& t, Plan& p) {
  p.woken_by.assign(t.calls.size(), -1);
  if (t.threads.size() < 2) return;
  std::vector<int32_t> by_end(t.calls.size());
  for (size_t c = 0; c < t.calls.size(); ++c) by_end[c] = static_cast<int32_t>(c);
  auto end_of = [&](int32_t c) {
    return t.calls[static_cast<size_t>(c)].start_ns + t.calls[static_cast<size_t>(c)].duration_ns;
  };
  std::sort(by_end.begin(), by_end.end(), [&](int32_t a, int32_t b) { return end_of(a) < end_of(b); });
  std::vector<int64_t> thread_end(t.threads.size(), 0);
  for (size_t c = 0; c < t.calls.size(); ++c) {  // calls are by thread, each thread's in order
    const RuntimeCall& call = t.calls[c];
    const auto th = static_cast<size_t>(call.thread);
    const bool first = c == 0 || t.calls[c - 1].thread != call.thread;
    const int64_t idle = call.start_ns - (first ? 0 : thread_end[th]);
    thread_end[th] = call.start_ns + call.duration_ns;
    if (first || idle < kWakeNs) continue;
    auto it = std::upper_bound(by_end.begin(), by_end.end(), call.start_ns,
                               [&](int64_t v, int32_t x) { return v < end_of(x); });
    // The waker hands over: its thread's last call before this one, after which that thread idles
    // past this call's start for kWakeNs or more (a backward() hand-off), ended while this thread idled.
    const int64_t idle_from = call.start_ns - idle;
    while (it != by_end.begin()) {
      --it;
      const auto x = static_cast<size_t>(*it);
      if (end_of(*it) < idle_from) break;
      if (t.calls[x].thread == call.thread) continue;
      const bool last_of_thread = x + 1 == t.calls.size() || t.calls[x + 1].thread != t.calls[x].thread;
      const int64_t next_start =
          last_of_thread ? std::numeric_limits<int64_t>::max() : t.calls[x + 1].start_ns;
      if (next_start > call.start_ns && next_start - end_of(*it) >= kWakeNs) {
        p.woken_by[c] = *it;
        break;
      }
    }
  }
}

}  // namespace

Plan derive_replay_deps(const RuntimeTrace& t) {
  const size_t nw = t.work.size();
  const size_t nc = t.calls.size();
  Plan p;
  p.pred.assign(nw, -1);
  p.offset_ns.assign(nw, 0);
  p.dep.assign(nw, -1);
  p.awaits.assign(nc, {});
  p.residual_ns.assign(nc, 0);
  p.blocks.assign(nc, 0);
  p.released_by.assign(nc, -1);
  p.usual_ns.assign(nc, 0);
  p.after_release_ns.assign(nc, 0);
  std::vector<std::vector<int32_t>> by_stream(t.streams.size());
  for (size_t w = 0; w < nw; ++w) {
    const ir::DeviceWork& d = t.work[w];
    if (d.stream < 0 || static_cast<size_t>(d.stream) >= t.streams.size())
      throw Error(fmt::format("runtime replay: work {} ('{}') is on stream {}, not one of the {} streams", w,
                              d.name, d.stream, t.streams.size()));
    if (d.call >= static_cast<int32_t>(nc))
      throw Error(fmt::format("runtime replay: work {} ('{}') names call {} of {}", w, d.name, d.call, nc));
    auto& s = by_stream[static_cast<size_t>(d.stream)];
    if (!s.empty()) p.pred[w] = s.back();
    s.push_back(static_cast<int32_t>(w));
  }
  // Recorded cross-stream waits: the first work launched on the waiting stream after the wait.
  for (size_t c = 0; c < nc; ++c) {
    const RuntimeCall& call = t.calls[c];
    if (call.kind != RuntimeCallKind::stream_wait_event || call.record < 0 || call.stream < 0) continue;
    const RuntimeCall& rec = t.calls[static_cast<size_t>(call.record)];
    if (rec.stream < 0) continue;
    const int32_t pos = last_launched_before(t, by_stream, rec.stream, rec.start_ns);
    if (pos < 0) continue;
    const int32_t w = first_launched_after(t, by_stream, call.stream, call.start_ns);
    if (w < 0) continue;
    if (p.dep[static_cast<size_t>(w)] < 0 || trace_end(t, pos) > trace_end(t, p.dep[static_cast<size_t>(w)]))
      p.dep[static_cast<size_t>(w)] = pos;
    ++p.recorded;
  }
  // Work launched before the window starts at its traced start where its stream was idle before it
  // (or it is the stream's first), else right after the work before it (offset_ns holds that
  // earliest start).
  for (size_t w = 0; w < nw; ++w) {
    const ir::DeviceWork& d = t.work[w];
    if (d.call >= 0) continue;
    const bool idle_before = p.pred[w] < 0 || d.start_ns - trace_end(t, p.pred[w]) > kWaitSlackNs;
    p.offset_ns[w] = idle_before ? d.start_ns : kUnknown;
  }
  // Launch delays: exact where the stream was idle before the work, else the median of those.
  std::vector<int64_t> idle_delays;
  for (size_t w = 0; w < nw; ++w) {
    const ir::DeviceWork& d = t.work[w];
    if (d.call < 0) continue;
    const int64_t call_start = t.calls[static_cast<size_t>(d.call)].start_ns;
    const int64_t call_end = call_start + t.calls[static_cast<size_t>(d.call)].duration_ns;
    const bool idle_before = p.pred[w] < 0 || d.start_ns - trace_end(t, p.pred[w]) > kWaitSlackNs;
    if (idle_before && d.start_ns >= call_start && d.start_ns - call_end <= 50'000)
      idle_delays.push_back(d.start_ns - call_start);
  }
  // A delay really measured: the lower middle.
  const int64_t typical =
      idle_delays.empty() ? 0 : support::median(idle_delays, support::EvenMedian::lower_middle);
  ;
  // Work sorted by trace end, for inferring waits.
  std::vector<int32_t> by_end(nw);
  for (size_t w = 0; w < nw; ++w) by_end[w] = static_cast<int32_t>(w);
  std::sort(by_end.begin(), by_end.end(),
            [&](int32_t a, int32_t b) { return trace_end(t, a) < trace_end(t, b); });
  const bool has_records =
      p.recorded > 0 || std::any_of(t.calls.begin(), t.calls.end(), [](const RuntimeCall& c) {
        return c.kind == RuntimeCallKind::stream_wait_event && c.record >= 0;
      });
  for (size_t w = 0; w < nw; ++w) {
    const ir::DeviceWork& d = t.work[w];
    if (d.call < 0) continue;
    const int64_t call_start = t.calls[static_cast<size_t>(d.call)].start_ns;
    const int64_t call_end = call_start + t.calls[static_cast<size_t>(d.call)].duration_ns;
    const int64_t delay = std::max<int64_t>(0, d.start_ns - call_start);
    int64_t explained = p.pred[w] < 0 ? kUnknown : trace_end(t, p.pred[w]);
    if (p.dep[w] >= 0) explained = std::max(explained, trace_end(t, p.dep[w]));
    if (explained != kUnknown &&
        d.start_ns - explained <= kWaitSlackNs) {  // its stream (or a recorded wait) held it
      p.offset_ns[w] = std::min(delay, typical);
      continue;
    }
    if (!has_records && d.start_ns - call_end > kWaitSlackNs) {
      // Launched well before, its stream idle: it waited for work on another stream. The latest
      // work elsewhere that ended at or just before its start (a stream_wait_event the trace does
      // not detail).
      auto it = std::upper_bound(by_end.begin(), by_end.end(), d.start_ns,
                                 [&](int64_t v, int32_t x) { return v < trace_end(t, x); });
      while (it != by_end.begin()) {
        --it;
        if (d.start_ns - trace_end(t, *it) > kWaitSlackNs) break;
        if (t.work[static_cast<size_t>(*it)].stream != d.stream) {
          p.dep[w] = *it;
          ++p.inferred;
          break;
        }
      }
      if (p.dep[w] >= 0) {
        p.offset_ns[w] = std::min(delay, typical);
        continue;
      }
    }
    p.offset_ns[w] = delay;  // the launch (or something the trace does not show) held it
  }
  // Blocking calls and what they wait for.
  for (size_t c = 0; c < nc; ++c) {
    const RuntimeCall& call = t.calls[c];
    std::vector<int32_t> waits;
    switch (call.kind) {
      case RuntimeCallKind::device_sync:
        for (size_t s = 0; s < by_stream.size(); ++s) {
          const int32_t w = last_launched_before(t, by_stream, static_cast<int32_t>(s), call.start_ns);
          if (w >= 0) waits.push_back(w);
        }
        break;
      case RuntimeCallKind::stream_sync:
        for (size_t s = 0; s < by_stream.size(); ++s) {
          if (call.stream >= 0 && static_cast<int32_t>(s) != call.stream) continue;
          const int32_t w = last_launched_before(t, by_stream, static_cast<int32_t>(s), call.start_ns);
          if (w >= 0) waits.push_back(w);
        }
        break;
      case RuntimeCallKind::event_sync:
        if (call.record >= 0) {
          const RuntimeCall& rec = t.calls[static_cast<size_t>(call.record)];
          if (rec.stream >= 0) {
            const int32_t w = last_launched_before(t, by_stream, rec.stream, rec.start_ns);
            if (w >= 0) waits.push_back(w);
          }
        }
        break;
      case RuntimeCallKind::launch:
        if (call.blocking) waits = call.work;
        break;
      default:
        break;
    }
    const bool blocking = call.kind == RuntimeCallKind::device_sync ||
                          call.kind == RuntimeCallKind::stream_sync ||
                          (call.kind == RuntimeCallKind::event_sync && call.record >= 0) ||
                          (call.kind == RuntimeCallKind::launch && call.blocking);
    if (!blocking) continue;
    p.blocks[c] = 1;
    int64_t waited_end = kUnknown;
    for (const int32_t w : waits) waited_end = std::max(waited_end, trace_end(t, w));
    p.awaits[c] = std::move(waits);
    p.residual_ns[c] =
        std::max<int64_t>(0, call.start_ns + call.duration_ns - std::max(call.start_ns, waited_end));
  }
  mark_queue_holds(t, p);
  mark_wakes(t, p);
  return p;
}

int64_t traced_end_ns(const RuntimeTrace& t, int32_t w) {
  return trace_end(t, w);
}

}  // namespace mutwo::sim
