#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/kineto/events.hpp"
#include "io/kineto_op_records.hpp"
#include "io/kineto_trace.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::io {
namespace {

using kineto::Event;
using kineto::Json;
using kineto::Kind;

// "Input Dims" and "Input type" of a CPU op; false when it has no "Input Dims".
bool read_inputs(const Event& e, const std::string& source, KinetoOpRecord& r) {
  if (e.args == nullptr || !e.args->contains("Input Dims")) return false;
  auto bad = [&](const std::string& what) {
    throw FormatError(fmt::format("{}: event {} ('{}'): {}", source, e.index, e.name, what));
  };
  const Json& dims = (*e.args)["Input Dims"];
  if (!dims.is_array()) bad(fmt::format("field 'args.Input Dims' = {}, expected a list", dims.dump()));
  for (size_t k = 0; k < dims.size(); ++k) {
    std::vector<int64_t>& shape = r.input_dims.emplace_back();
    if (!dims[k].is_array())
      bad(fmt::format("field 'args.Input Dims'[{}] = {}, expected a list", k, dims[k].dump()));
    for (const Json& d : dims[k]) {
      if (d.is_array()) {  // a TensorList: its sizes are not one tensor's shape
        shape.clear();
        break;
      }
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        bad(fmt::format("field 'args.Input Dims'[{}] = {}, expected sizes >= 0", k, dims[k].dump()));
      }
      shape.push_back(d.get<int64_t>());
    }
  }
  if (e.args->contains("Input type")) {
    const Json& types = (*e.args)["Input type"];
    if (!types.is_array()) bad(fmt::format("field 'args.Input type' = {}, expected a list", types.dump()));
    for (const Json& t : types) r.input_types.push_back(t.is_string() ? t.get<std::string>() : std::string());
  }
  r.input_types.resize(r.input_dims.size());
  return true;
}

