#include "profiles/trace_import.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "profiles/dtr_log.hpp"
#include "profiles/error.hpp"
#include "profiles/kineto_trace.hpp"
#include "profiles/text_file.hpp"
#include "profiles/trace_file.hpp"

namespace mutwo::profiles {
namespace {

constexpr TraceFormat kFormats[] = {TraceFormat::mutwo, TraceFormat::kineto, TraceFormat::dtr};

bool is_mutwo_document(const nlohmann::json& doc) {
  return doc.is_object() && doc.contains("format") && doc["format"] == "mutwo-trace";
}

}  // namespace

std::string_view trace_format_name(TraceFormat format) {
  switch (format) {
    case TraceFormat::mutwo:
      return "mutwo";
    case TraceFormat::kineto:
      return "kineto";
    case TraceFormat::dtr:
      return "dtr";
  }
  return "?";
}

std::string_view trace_format_description(TraceFormat format) {
  switch (format) {
    case TraceFormat::mutwo:
      return "a mutwo trace (JSON with \"format\": \"mutwo-trace\", from `mutwo profile`)";
    case TraceFormat::kineto:
      return "a PyTorch profiler trace (torch.profiler's Chrome-trace JSON with \"traceEvents\", .json or "
             ".json.gz)";
    case TraceFormat::dtr:
      return "a DTR operator log (JSON Lines, one {\"INSTRUCTION\": ...} object per line)";
  }
  return "?";
}

TraceFormat parse_trace_format(std::string_view name) {
  for (TraceFormat f : kFormats) {
    if (trace_format_name(f) == name) return f;
  }
  throw UnknownNameError(fmt::format("unknown trace format '{}'; valid: mutwo, kineto, dtr", name));
}

std::optional<TraceFormat> detect_trace_format(std::string_view text) {
  if (looks_like_dtr_log(text)) return TraceFormat::dtr;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  if (is_mutwo_document(doc)) return TraceFormat::mutwo;
  if (is_kineto_document(doc)) return TraceFormat::kineto;
  return std::nullopt;
}

TraceImport import_trace(const std::filesystem::path& path, std::optional<TraceFormat> expected) {
  if (!std::filesystem::is_regular_file(path))
    throw Error(fmt::format("cannot open trace file '{}'", path.string()));
  const std::string text = read_text_file(path);
  const std::string source = path.filename().string();
  const std::optional<TraceFormat> found = detect_trace_format(text);
  if (!found) {
    if (expected) {
      throw FormatError(fmt::format("{}: not {}", path.string(), trace_format_description(*expected)));
    }
    throw FormatError(fmt::format("{}: not a trace mutwo reads; expected {}, {} or {}", path.string(),
                                  trace_format_description(TraceFormat::mutwo),
                                  trace_format_description(TraceFormat::kineto),
                                  trace_format_description(TraceFormat::dtr)));
  }
  if (expected && *found != *expected) {
    throw FormatError(fmt::format("{}: is {}, not {} (--format {})", path.string(),
                                  trace_format_description(*found), trace_format_description(*expected),
                                  trace_format_name(*expected)));
  }
  switch (*found) {
    case TraceFormat::mutwo:
      try {
        return TraceImport{trace_from_json(text), {}};
      } catch (const FormatError& e) {
        throw FormatError(fmt::format("{}: {}", path.string(), e.what()));
      } catch (const GraphError& e) {
        throw GraphError(fmt::format("{}: {}", path.string(), e.what()));
      }
    case TraceFormat::kineto:
      return import_kineto_trace(nlohmann::json::parse(text), source);
    case TraceFormat::dtr:
      return dtr_log_to_trace(parse_dtr_log(text, source), source);
  }
  throw Error("unreachable trace format");
}

}  // namespace mutwo::profiles
