// The runtime-level replay (sim/runtime_replay.hpp has the rules).
#include "sim/runtime_replay.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "support/error.hpp"
#include "support/median.hpp"

#include "sim/runtime_replay_deps.hpp"

namespace mutwo::sim {
namespace {

using ir::RuntimeCall;
using ir::RuntimeCallKind;
using ir::RuntimeTrace;
using Plan = ReplayDeps;
constexpr int64_t kUnknown = kUnknownNs;

}  // namespace

std::map<std::string, int64_t> collective_floors(const RuntimeTrace& trace) {
  std::map<std::string, int64_t> floors;
  for (const ir::DeviceWork& d : trace.work) {
    if (!d.collective) continue;
    auto [it, added] = floors.emplace(d.name, d.duration_ns);
    if (!added) it->second = std::min(it->second, d.duration_ns);
  }
  return floors;
}

RuntimeReplay replay_runtime(const RuntimeTrace& t, const RuntimeWhatIf& what_if) {
  // At most 1000 times slower, as a work scale: a traced day's kernel then still fits int64 ns (a
  // speed-up of 1e-300 used to wrap every kernel's time and report the step as faster).
  if (!(what_if.kernel_speedup >= 1e-3) || !std::isfinite(what_if.kernel_speedup))
    throw Error(fmt::format("runtime replay: kernel speed-up {} must be a number >= 0.001", what_if.kernel_speedup));
  if (what_if.work_scale != nullptr) {
    if (what_if.work_scale->size() != t.work.size())
      throw Error(fmt::format("runtime replay: {} work scales for {} pieces of device work",
                              what_if.work_scale->size(), t.work.size()));
    for (const double f : *what_if.work_scale) {
      if (!(f > 0) || !std::isfinite(f) || f > 1e3)
        throw Error(fmt::format("runtime replay: work scale {} must be a positive number up to 1000", f));
    }
  }
  const Plan p = derive_replay_deps(t);
  const bool graph = what_if.graph_node_ns >= 0;
  const bool host_free = what_if.host_free || graph;
  const size_t nw = t.work.size();
  const size_t nc = t.calls.size();
  const std::map<std::string, int64_t> own_floors = collective_floors(t);
  const std::map<std::string, int64_t>& floors =
      what_if.collective_floor_ns != nullptr ? *what_if.collective_floor_ns : own_floors;
  RuntimeReplay r;
  r.label = what_if.label;
  r.inferred_waits = p.inferred;
  r.recorded_waits = p.recorded;
  r.queue_held_calls = p.held;
  r.stream_busy_ns.assign(t.streams.size(), 0);
  r.stream_waiting_on_host_ns.assign(t.streams.size(), 0);

  std::vector<int64_t> duration(nw);
  std::vector<int64_t> above_floor_ns(nw, 0);  // collectives: traced time above the floor
  std::vector<int64_t> blocked_ns(nc, 0),
      held_ns(nc, 0);  // per call: waiting on the device, of it for a queue slot
  for (size_t w = 0; w < nw; ++w) {
    const ir::DeviceWork& d = t.work[w];
    int64_t ns = d.duration_ns;
    if (d.collective) {
      const auto f = floors.find(d.name);
      const int64_t floor = f != floors.end() ? std::min(f->second, ns) : ns;
      if (what_if.collectives_at_floor) ns = floor;
      above_floor_ns[w] = d.duration_ns - floor;
    } else if (!d.copy && what_if.kernel_speedup != 1.0) {
      ns = static_cast<int64_t>(std::llround(static_cast<double>(ns) / what_if.kernel_speedup));
    }
    if (what_if.work_scale != nullptr && !d.collective)
      ns = static_cast<int64_t>(std::llround(static_cast<double>(ns) * (*what_if.work_scale)[w]));
    duration[w] = ns;
  }

  // One pass in dependency order: each thread's calls and each stream's work advance while what
  // they wait for is known.
  std::vector<int64_t> call_start(nc, kUnknown), call_end(nc, kUnknown);
  struct Idle {
    size_t stream;
    int64_t from_ns, to_ns;
  };
  std::vector<Idle> idle_on_host;  // a stream idle until a launch
  std::vector<int64_t> start(nw, kUnknown), end(nw, kUnknown);
  std::vector<int8_t> work_binding(nw, 0);    // 0 launch, 1 stream, 2 other stream, 3 fixed
  std::vector<int32_t> call_binding(nc, -1);  // the awaited work that ended last, if it held the call
  std::vector<std::vector<int32_t>> thread_calls(t.threads.size());
  for (size_t c = 0; c < nc; ++c) {
    const int32_t th = t.calls[c].thread;
    if (th < 0 || static_cast<size_t>(th) >= t.threads.size())
      throw Error(fmt::format("runtime replay: call {} ('{}') is on thread {}, not one of the {} threads", c,
                              t.calls[c].name, th, t.threads.size()));
    thread_calls[static_cast<size_t>(th)].push_back(static_cast<int32_t>(c));
  }
  std::vector<int32_t> previous_call(nc, -1);  // the call before it on its thread
  for (const auto& list : thread_calls) {
    for (size_t i = 1; i < list.size(); ++i) previous_call[static_cast<size_t>(list[i])] = list[i - 1];
  }
  std::vector<std::vector<int32_t>> stream_work(t.streams.size());
  for (size_t w = 0; w < nw; ++w)
    stream_work[static_cast<size_t>(t.work[w].stream)].push_back(static_cast<int32_t>(w));
  std::vector<size_t> thread_cursor(thread_calls.size(), 0), stream_cursor(stream_work.size(), 0);
  std::vector<int64_t> thread_time(thread_calls.size(), 0), thread_trace_time(thread_calls.size(), 0);
  size_t done = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t th = 0; th < thread_calls.size(); ++th) {
      while (thread_cursor[th] < thread_calls[th].size()) {
        const auto c = static_cast<size_t>(thread_calls[th][thread_cursor[th]]);
        const RuntimeCall& call = t.calls[c];
        if (call_start[c] == kUnknown) {  // the call starts (and launches) before it may wait
          const int32_t waker = p.woken_by[c];
          if (waker >=
              0) {  // after idling: when what woke it ended, then the time the trace shows after that
            if (call_end[static_cast<size_t>(waker)] == kUnknown) break;
            const RuntimeCall& wc = t.calls[static_cast<size_t>(waker)];
            const int64_t after = host_free ? 0 : call.start_ns - (wc.start_ns + wc.duration_ns);
            call_start[c] = std::max(thread_time[th], call_end[static_cast<size_t>(waker)] + after);
          } else {
            call_start[c] = thread_time[th] + (host_free ? 0 : call.start_ns - thread_trace_time[th]);
          }
          progress = true;
        }
        const int64_t s = call_start[c];
        int64_t waited = kUnknown;
        int32_t last = -1;
        bool ready = true;
        for (const int32_t w : p.awaits[c]) {
          if (end[static_cast<size_t>(w)] == kUnknown) {
            ready = false;
            break;
          }
          if (end[static_cast<size_t>(w)] > waited) {
            waited = end[static_cast<size_t>(w)];
            last = w;
          }
        }
        const int32_t releaser = p.released_by[c];
        if (!ready || (releaser >= 0 && start[static_cast<size_t>(releaser)] == kUnknown)) break;
        int64_t e = 0;
        if (releaser >= 0) {  // held until earlier work started and freed a slot in the launch queue
          const int64_t usual = host_free ? 0 : p.usual_ns[c];
          e = std::max(s + usual,
                       start[static_cast<size_t>(releaser)] + (host_free ? 0 : p.after_release_ns[c]));
          blocked_ns[c] = e - (s + usual);
          held_ns[c] = blocked_ns[c];
        } else if (p.blocks[c] != 0) {
          const int64_t resumed = std::max(s, waited);
          if (waited > s) call_binding[c] = last;
          blocked_ns[c] = resumed - s;
          e = resumed + (host_free ? 0 : p.residual_ns[c]);
        } else {
          e = s + (host_free ? 0 : call.duration_ns);
        }
        call_end[c] = e;
        thread_time[th] = e;
        thread_trace_time[th] = call.start_ns + call.duration_ns;
        ++thread_cursor[th];
        ++done;
        progress = true;
      }
    }
    for (size_t s = 0; s < stream_work.size(); ++s) {
      while (stream_cursor[s] < stream_work[s].size()) {
        const auto w = static_cast<size_t>(stream_work[s][stream_cursor[s]]);
        const ir::DeviceWork& d = t.work[w];
        if (d.call >= 0 && call_start[static_cast<size_t>(d.call)] == kUnknown) break;
        if (p.dep[w] >= 0 && end[static_cast<size_t>(p.dep[w])] == kUnknown) break;
        const int64_t pred_end = p.pred[w] < 0 ? kUnknown : end[static_cast<size_t>(p.pred[w])];
        const int64_t dep_end = p.dep[w] < 0 ? kUnknown : end[static_cast<size_t>(p.dep[w])];
        int64_t st = 0;
        if (d.call <
            0) {  // launched before the window: held only by its stream, or where it idled, its traced start
          st = std::max(p.offset_ns[w], pred_end);
          work_binding[w] = p.offset_ns[w] >= pred_end ? 3 : 1;
        } else {
          // With no host time, only the part of the launch delay after the call returned remains.
          const RuntimeCall& launcher = t.calls[static_cast<size_t>(d.call)];
          const int64_t offset =
              host_free ? std::max<int64_t>(0, p.offset_ns[w] - launcher.duration_ns) : p.offset_ns[w];
          const int64_t launch = call_start[static_cast<size_t>(d.call)] + offset;
          const int64_t after_pred =
              pred_end == kUnknown || !graph ? pred_end : pred_end + what_if.graph_node_ns;
          st = std::max({launch, after_pred, dep_end});
          work_binding[w] = st == launch && launch > std::max(after_pred, dep_end) ? 0
                            : st == after_pred                                     ? 1
                                                                                   : 2;
          if (work_binding[w] == 0 && pred_end != kUnknown)
            idle_on_host.push_back({s, std::max(pred_end, dep_end), launch});
        }
        start[w] = st;
        end[w] = st + duration[w];
        ++stream_cursor[s];
        ++done;
        progress = true;
      }
    }
  }
  if (done != nc + nw)
    throw Error(fmt::format(
        "runtime replay of {}: {} of {} calls and work could not be placed (a wait on later work)", t.source,
        nc + nw - done, nc + nw));

  // Step boundaries: a trace time T on the main thread becomes the later of where the replayed
  // main thread is at T and the end of the work launched before T less its lag past T in the trace.
  const size_t main = static_cast<size_t>(t.main_thread);
  const std::vector<int32_t> no_calls;
  const std::vector<int32_t>& main_calls = main < thread_calls.size() ? thread_calls[main] : no_calls;
  auto host_at = [&](int64_t at) {
    // The main thread's last call that started at or before `at`.
    auto it = std::upper_bound(main_calls.begin(), main_calls.end(), at, [&](int64_t v, int32_t c) {
      return v < t.calls[static_cast<size_t>(c)].start_ns;
    });
    if (it == main_calls.begin()) return host_free ? int64_t{0} : at;
    const auto c = static_cast<size_t>(*(it - 1));
    const int64_t traced_end = t.calls[c].start_ns + t.calls[c].duration_ns;
    if (at >= traced_end) return call_end[c] + (host_free ? 0 : at - traced_end);
    return std::min(call_end[c], call_start[c] + (host_free ? 0 : at - t.calls[c].start_ns));
  };
  int32_t last_work = -1;
  auto device_at = [&](int64_t at) {
    int64_t traced = kUnknown;
    int64_t replayed = kUnknown;
    for (size_t k = 0; k < nw; ++k) {
      const ir::DeviceWork& d = t.work[k];
      if (d.call >= 0 && t.calls[static_cast<size_t>(d.call)].start_ns >= at) continue;
      traced = std::max(traced, d.start_ns + d.duration_ns);
      if (replayed == kUnknown || end[k] > replayed) {
        replayed = end[k];
        last_work = static_cast<int32_t>(k);
      }
    }
    if (replayed == kUnknown) return kUnknown;
    return replayed - std::max<int64_t>(0, traced - at);
  };
  auto boundary = [&](int64_t at) { return std::max(host_at(at), device_at(at)); };
  for (const ir::RuntimeStep& st : t.steps) {
    const int64_t from = boundary(st.start_ns);
    const int64_t to = boundary(st.end_ns);
    r.steps.push_back({st.name, st.end_ns - st.start_ns, to - from, from, to});
  }
  if (r.steps.empty()) throw Error(fmt::format("runtime replay of {}: the trace lists no step", t.source));
  const RuntimeReplay::Step& last = r.steps.back();
  r.step_ns = last.replayed_ns;
  r.host_end_ns = host_at(t.steps.back().end_ns);
  const int64_t device_end = device_at(t.steps.back().end_ns);
  r.device_end_ns = device_end == kUnknown ? 0 : device_end;
  // Busy and idle within the step replayed: work and gaps clipped to it.
  auto clipped = [&](int64_t from, int64_t to) {
    return std::max<int64_t>(0, std::min(to, last.end_ns) - std::max(from, last.start_ns));
  };
  for (size_t k = 0; k < nc; ++k) {
    if (call_start[k] < last.start_ns || call_start[k] >= last.end_ns) continue;
    r.host_blocked_ns += blocked_ns[k];
    r.queue_held_ns += held_ns[k];
  }
  for (size_t k = 0; k < nw; ++k) {
    r.stream_busy_ns[static_cast<size_t>(t.work[k].stream)] += clipped(start[k], start[k] + duration[k]);
    if (t.work[k].collective && start[k] >= last.start_ns && start[k] < last.end_ns) {
      r.collective_ns += duration[k];
      r.collective_wait_ns += above_floor_ns[k];
    }
  }
  for (const Idle& i : idle_on_host) r.stream_waiting_on_host_ns[i.stream] += clipped(i.from_ns, i.to_ns);

  // The critical path back from the last work (device-bound) or the main thread's last call: from
  // work to what held its start (its launch, the work before it, the work it waited for); from a
  // call's end to the work it waited for, else to its start; from a call's start to the call before
  // it (or the one that woke it).
  std::vector<RuntimeReplay::Span> path;
  int32_t w = r.device_end_ns >= r.host_end_ns ? last_work : -1;
  int32_t c = w < 0 && !main_calls.empty() ? main_calls.back() : -1;
  bool at_start = false;  // at call c's start rather than its end
  auto before = [&](size_t k) {
    const int32_t waker = p.woken_by[k];
    return waker >= 0 &&
                   call_start[k] >
                       (previous_call[k] < 0 ? kUnknown : call_end[static_cast<size_t>(previous_call[k])])
               ? waker
               : previous_call[k];
  };
  for (size_t guard = 0; guard < 2 * (nc + nw) + 2 && (w >= 0 || c >= 0); ++guard) {
    if (w >= 0) {
      const auto k = static_cast<size_t>(w);
      if (end[k] <= last.start_ns) break;  // the path of the step replayed only
      path.push_back({t.work[k].name, t.work[k].stream, duration[k]});
      const int32_t pred = p.pred[k];
      const int32_t dep = p.dep[k];
      switch (work_binding[k]) {
        case 0:
          c = t.work[k].call;
          at_start = true;
          w = -1;
          break;
        case 1:
          w = pred;
          break;
        case 2:
          w = dep >= 0 && (pred < 0 || end[static_cast<size_t>(dep)] >= end[static_cast<size_t>(pred)])
                  ? dep
                  : pred;
          break;
        default:
          w = -1;
          break;
      }
    } else {
      const auto k = static_cast<size_t>(c);
      if (call_end[k] <= last.start_ns) break;
      if (!at_start && call_binding[k] >= 0) {
        w = call_binding[k];
        c = -1;
      } else {
        c = before(k);
        at_start = false;
      }
    }
  }
  std::stable_sort(path.begin(), path.end(),
                   [](const auto& a, const auto& b) { return a.duration_ns > b.duration_ns; });
  if (path.size() > 10) path.resize(10);
  r.critical_path_top = std::move(path);
  r.work_start_ns = std::move(start);
  r.work_end_ns = std::move(end);
  r.call_start_ns = std::move(call_start);
  r.call_end_ns = std::move(call_end);
  return r;
}

}  // namespace mutwo::sim
