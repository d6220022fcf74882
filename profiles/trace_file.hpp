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

struct Trace {
  Graph graph;
  std::vector<int64_t> op_duration_ns;  // empty, or one measured duration per op
  std::string device;                   // where the durations were measured ("" if none)
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
