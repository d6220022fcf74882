#include "io/trace_file.hpp"

#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/graph_json.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::io {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

constexpr std::string_view kTraceFormat = "mutwo-trace";

// The optional host side (op_host_ns, op_streams, profiled_step_ns), checked against the graph and
// op_duration_ns.
void read_host_side(const support::JsonReader& r, ir::Trace& trace) {
  const size_t ops = trace.graph.ops.size();
  if (r.has("op_host_ns")) {
    trace.op_host_ns = r.int_list("op_host_ns");
    if (trace.op_host_ns.size() != ops) {
      throw FormatError(fmt::format("trace: field 'op_host_ns' has {} values, the graph has {} ops",
                                    trace.op_host_ns.size(), ops));
    }
    for (size_t i = 0; i < ops; ++i) {
      if (trace.op_host_ns[i] < 0 || trace.op_host_ns[i] > ir::kMaxOpNs) {
        throw FormatError(fmt::format("op {}: field 'op_host_ns' = {} is outside [0, {}] ns", i,
                                      trace.op_host_ns[i], ir::kMaxOpNs));
      }
    }
  }
  if (r.has("op_streams")) {
    const Json& list = r.array("op_streams");
    if (list.size() != ops) {
      throw FormatError(
          fmt::format("trace: field 'op_streams' has {} entries, the graph has {} ops", list.size(), ops));
    }
    for (size_t i = 0; i < ops; ++i) {
      if (!list[i].is_array()) {
        throw FormatError(fmt::format("op {}: field 'op_streams' entry is {}, expected an array", i,
                                      support::json_type_name(list[i])));
      }
      std::vector<ir::StreamWork> parts;
      int64_t gpu = 0, host = 0;
      for (size_t p = 0; p < list[i].size(); ++p) {
        const support::JsonReader w(list[i][p], fmt::format("op {}: field 'op_streams'[{}]", i, p));
        w.expect_only({"stream", "duration_ns", "host_ns"});
        parts.push_back({w.integer("stream"), w.integer("duration_ns"), w.integer("host_ns")});
        if (parts.back().duration_ns < 0 || parts.back().host_ns < 0 ||
            parts.back().duration_ns > ir::kMaxOpNs || parts.back().host_ns > ir::kMaxOpNs) {
          throw FormatError(fmt::format("{}: 'duration_ns' = {} and 'host_ns' = {} must be in [0, {}]",
                                        w.where(), parts.back().duration_ns, parts.back().host_ns,
                                        ir::kMaxOpNs));
        }
        gpu += parts.back().duration_ns;
        host += parts.back().host_ns;
      }
      if (!parts.empty() && i < trace.op_duration_ns.size() && gpu != trace.op_duration_ns[i]) {
        throw FormatError(
            fmt::format("op {}: field 'op_streams' sums to {} ns of GPU time, 'op_duration_ns' says {}", i,
                        gpu, trace.op_duration_ns[i]));
      }
      if (!parts.empty() && i < trace.op_host_ns.size() && host != trace.op_host_ns[i]) {
        throw FormatError(
            fmt::format("op {}: field 'op_streams' sums to {} ns of host time, 'op_host_ns' says {}", i, host,
                        trace.op_host_ns[i]));
      }
      trace.op_streams.push_back(std::move(parts));
    }
  }
  if (r.has("profiled_step_ns")) {
    trace.profiled_step_ns = r.integer("profiled_step_ns");
    if (trace.profiled_step_ns < 0) {
      throw FormatError(
          fmt::format("trace: field 'profiled_step_ns' = {} is negative", trace.profiled_step_ns));
    }
  }
}

}  // namespace

