#pragma once
// Reading any trace a user has: mutwo's own trace files, PyTorch profiler (Kineto) traces and DTR
// operator logs, told apart by their content (or named), each through its importer.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "profiles/trace_import_result.hpp"

namespace mutwo::profiles {

enum class TraceFormat : uint8_t {
  mutwo,   // JSON with "format": "mutwo-trace" (profiles/trace_file)
  kineto,  // torch.profiler's Chrome-trace JSON, or the legacy event array (profiles/kineto_trace)
  dtr,     // JSON Lines operator log of the DTR prototype (profiles/dtr_log)
};

std::string_view trace_format_name(TraceFormat format);  // "mutwo", "kineto", "dtr"
// One line per format for help texts and messages.
std::string_view trace_format_description(TraceFormat format);
// Throws UnknownNameError "unknown trace format 'x'; valid: mutwo, kineto, dtr".
TraceFormat parse_trace_format(std::string_view name);

// What the text is, by content; nullopt when it is none of them.
std::optional<TraceFormat> detect_trace_format(std::string_view text);

// Reads the file (gunzipped if needed), detects its format or checks it against `expected`, and
// imports it. Throws FormatError naming the file and what was expected: for a file of another
// format ("… is a DTR operator log, not a PyTorch profiler trace"), or of none.
TraceImport import_trace(const std::filesystem::path& path,
                         std::optional<TraceFormat> expected = std::nullopt);

}  // namespace mutwo::profiles
