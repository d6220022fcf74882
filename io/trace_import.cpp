#include "io/trace_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "io/dtr_log.hpp"
#include "io/execution_trace.hpp"
#include "io/kineto_trace.hpp"
#include "io/trace_file.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::io {
namespace {

void register_trace_formats(TraceFormatRegistry& registry) {
  registry.add({"mutwo", "a mutwo trace (JSON with \"format\": \"mutwo-trace\", from `mutwo profile`)",
                TraceFormat::mutwo,
                [](std::string_view, const nlohmann::json& doc) {
                  return doc.is_object() && doc.contains("format") && doc["format"] == "mutwo-trace";
                },
                [](std::string_view text, const nlohmann::json&, const std::filesystem::path& path) {
                  try {
                    // Parsed again from its text, refusing a key given twice (the detection's parse
                    // kept the last one).
                    return TraceImport{trace_from_json(std::string(text)), {}};
                  } catch (const FormatError& e) {
                    throw FormatError(fmt::format("{}: {}", path.string(), e.what()));
                  } catch (const GraphError& e) {
                    throw GraphError(fmt::format("{}: {}", path.string(), e.what()));
                  }
                }});
  registry.add({"kineto",
                "a PyTorch profiler trace (torch.profiler's Chrome-trace JSON with \"traceEvents\", .json or "
                ".json.gz)",
                TraceFormat::kineto,
                [](std::string_view, const nlohmann::json& doc) {
                  return !doc.is_discarded() && is_kineto_document(doc);
                },
                [](std::string_view, const nlohmann::json& doc, const std::filesystem::path& path) {
                  return import_kineto_trace(doc, path.filename().string());
                }});
  registry.add(
      {"et",
       "a PyTorch execution trace (torch.profiler.ExecutionTraceObserver / ExecutionGraphObserver JSON "
       "with \"schema\" and \"nodes\", .json or .json.gz)",
       TraceFormat::et,
       [](std::string_view, const nlohmann::json& doc) {
         return !doc.is_discarded() && is_execution_trace_document(doc);
       },
       [](std::string_view, const nlohmann::json& doc, const std::filesystem::path& path) {
         return import_execution_trace(doc, path.filename().string());
       }});
  registry.add({"dtr", "a DTR operator log (JSON Lines, one {\"INSTRUCTION\": ...} object per line)",
                TraceFormat::dtr,
                [](std::string_view text, const nlohmann::json&) { return looks_like_dtr_log(text); },
                [](std::string_view text, const nlohmann::json&, const std::filesystem::path& path) {
                  const std::string source = path.filename().string();
                  return dtr_log_to_trace(parse_dtr_log(text, source), source);
                }});
}

// The format of the text, its document parsed once; a DTR log is checked first (JSON Lines are
// not one JSON value).
const TraceFormatInfo* detect(std::string_view text, nlohmann::json& doc) {
  const TraceFormatRegistry& formats = trace_formats();
  const TraceFormatInfo& dtr = formats.find(TraceFormat::dtr);
  if (dtr.detect(text, doc)) return &dtr;
  doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return nullptr;
  for (const TraceFormatInfo& f : formats) {
    if (f.format != TraceFormat::dtr && f.detect(text, doc)) return &f;
  }
  return nullptr;
}

}  // namespace

const TraceFormatInfo& TraceFormatRegistry::find(TraceFormat format) const {
  for (const TraceFormatInfo& f : entries()) {
    if (f.format == format) return f;
  }
  throw Error("trace format not registered");
}

const TraceFormatRegistry& trace_formats() {
  static const TraceFormatRegistry registry = [] {
    TraceFormatRegistry r;
    register_trace_formats(r);
    return r;
  }();
  return registry;
}

std::string_view trace_format_name(TraceFormat format) {
  return trace_formats().find(format).name;
}

std::string_view trace_format_description(TraceFormat format) {
  return trace_formats().find(format).description;
}

TraceFormat parse_trace_format(std::string_view name) {
  return trace_formats().find(name).format;
}

std::optional<TraceFormat> detect_trace_format(std::string_view text) {
  nlohmann::json doc;
  const TraceFormatInfo* found = detect(text, doc);
  if (found == nullptr) return std::nullopt;
  return found->format;
}

TraceImport import_trace(const std::filesystem::path& path, std::optional<TraceFormat> expected) {
  if (!std::filesystem::is_regular_file(path))
    throw Error(fmt::format("cannot open trace file '{}'", path.string()));
  const std::string text = support::read_text_file(path);
  nlohmann::json doc;
  const TraceFormatInfo* found = detect(text, doc);
  if (found == nullptr) {
    if (expected) {
      throw FormatError(fmt::format("{}: not {}", path.string(), trace_format_description(*expected)));
    }
    std::vector<std::string> all;
    for (const TraceFormatInfo& f : trace_formats()) all.push_back(f.description);
    const std::string last = all.back();
    all.pop_back();
    throw FormatError(fmt::format("{}: not a trace mutwo reads; expected {} or {}", path.string(),
                                  fmt::join(all, ", "), last));
  }
  if (expected && found->format != *expected) {
    throw FormatError(fmt::format("{}: is {}, not {} (--format {})", path.string(), found->description,
                                  trace_format_description(*expected), trace_format_name(*expected)));
  }
  return found->import(text, doc, path);
}

}  // namespace mutwo::io