// The records; `required`: throw when the trace has no shaped CPU op or no kernel, else return none.
KinetoOpRecords op_records(const nlohmann::json& doc, const std::string& source, bool required) {
  if (!is_kineto_document(doc) || !doc.is_object()) {
    throw FormatError(
        fmt::format("{}: not a Kineto trace: expected an object with a \"traceEvents\" list (a legacy trace "
                    "has no shapes)",
                    source));
  }
  kineto::EventReader reader(source);
  reader.read(doc["traceEvents"]);
  const std::vector<Event>& ev = reader.events;

  KinetoOpRecords out;
  std::map<size_t, size_t> record_of;                   // CPU op event -> record
  std::map<size_t, std::vector<size_t>> ops_by_thread;  // CPU ops per thread
  std::map<int64_t, size_t> cpu_of_ext;                 // External id -> CPU op (SIZE_MAX when not unique)
  std::map<int64_t, size_t> launch_of;                  // correlation -> launch
  for (size_t i = 0; i < ev.size(); ++i) {
    const Event& e = ev[i];
    if (e.kind == Kind::launch) launch_of.try_emplace(*kineto::event_int_arg(e, "correlation"), i);
    if (e.kind != Kind::cpu_op) continue;
    ops_by_thread[e.thread].push_back(i);
    if (auto ext = kineto::event_int_arg(e, "External id")) {
      auto [it, inserted] = cpu_of_ext.try_emplace(*ext, i);
      if (!inserted) it->second = SIZE_MAX;
    }
    KinetoOpRecord r;
    r.event = e.index;
    r.name = e.name;
    if (read_inputs(e, source, r)) {
      record_of[i] = out.ops.size();
      out.ops.push_back(std::move(r));
    }
  }
  out.shaped_ops = static_cast<int64_t>(out.ops.size());
  if (out.ops.empty() && !required) return {};
  if (out.ops.empty()) {
    throw FormatError(fmt::format(
        "{}: no CPU op has \"Input Dims\": the trace was recorded without record_shapes=True, so its kernels "
        "have no shapes to calibrate with",
        source));
  }

  for (auto& [thread, ops] : ops_by_thread) {
    std::stable_sort(ops.begin(), ops.end(),
                     [&](size_t a, size_t b) { return ev[a].start_ns < ev[b].start_ns; });
  }
  // The innermost CPU op that launched each GPU event.
  auto enclosing = [&](const Event& launch) -> std::optional<size_t> {
    if (auto ext = kineto::event_int_arg(launch, "External id")) {
      auto c = cpu_of_ext.find(*ext);
      if (c != cpu_of_ext.end() && c->second != SIZE_MAX && ev[c->second].thread == launch.thread &&
          ev[c->second].start_ns <= launch.start_ns && launch.start_ns <= ev[c->second].end_ns) {
        return c->second;
      }
    }
    std::optional<size_t> best;
    for (size_t i : ops_by_thread[launch.thread]) {
      const Event& op = ev[i];
      if (op.start_ns > launch.start_ns) break;  // sorted by start
      if (launch.start_ns <= op.end_ns &&
          (!best || op.end_ns - op.start_ns < ev[*best].end_ns - ev[*best].start_ns)) {
        best = i;
      }
    }
    return best;
  };
  std::map<int64_t, int64_t> kernels_per_device;
  int64_t kernels = 0;
  for (const Event& g : ev) {
    if (g.kind != Kind::gpu) continue;
    ++kernels;
    if (auto d = kineto::event_int_arg(g, "device")) ++kernels_per_device[*d];
    const auto l = launch_of.find(*kineto::event_int_arg(g, "correlation"));
    if (l == launch_of.end()) continue;
    const std::optional<size_t> op = enclosing(ev[l->second]);
    if (!op) continue;
    const auto r = record_of.find(*op);
    if (r == record_of.end()) continue;
    out.ops[r->second].gpu_ns += g.end_ns - g.start_ns;
    ++out.ops[r->second].kernels;
    out.ops[r->second].work_events.push_back(g.index);
  }
  if (kernels == 0 && !required) return {};
  if (kernels == 0)
    throw FormatError(fmt::format("{}: the trace has no GPU kernels to calibrate with", source));
  std::erase_if(out.ops, [](const KinetoOpRecord& r) { return r.kernels == 0 || r.gpu_ns <= 0; });

  std::map<int64_t, std::string> device_names;  // deviceProperties: id -> name
  if (doc.contains("deviceProperties") && doc["deviceProperties"].is_array()) {
    for (const Json& p : doc["deviceProperties"]) {
      if (p.is_object() && p.contains("id") && p["id"].is_number_integer() && p.contains("name") &&
          p["name"].is_string()) {
        device_names[p["id"].get<int64_t>()] = p["name"].get<std::string>();
      }
    }
  }
  // The records are one GPU's rows: kernels of two GPU models in one trace (a T4's fitted as a V100's)
  // are refused; several GPUs of one model are one GPU's measurements.
  int64_t device = -1, most = 0;
  for (const auto& [id, count] : kernels_per_device) {
    if (count > most) device = id, most = count;
  }
  for (const auto& [id, count] : kernels_per_device) {
    if (device_names[id] != device_names[device]) {
      throw FormatError(
          fmt::format("{}: kernels ran on device {} ('{}', {} kernels) and device {} ('{}', {} kernels): a "
                      "trace's rows are "
                      "one GPU's; give each GPU's trace on its own",
                      source, device, device_names[device], most, id, device_names[id], count));
    }
  }
  out.device = device_names[device];
  return out;
}

}  // namespace

KinetoOpRecords kineto_op_records(const nlohmann::json& doc, const std::string& source) {
  return op_records(doc, source, true);
}

KinetoOpRecords kineto_op_records_if_shaped(const nlohmann::json& doc, const std::string& source) {
  return op_records(doc, source, false);
}

KinetoOpRecords read_kineto_op_records(const std::filesystem::path& path) {
  return kineto_op_records(support::parse_json_document(support::read_text_file(path), path.string()),
                           path.string());
}

}  // namespace mutwo::io
