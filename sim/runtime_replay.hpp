#pragma once
// Replay of a profiled step at the CUDA-runtime level (ir/runtime_trace.hpp), with what-ifs
// (Daydream, Zhu et al., ATC 2020; HTA's critical path). Every time is a max over what it waits for,
// so the replay is one pass over the dependency graph in the order the trace ran (a max-plus
// evaluation); with no what-if it gives back the trace's own times, and a what-if moves them.
// Rules:
// - Host: each thread runs its calls in order; before each, the CPU time the trace shows since the
//   thread's previous call (since the window's start for its first); each call takes its measured
//   time. A call after 100 us or more of its thread's idling was waiting for another thread (the
//   autograd engine's threads for backward(), the main thread in backward() for them) when another
//   thread handed over to it: that thread's last call ended while this one idled and that thread
//   then idled for 100 us or more past this call's start. It starts when that call ends, plus the
//   time the trace shows between them (and not before its own thread's previous call has ended).
// - A call that blocks the host waits until the device work it waits for has ended, then takes
//   its residual: its measured end less the later of its start and the end of that work in the
//   trace (its own cost after the wait). device_sync waits for all work launched before it,
//   stream_sync for its stream's (all, if the trace does not say which), event_sync for the work
//   before its record, a blocking launch for its own work. An event_sync whose record is unknown
//   takes its measured time.
// - Device: each stream runs its work in launch order. Work starts at the latest of: its launch
//   (the call's start plus the delay the trace shows from call start to work start, when the
//   stream was idle before it; else at most the trace's median such delay), the end of the work
//   before it on its stream, and the work it waits for on other streams: the record of a
//   stream_wait_event issued before it on its stream, or, where the trace has no cuda_sync
//   events, the work on another stream that ended within kWaitSlackNs before it started when
//   nothing on its own stream or its launch explains its start (an inferred wait).
// - A launch call the trace shows held by a full launch queue (at least 2x and 10 us over its
//   name's median, with 64 or more launches pending) returns at the later of its usual time (the
//   median) and the start of the earlier work whose start freed its slot plus its time after it.
// - Work launched before the window keeps its traced start.
// - Steps: a step boundary (a ProfilerStep's start or end on the main thread, at trace time T) is
//   the later of where the replayed main thread is at T and the end of the work launched before T
//   less the lag that work had past T in the trace (what the next step inherits). A step is the
//   time between its boundaries, so that the replay of an unchanged trace gives its profiled steps;
//   the steps before the one replayed warm the replay up (a what-if's queue and lag settle).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/runtime_trace.hpp"

namespace mutwo::sim {

inline constexpr int64_t kWaitSlackNs =
    5'000;  // Kineto's resolution is 1 us; gaps between back-to-back kernels 1-4 us

struct RuntimeWhatIf {
  std::string label = "replay";
  // CPU time between calls and the calls' own time are 0 (syncs still wait); work starts after its
  // launch by only the part of its traced delay that came after its call returned.
  bool host_free = false;
  double kernel_speedup = 1.0;  // kernels (not copies, not collectives) this many times faster
  // Per device work (trace.work's order): its time times this, in (0, 1000] (collectives excepted);
  // null: none. The work moved to another GPU (sim/runtime_other_gpu.hpp).
  const std::vector<double>* work_scale = nullptr;
  // The step captured in a CUDA graph (>= 0): no host time, as host_free; the work launched in the
  // window starts this long after the work before it on its stream (a graph's per-node cost,
  // DeviceSpec::host.graph_kernel_ns), and no earlier than the call that launched it, with no host
  // time. Syncs still wait.
  int64_t graph_node_ns = -1;
  // Collectives at their floor: each at the shortest time a collective of its name took in the
  // floors given (over every step of the trace), or in the window when none are given.
  bool collectives_at_floor = false;
  const std::map<std::string, int64_t>* collective_floor_ns = nullptr;
};

struct RuntimeReplay {
  std::string label;
  struct Step {
    std::string name;
    int64_t profiled_ns = 0;
    int64_t replayed_ns = 0;
    int64_t start_ns = 0;  // replayed boundaries
    int64_t end_ns = 0;
  };
  std::vector<Step> steps;              // every step of the window; the last is the one replayed
  int64_t step_ns = 0;                  // the last step, replayed
  int64_t host_end_ns = 0;              // the main thread at the window's end
  int64_t device_end_ns = 0;            // the work launched in the window: its end less its lag in the trace
  std::vector<int64_t> stream_busy_ns;  // per stream, within [0, step]
  // Per stream, within [0, step]: time it idled before work whose launch came last of what it
  // waited for.
  std::vector<int64_t> stream_waiting_on_host_ns;
  int64_t host_blocked_ns = 0;     // the host waiting in syncs, blocking copies and a full launch queue
  int64_t queue_held_ns = 0;       // of that, launch calls waiting for a slot in the launch queue
  int32_t queue_held_calls = 0;    // launch calls the trace shows held by a full launch queue
  int64_t collective_ns = 0;       // collectives' time
  int64_t collective_wait_ns = 0;  // of that, above each collective's floor
  int32_t inferred_waits = 0;      // cross-stream waits inferred from timing
  int32_t recorded_waits = 0;      // cross-stream waits from the trace's stream_wait_event records
  struct Span {
    std::string name;
    int32_t stream = 0;
    int64_t duration_ns = 0;
  };
  std::vector<Span> critical_path_top;  // the 10 longest pieces of device work on the critical path
  std::vector<int64_t> work_start_ns;   // per device work: when it started in the replay
  std::vector<int64_t> work_end_ns;     // per device work: when it ended
  std::vector<int64_t> call_start_ns;   // per call: when it was made in the replay
  std::vector<int64_t> call_end_ns;     // per call: when it returned
};

// Throws mutwo::Error on a trace whose references are out of range.
RuntimeReplay replay_runtime(const ir::RuntimeTrace& trace, const RuntimeWhatIf& what_if = {});

// The shortest time each collective name took in the trace's window.
std::map<std::string, int64_t> collective_floors(const ir::RuntimeTrace& trace);

}  // namespace mutwo::sim
