#pragma once
// Reading any trace a user has: mutwo's own trace files, PyTorch profiler (Kineto) traces and DTR
// operator logs, told apart by their content (or named), each through its importer.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "io/trace_import_result.hpp"
#include "support/registry.hpp"

namespace mutwo::io {

enum class TraceFormat : uint8_t {
  mutwo,   // JSON with "format": "mutwo-trace" (io/trace_file)
  kineto,  // torch.profiler's Chrome-trace JSON, or the legacy event array (io/kineto_trace)
  dtr,     // JSON Lines operator log of the DTR prototype (io/dtr_log)
  et,      // PyTorch execution trace (io/execution_trace)
};

// One entry per format, registered in trace_import.cpp: how its text is recognised and imported.
struct TraceFormatInfo {
  std::string name;         // "kineto", the value of --format
  std::string description;  // one line for help texts and messages
  TraceFormat format = TraceFormat::mutwo;
  // True when the text is this format; `doc` is the text parsed as one JSON value (discarded when
  // it is not one), parsed once for every format's check.
  std::function<bool(std::string_view text, const nlohmann::json& doc)> detect;
  // Imports the recognised text of the file at `path`; errors and warnings name the file.
  std::function<TraceImport(std::string_view text, const nlohmann::json& doc,
                            const std::filesystem::path& path)>
      import;
};

// find throws UnknownNameError "unknown trace format 'x'; valid: mutwo, kineto, et, dtr".
class TraceFormatRegistry : public Registry<TraceFormatInfo> {
 public:
  TraceFormatRegistry() : Registry("trace format") {}
  const TraceFormatInfo& find(TraceFormat format) const;
  using Registry::find;
};

// mutwo, kineto, et, dtr, built once.
const TraceFormatRegistry& trace_formats();

std::string_view trace_format_name(TraceFormat format);  // "mutwo", "kineto", "et", "dtr"
// One line per format for help texts and messages.
std::string_view trace_format_description(TraceFormat format);
// Throws UnknownNameError "unknown trace format 'x'; valid: mutwo, kineto, et, dtr".
TraceFormat parse_trace_format(std::string_view name);

// What the text is, by content; nullopt when it is none of them.
std::optional<TraceFormat> detect_trace_format(std::string_view text);

// Reads the file (gunzipped if needed), detects its format or checks it against `expected`, and
// imports it. Throws FormatError naming the file and what was expected: for a file of another
// format ("… is a DTR operator log, not a PyTorch profiler trace"), or of none.
TraceImport import_trace(const std::filesystem::path& path,
                         std::optional<TraceFormat> expected = std::nullopt);

}  // namespace mutwo::io
