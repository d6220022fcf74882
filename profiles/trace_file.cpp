#include "profiles/trace_file.hpp"

#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "profiles/error.hpp"
#include "profiles/graph_json.hpp"
#include "profiles/json_reader.hpp"
#include "profiles/text_file.hpp"

namespace mutwo::profiles {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

constexpr std::string_view kFormatName = "mutwo-trace";

}  // namespace

std::string trace_to_json(const Trace& trace) {
  OrderedJson root;
  root["format"] = kFormatName;
  root["version"] = kTraceVersion;
  root["graph"] = graph_to_json(trace.graph);
  if (!trace.device.empty()) root["device"] = trace.device;
  if (!trace.op_duration_ns.empty()) root["op_duration_ns"] = trace.op_duration_ns;
  try {
    return root.dump(1) + "\n";
  } catch (const nlohmann::json::exception& e) {
    // The only failure of dump(): a name that is not valid UTF-8.
    throw FormatError(fmt::format("trace '{}' cannot be written as JSON: {}", trace.graph.name, e.what()));
  }
}

Trace trace_from_json(const std::string& text) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(fmt::format("invalid JSON at byte {}: {}", e.byte, e.what()));
  }
  return trace_from_json(root);
}

Trace trace_from_json(const Json& root) {
  JsonReader r(root, "trace", "a trace");
  const Json& format = r.field("format");
  if (!format.is_string() || format.get<std::string>() != kFormatName) {
    throw FormatError(
        fmt::format("not a mutwo trace: field 'format' is {}, expected \"{}\"", format.dump(), kFormatName));
  }
  const int64_t version = r.integer("version");
  if (version != kTraceVersion) {
    throw FormatError(
        fmt::format("unsupported trace version {}; this mutwo reads version {}", version, kTraceVersion));
  }
  r.expect_only({"format", "version", "graph", "device", "op_duration_ns"});

  Trace trace;
  trace.graph = graph_from_json(r.field("graph"));
  if (r.has("device")) trace.device = r.string("device");
  if (r.has("op_duration_ns")) {
    trace.op_duration_ns = r.int_list("op_duration_ns");
    if (trace.op_duration_ns.size() != trace.graph.ops.size()) {
      throw FormatError(fmt::format("trace: field 'op_duration_ns' has {} durations, the graph has {} ops",
                                    trace.op_duration_ns.size(), trace.graph.ops.size()));
    }
    for (size_t i = 0; i < trace.op_duration_ns.size(); ++i) {
      if (trace.op_duration_ns[i] < 0) {
        throw FormatError(
            fmt::format("op {}: field 'op_duration_ns' = {} is negative", i, trace.op_duration_ns[i]));
      }
    }
  }
  return trace;
}

void write_trace(const Trace& trace, const std::filesystem::path& path) {
  write_file_atomic(path, trace_to_json(trace), "trace file");
}

Trace read_trace(const std::filesystem::path& path) {
  const std::string text = read_file_bytes(path, "trace file");
  try {
    return trace_from_json(text);
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("{}: {}", path.string(), e.what()));
  } catch (const GraphError& e) {
    throw GraphError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

}  // namespace mutwo::profiles
