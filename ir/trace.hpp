#pragma once
// A trace: a Graph plus optional measured per-op durations, the device they were measured on and the
// host side of the step; what every importer builds (io/trace_import.hpp) and io/trace_file.hpp
// reads and writes as a mutwo trace file.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace mutwo::ir {

// The GPU work one op issued to one stream of the traced device (a Kineto trace's "stream"), and the
// share of the op's host time spent before that work was issued (after the op's previous part).
struct StreamWork {
  int64_t stream = 0;       // the traced device's stream id, as the trace numbers it
  int64_t duration_ns = 0;  // GPU time of the op's kernels, memcpys and memsets on that stream
  int64_t host_ns = 0;      // host time up to the launch that issued the last of them
  bool operator==(const StreamWork&) const = default;
};

struct Trace {
  ir::Graph graph;
  std::vector<int64_t> op_duration_ns;  // empty, or one measured duration per op
  std::string device;                   // where the durations were measured ("" if none)
  // Optional host side of a GPU trace (io/kineto_trace.hpp says how a Kineto trace fills it):
  // the measured host time to issue each op (dispatch, launches and the Python time before it).
  std::vector<int64_t> op_host_ns;  // empty, or one per op
  // Empty, or per op its GPU work per stream in the order it was issued (none for an op that
  // launched nothing); an op's durations sum to op_duration_ns, its host shares to op_host_ns.
  std::vector<std::vector<StreamWork>> op_streams;
  int64_t profiled_step_ns = 0;  // wall time of the traced step (ProfilerStep span); 0: unknown
};

}  // namespace mutwo::ir
