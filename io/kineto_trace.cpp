#include "io/kineto_trace.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/kineto/importer.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::io::kineto {

Importer::Importer(const Json& events, std::string source) : source_(std::move(source)), reader_(source_) {
  reader_.read(events);
  ev_ = &reader_.events;
  // Timestamps are doubles in microseconds: at 1.7e15 us one ulp is 0.25 us, so nesting and
  // enclosure comparisons allow two ulps of slack (at least 1 ns).
  const double ulp_us = std::nextafter(reader_.max_abs_ts_us, INFINITY) - reader_.max_abs_ts_us;
  tol_ns_ = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(2 * ulp_us * 1000.0)));
  // Whole-microsecond traces (the legacy profiler, sampled traces) truncate start and duration
  // separately: a child may end up to 1 us after its parent.
  if (reader_.whole_us) tol_ns_ = std::max<int64_t>(tol_ns_, 1000);
}

TraceImport Importer::run(const Json& doc) {
  const bool legacy = doc.is_array();
  if (legacy) {
    warn(
        "a legacy trace (a PyTorch profiler without Kineto): it has no categories, no \"Input Dims\", no "
        "sequence numbers, no GPU kernels and no [memory] events");
  }
  nest();
  choose_step();
  build_nodes();
  measure_durations(doc);
  measure_host_timeline();
  pair_backward();
  ir::Graph g = build_graph();
  ir::validate(g);
  TraceImport out;
  out.trace.graph = std::move(g);
  out.trace.device = device_;
  for (const Node& n : nodes_) out.trace.op_duration_ns.push_back(n.duration_ns);
  if (device_ != "cpu") {
    for (const Node& n : nodes_) {
      out.trace.op_host_ns.push_back(n.host_ns);
      std::vector<ir::StreamWork>& parts = out.trace.op_streams.emplace_back();
      for (const Part& p : n.parts) parts.push_back({p.stream, p.duration_ns, p.host_ns});
    }
  }
  if (!whole_trace_) out.trace.profiled_step_ns = window_end_ - window_start_;
  out.warnings = std::move(warnings_);
  return out;
}

[[noreturn]] void Importer::fail(const std::string& text) const {
  throw FormatError(fmt::format("{}: {}", source_, text));
}

}  // namespace mutwo::io::kineto

namespace mutwo::io {

bool is_kineto_document(const nlohmann::json& doc) {
  if (doc.is_object()) return doc.contains("traceEvents") && doc["traceEvents"].is_array();
  return doc.is_array() && !doc.empty() && doc.front().is_object() && doc.front().contains("ph") &&
         doc.front()["ph"].is_string();
}

TraceImport import_kineto_trace(const nlohmann::json& doc, const std::string& source_name) {
  if (!is_kineto_document(doc)) {
    throw FormatError(
        fmt::format("{}: not a PyTorch profiler trace: expected an object with a \"traceEvents\" "
                    "list or a list of Chrome-trace events",
                    source_name));
  }
  const nlohmann::json& events = doc.is_array() ? doc : doc["traceEvents"];
  if (events.empty())
    throw FormatError(fmt::format("{}: field 'traceEvents' is empty: no events to import", source_name));
  kineto::Importer importer(events, source_name);
  return importer.run(doc);
}

TraceImport read_kineto_trace(const std::filesystem::path& path) {
  return import_kineto_trace(support::parse_json_document(support::read_text_file(path), path.string()),
                             path.filename().string());
}

}  // namespace mutwo::io
