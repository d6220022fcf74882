#pragma once
// mutwo trace files: a Graph plus optional measured per-op durations and the device they were
// measured on, as JSON with "format": "mutwo-trace" and a "version".
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "profiles/graph.hpp"

namespace mutwo::profiles {

inline constexpr int kTraceVersion = 1;

// The GPU work one op issued to one stream of the traced device (a Kineto trace's "stream"), and the
// share of the op's host time spent before that work was issued (after the op's previous part).
struct StreamWork {
  int64_t stream = 0;       // the traced device's stream id, as the trace numbers it
  int64_t duration_ns = 0;  // GPU time of the op's kernels, memcpys and memsets on that stream
  int64_t host_ns = 0;      // host time up to the launch that issued the last of them
  bool operator==(const StreamWork&) const = default;
};

struct Trace {
  Graph graph;
  std::vector<int64_t> op_duration_ns;  // empty, or one measured duration per op
  std::string device;                   // where the durations were measured ("" if none)
  // Optional host side of a GPU trace (profiles/kineto_trace.hpp says how a Kineto trace fills it):
  // the measured host time to issue each op (dispatch, launches and the Python time before it).
  std::vector<int64_t> op_host_ns;  // empty, or one per op
  // Empty, or per op its GPU work per stream in the order it was issued (none for an op that
  // launched nothing); an op's durations sum to op_duration_ns, its host shares to op_host_ns.
  std::vector<std::vector<StreamWork>> op_streams;
  int64_t profiled_step_ns = 0;  // wall time of the traced step (ProfilerStep span); 0: unknown
};

std::string trace_to_json(const Trace& trace);  // deterministic, pretty-printed
// Parses and validates; throws FormatError (syntax, format, version, field types, missing fields)
// or GraphError (invariants), each naming the op/tensor and the field.
Trace trace_from_json(const std::string& text);
// The same from a document already parsed (an importer that parsed the file to detect its format).
Trace trace_from_json(const nlohmann::json& root);

void write_trace(const Trace& trace, const std::filesystem::path& path);  // atomic: temp file + rename
Trace read_trace(const std::filesystem::path& path);

}  // namespace mutwo::profiles
