#include "io/server_schedule_json.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::io {
namespace {

using Json = nlohmann::json;
constexpr const char* kServerScheduleFormat = "mutwo-server-schedule";

ir::Payload parse_payload(const std::string& name) {
  for (int32_t p = 0; p < ir::kPayloadCount; ++p) {
    if (ir::payload_name(static_cast<ir::Payload>(p)) == name) return static_cast<ir::Payload>(p);
  }
  std::string valid;
  for (int32_t p = 0; p < ir::kPayloadCount; ++p)
    valid += fmt::format("{}{}", p == 0 ? "" : ", ", ir::payload_name(static_cast<ir::Payload>(p)));
  throw UnknownNameError(fmt::format("unknown payload '{}'; valid: {}", name, valid));
}

ir::ServerTaskKind parse_task_kind(const std::string& name) {
  if (name == "compute") return ir::ServerTaskKind::compute;
  if (name == "transfer") return ir::ServerTaskKind::transfer;
  throw UnknownNameError(fmt::format("unknown task kind '{}'; valid: compute, transfer", name));
}

}  // namespace

std::string server_schedule_to_json(const ir::ServerSchedule& s) {
  Json tasks = Json::array();
  for (const ir::ServerTask& t : s.tasks) {
    Json j = {{"id", t.id},       {"kind", t.kind == ir::ServerTaskKind::compute ? "compute" : "transfer"},
              {"gpu", t.gpu},     {"stream", t.stream},
              {"label", t.label}, {"waits", t.waits}};
    if (t.kind == ir::ServerTaskKind::compute) {
      j["duration_ns"] = t.duration_ns;
    } else {
      j["bytes"] = t.bytes;
      j["from"] = t.from;
      j["to"] = t.to;
      j["payload"] = std::string(ir::payload_name(t.payload));
    }
    if (t.alloc_bytes != 0) j["alloc_bytes"] = t.alloc_bytes;
    if (t.free_bytes != 0) j["free_bytes"] = t.free_bytes;
    if (t.issue_ns >= 0) j["issue_ns"] = t.issue_ns;
    if (t.host_sync) j["host_sync"] = true;
    tasks.push_back(std::move(j));
  }
  Json root = {{"format", kServerScheduleFormat},
               {"version", kServerScheduleVersion},
               {"server", s.server},
               {"gpu_count", s.gpu_count},
               {"scheme", s.scheme},
               {"micro_batches", s.micro_batches},
               {"samples_per_step", s.samples_per_step},
               {"initial_bytes", s.initial_bytes},
               {"tasks", tasks}};
  if (s.launch_queue_depth != 0) root["launch_queue_depth"] = s.launch_queue_depth;
  return root.dump(1) + "\n";
}

ir::ServerSchedule server_schedule_from_json(const std::string& text) {
  const Json root = support::parse_json_document(text, "server schedule");
  support::JsonReader r(root, "server schedule");
  if (r.has("format")) {
    if (const std::string format = r.string("format"); format != kServerScheduleFormat) {
      throw FormatError(fmt::format("server schedule: field 'format' = '{}', expected '{}'", format,
                                    kServerScheduleFormat));
    }
  }
  r.expect_only({"format", "version", "server", "gpu_count", "scheme", "micro_batches", "samples_per_step",
                 "initial_bytes", "tasks", "launch_queue_depth"});
  r.string("format");
  const int64_t version = r.integer("version");
  if (version != kServerScheduleVersion) {
    throw FormatError(fmt::format("server schedule: unsupported version {} (this build reads version {})",
                                  version, kServerScheduleVersion));
  }
  ir::ServerSchedule s;
  s.server = r.string("server");
  s.gpu_count = r.int32("gpu_count");
  s.scheme = r.string("scheme");
  s.micro_batches = r.int32("micro_batches");
  s.samples_per_step = r.integer("samples_per_step");
  s.initial_bytes = r.int_list("initial_bytes");
  if (r.has("launch_queue_depth")) s.launch_queue_depth = r.int32("launch_queue_depth");
  const Json& tasks = r.array("tasks");
  s.tasks.reserve(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    support::JsonReader t(tasks[i], fmt::format("task {}", i));
    const ir::ServerTaskKind kind = t.name("kind", parse_task_kind);
    if (kind == ir::ServerTaskKind::compute) {
      t.expect_only({"id", "kind", "gpu", "stream", "label", "waits", "duration_ns", "alloc_bytes",
                     "free_bytes", "issue_ns", "host_sync"});
    } else {
      t.expect_only({"id", "kind", "gpu", "stream", "label", "waits", "bytes", "from", "to", "payload",
                     "alloc_bytes", "free_bytes", "issue_ns", "host_sync"});
    }
    ir::ServerTask task;
    task.id = t.int32("id");
    task.kind = kind;
    task.gpu = t.int32("gpu");
    task.stream = t.int32("stream");
    task.label = t.string("label");
    task.waits = t.id_list("waits");
    if (kind == ir::ServerTaskKind::compute) {
      task.duration_ns = t.integer("duration_ns");
    } else {
      task.bytes = t.integer("bytes");
      task.from = t.int32("from");
      task.to = t.int32("to");
      task.payload = t.name("payload", parse_payload);
    }
    if (t.has("alloc_bytes")) task.alloc_bytes = t.integer("alloc_bytes");
    if (t.has("free_bytes")) task.free_bytes = t.integer("free_bytes");
    if (t.has("issue_ns")) task.issue_ns = t.integer("issue_ns");
    if (t.has("host_sync")) task.host_sync = t.boolean("host_sync");
    s.tasks.push_back(std::move(task));
  }
  ir::validate_server_schedule(s);
  return s;
}

void write_server_schedule(const ir::ServerSchedule& schedule, const std::string& path) {
  support::write_file_atomic(path, server_schedule_to_json(schedule), "server schedule file");
}

}  // namespace mutwo::io
