#pragma once
// Chrome-trace JSON of a runtime replay (sim/runtime_replay.hpp), which Perfetto (ui.perfetto.dev)
// and chrome://tracing open: process 1 "host" with one track per traced thread (its runtime calls),
// process 2 "GPU" with one track per stream (its kernels, copies and memsets), ts and dur in
// microseconds as the profiler writes them; the steps as instant markers on the host's main
// thread. Deterministic: same replay, same bytes.
#include <string>

#include "ir/runtime_trace.hpp"
#include "sim/runtime_replay.hpp"

namespace mutwo::sim {

std::string runtime_chrome_trace_json(const ir::RuntimeTrace& trace, const RuntimeReplay& replay);

}  // namespace mutwo::sim
