#pragma once
// What each call and each piece of device work of a runtime trace waits for, derived once from the
// trace for the runtime replay (sim/runtime_replay.hpp has the rules it follows): the work before
// it on its stream, its launch delay, the work on another stream it waits for (recorded or
// inferred), what a blocking call blocks on, launches held by a full queue, threads woken by
// another. Internal to sim/runtime_replay.cpp.
#include <cstdint>
#include <limits>
#include <vector>

#include "ir/runtime_trace.hpp"

namespace mutwo::sim {

inline constexpr int64_t kUnknownNs = std::numeric_limits<int64_t>::min();

// What each piece of work and each call waits for, derived once from the trace.
struct ReplayDeps {
  std::vector<int32_t> pred;                 // per work: the work before it on its stream, -1 none
  // Per work: its launch delay after its call's start; for work launched before the window, its
  // traced start where its stream idled before it, else kUnknownNs (right after the work before it).
  std::vector<int64_t> offset_ns;
  std::vector<int32_t> dep;                  // per work: the work on another stream it waits for, -1 none
  std::vector<std::vector<int32_t>> awaits;  // per call: the work it blocks on (blocking calls)
  std::vector<int64_t> residual_ns;          // per blocking call: its cost after the wait
  std::vector<uint8_t> blocks;               // per call: it waits for device work
  // Per call held by a full launch queue: the work whose start freed its slot (-1 none), its usual
  // duration (its name's median) and its time after that start.
  std::vector<int32_t> released_by;
  std::vector<int64_t> usual_ns;
  std::vector<int64_t> after_release_ns;
  int32_t held = 0;
  // Per call that ends a thread's idle time of kWakeNs or more: the last call on another thread that
  // ended before it (what woke it), -1 none.
  std::vector<int32_t> woken_by;
  int32_t inferred = 0;
  int32_t recorded = 0;
};

ReplayDeps derive_replay_deps(const ir::RuntimeTrace& trace);

// A piece of work's end in the trace.
int64_t traced_end_ns(const ir::RuntimeTrace& trace, int32_t work);

}  // namespace mutwo::sim