std::string trace_to_json(const ir::Trace& trace) {
  OrderedJson root;
  root["format"] = kTraceFormat;
  root["version"] = kTraceVersion;
  root["graph"] = graph_to_json(trace.graph);
  if (!trace.device.empty()) root["device"] = trace.device;
  if (!trace.op_duration_ns.empty()) root["op_duration_ns"] = trace.op_duration_ns;
  if (!trace.op_host_ns.empty()) root["op_host_ns"] = trace.op_host_ns;
  if (!trace.op_streams.empty()) {
    OrderedJson ops = OrderedJson::array();
    for (const std::vector<ir::StreamWork>& parts : trace.op_streams) {
      OrderedJson list = OrderedJson::array();
      for (const ir::StreamWork& w : parts) {
        list.push_back({{"stream", w.stream}, {"duration_ns", w.duration_ns}, {"host_ns", w.host_ns}});
      }
      ops.push_back(std::move(list));
    }
    root["op_streams"] = std::move(ops);
  }
  if (trace.profiled_step_ns > 0) root["profiled_step_ns"] = trace.profiled_step_ns;
  try {
    return root.dump(1) + "\n";
  } catch (const nlohmann::json::exception& e) {
    // The only failure of dump(): a name that is not valid UTF-8.
    throw FormatError(fmt::format("trace '{}' cannot be written as JSON: {}", trace.graph.name, e.what()));
  }
}

ir::Trace trace_from_json(const std::string& text) {
  Json root;
  try {
    root = Json::parse(text, support::unique_keys_callback());
  } catch (const nlohmann::json::parse_error& e) {
    throw FormatError(fmt::format("invalid JSON at byte {}: {}", e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // a number past double's range (out_of_range 406)
    throw FormatError(fmt::format("invalid JSON: {}", e.what()));
  }
  return trace_from_json(root);
}

ir::Trace trace_from_json(const Json& root) {
  support::JsonReader r(root, "trace", "a trace");
  const Json& format = r.field("format");
  if (!format.is_string() || format.get<std::string>() != kTraceFormat) {
    throw FormatError(
        fmt::format("not a mutwo trace: field 'format' is {}, expected \"{}\"", format.dump(), kTraceFormat));
  }
  const int64_t version = r.integer("version");
  if (version != kTraceVersion) {
    throw FormatError(
        fmt::format("unsupported trace version {}; this mutwo reads version {}", version, kTraceVersion));
  }
  r.expect_only({"format", "version", "graph", "device", "op_duration_ns", "op_host_ns", "op_streams",
                 "profiled_step_ns"});

  ir::Trace trace;
  trace.graph = graph_from_json(r.field("graph"));
  if (r.has("device")) trace.device = r.string("device");
  if (r.has("op_duration_ns")) {
    trace.op_duration_ns = r.int_list("op_duration_ns");
    if (trace.op_duration_ns.size() != trace.graph.ops.size()) {
      throw FormatError(fmt::format("trace: field 'op_duration_ns' has {} durations, the graph has {} ops",
                                    trace.op_duration_ns.size(), trace.graph.ops.size()));
    }
    // Each op at most ir::kMaxOpNs (1000 s), as simulate prices them: a step's sum cannot wrap (2^62
    // per op summed to 0 ns and passed), and a trace measured at 0 ns throughout is no measurement.
    bool any_time = false;
    for (size_t i = 0; i < trace.op_duration_ns.size(); ++i) {
      if (trace.op_duration_ns[i] < 0 || trace.op_duration_ns[i] > ir::kMaxOpNs) {
        throw FormatError(fmt::format("op {}: field 'op_duration_ns' = {} is outside [0, {}] ns", i,
                                      trace.op_duration_ns[i], ir::kMaxOpNs));
      }
      any_time = any_time || trace.op_duration_ns[i] > 0;
    }
    if (!any_time && !trace.op_duration_ns.empty()) {
      throw FormatError(
          fmt::format("trace: field 'op_duration_ns' is 0 ns for all {} ops: nothing was measured",
                      trace.op_duration_ns.size()));
    }
  }
  read_host_side(r, trace);
  return trace;
}

void write_trace(const ir::Trace& trace, const std::filesystem::path& path) {
  support::write_file_atomic(path, trace_to_json(trace), "trace file");
}

ir::Trace read_trace(const std::filesystem::path& path) {
  const std::string text = support::read_text_file(path, "trace file");
  try {
    return trace_from_json(text);
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("{}: {}", path.string(), e.what()));
  } catch (const GraphError& e) {
    throw GraphError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

}  // namespace mutwo::io
