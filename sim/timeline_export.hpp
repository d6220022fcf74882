#pragma once
// Chrome-trace JSON of a simulated timeline, which Perfetto (ui.perfetto.dev) and chrome://tracing open.
//
// Layout: one process (pid 1, named by `title`); one track per stream (tid = stream id + 1, named
// "compute", "d2h copy", "h2d copy", "compute 2", ... by thread_name metadata); each instruction a
// complete event ("ph": "X") named by its op or tensor, ts/dur in microseconds as doubles, args
// instruction / kind / phase / op or tensor id; device memory a counter track ("ph": "C",
// "device memory", args.bytes).
#include <string>
#include <string_view>

#include "sim/prediction.hpp"

namespace mutwo::sim {

// Name of a stream's track: "compute", "d2h copy", "h2d copy", "compute <k>" for extra compute
// streams, "host optimizer" for the schedule's host stream (Prediction::host_stream).
std::string stream_track_name(int32_t stream, int32_t host_stream = ir::kNoStream);

// The trace as a JSON text; deterministic (same timeline, same bytes). Needs a recorded timeline
// (SimOptions::record_timeline); throws mutwo::Error otherwise.
std::string chrome_trace_json(const Prediction& prediction, std::string_view title = "mutwo simulation");

// Writes chrome_trace_json atomically (support::write_file_atomic); throws mutwo::Error naming the path.
void write_chrome_trace(const Prediction& prediction, const std::string& path,
                        std::string_view title = "mutwo simulation");

}  // namespace mutwo::sim
