#include "sim/timeline_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::sim {

namespace {

constexpr int kPid = 1;
int track_of(int32_t stream) {
  return stream + 1;
}
double ns_to_us(int64_t ns) {
  return static_cast<double>(ns) / 1000.0;
}

nlohmann::json metadata(const char* name, int tid, nlohmann::json args) {
  nlohmann::json m;
  m["ph"] = "M";
  m["name"] = name;
  m["pid"] = kPid;
  m["tid"] = tid;
  m["args"] = std::move(args);
  return m;
}

}  // namespace

std::string stream_track_name(int32_t stream, int32_t host_stream) {
  if (stream == host_stream && host_stream != ir::kNoStream) return "host optimizer";
  switch (stream) {
    case kHostTrack:
      return "host";
    case ir::kComputeStream:
      return "compute";
    case ir::kDeviceToHostStream:
      return "d2h copy";
    case ir::kHostToDeviceStream:
      return "h2d copy";
    default:
      return fmt::format("compute {}", stream - ir::kFirstExtraComputeStream + 2);
  }
}

std::string chrome_trace_json(const Prediction& prediction, std::string_view title) {
  if (!prediction.has_timeline) {
    throw Error(
        "chrome trace: the prediction has no timeline (simulate with SimOptions::record_timeline = true)");
  }
  const Timeline& tl = prediction.timeline;
  int32_t max_stream = ir::kHostToDeviceStream;
  int32_t min_stream = ir::kComputeStream;
  for (const TimelineEvent& ev : tl.events) {
    max_stream = std::max(max_stream, ev.stream);
    min_stream = std::min(min_stream, ev.stream);  // kHostTrack when the host timeline ran
  }

  nlohmann::json events = nlohmann::json::array();
  events.push_back(metadata("process_name", 0, {{"name", std::string(title)}}));
  for (int32_t st = min_stream; st <= max_stream; ++st) {
    events.push_back(metadata("thread_name", track_of(st), {{"name", stream_track_name(st, prediction.host_stream)}}));
    events.push_back(metadata("thread_sort_index", track_of(st), {{"sort_index", st}}));
  }
  for (const TimelineEvent& ev : tl.events) {
    nlohmann::json e;
    e["ph"] = "X";
    e["name"] = ev.name;
    e["cat"] = ir::instr_kind_name(ev.kind);
    e["pid"] = kPid;
    e["tid"] = track_of(ev.stream);
    e["ts"] = ns_to_us(ev.start_ns);
    e["dur"] = ns_to_us(ev.end_ns - ev.start_ns);
    nlohmann::json args;
    args["instruction"] = ev.instruction;
    args["kind"] = ir::instr_kind_name(ev.kind);
    args["phase"] = ir::phase_name(ev.phase);
    if (ev.op != ir::kNoId) args["op"] = ev.op;
    if (ev.tensor != ir::kNoId) args["tensor"] = ev.tensor;
    e["args"] = std::move(args);
    events.push_back(std::move(e));
  }
  for (const MemorySample& m : tl.memory) {
    nlohmann::json c;
    c["ph"] = "C";
    c["name"] = "device memory";
    c["pid"] = kPid;
    c["ts"] = ns_to_us(m.time_ns);
    c["args"] = {{"bytes", m.bytes}};
    events.push_back(std::move(c));
  }
  nlohmann::json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ms";
  nlohmann::json other;
  other["step_time_ns"] = prediction.step_time_ns;
  other["peak_bytes"] = prediction.peak_bytes;
  other["oom"] = prediction.oom;
  doc["otherData"] = std::move(other);
  return doc.dump();
}

void write_chrome_trace(const Prediction& prediction, const std::string& path, std::string_view title) {
  support::write_file_atomic(path, chrome_trace_json(prediction, title), "chrome trace file");
}

}  // namespace mutwo::sim
