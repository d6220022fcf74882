#pragma once
// mutwo trace files: a Trace (ir/trace.hpp) as JSON with "format": "mutwo-trace" and a "version".
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "ir/trace.hpp"

namespace mutwo::io {

inline constexpr int kTraceVersion = 1;

std::string trace_to_json(const ir::Trace& trace);  // deterministic, pretty-printed
// Parses and validates; throws FormatError (syntax, format, version, field types, missing fields)
// or GraphError (invariants), each naming the op/tensor and the field.
ir::Trace trace_from_json(const std::string& text);
// The same from a document already parsed (an importer that parsed the file to detect its format).
ir::Trace trace_from_json(const nlohmann::json& root);

void write_trace(const ir::Trace& trace, const std::filesystem::path& path);  // atomic: temp file + rename
ir::Trace read_trace(const std::filesystem::path& path);  // plain or gzip-compressed, as --trace reads

}  // namespace mutwo::io
