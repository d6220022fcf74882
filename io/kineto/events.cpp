#include "io/kineto/events.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::io::kineto {

[[noreturn]] void EventReader::fail(size_t i, const Json& e, const std::string& what) const {
  std::string name;
  if (e.is_object() && e.contains("name") && e["name"].is_string()) name = e["name"].get<std::string>();
  throw FormatError(name.empty() ? fmt::format("{}: event {}: {}", source_, i, what)
                                 : fmt::format("{}: event {} ('{}'): {}", source_, i, name, what));
}

double EventReader::number(size_t i, const Json& e, const char* field) const {
  if (!e.contains(field)) fail(i, e, fmt::format("field '{}' is missing", field));
  const Json& v = e[field];
  if (!v.is_number()) fail(i, e, fmt::format("field '{}' = {}, expected a number", field, v.dump()));
  const double d = v.get<double>();
  // |t| < 9e12 s keeps t * 1000 ns inside int64.
  if (!std::isfinite(d) || std::fabs(d) > 9e15) {
    fail(i, e, fmt::format("field '{}' = {} is out of range", field, v.dump()));
  }
  return d;
}

std::optional<int64_t> EventReader::int_arg(size_t i, const Json& e, const Json* args,
                                            const char* key) const {
  if (args == nullptr || !args->contains(key)) return std::nullopt;
  const Json& v = (*args)[key];
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return -1;
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float() && std::isfinite(v.get<double>()) &&
      v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 9e18) {
    return static_cast<int64_t>(v.get<double>());
  }
  fail(i, e, fmt::format("field 'args.{}' = {}, expected an integer", key, v.dump()));
}

size_t EventReader::thread_of(size_t i, const Json& e) {
  std::string key;
  for (const char* field : {"pid", "tid"}) {
    if (!e.contains(field)) fail(i, e, fmt::format("field '{}' is missing", field));
    const Json& v = e[field];
    if (!v.is_number() && !v.is_string()) {
      fail(i, e, fmt::format("field '{}' = {}, expected a number or a string", field, v.dump()));
    }
    key += v.dump() + "/";
  }
  auto [it, inserted] = threads_.try_emplace(key, threads_.size());
  return it->second;
}

const Json* EventReader::args_of(size_t i, const Json& e) const {
  if (!e.contains("args")) return nullptr;
  if (!e["args"].is_object())
    fail(i, e, fmt::format("field 'args' = {}, expected an object", e["args"].dump()));
  return &e["args"];
}

void EventReader::read(const Json& list) {
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    if (!e.is_object()) fail(i, e, fmt::format("expected an object, got {}", e.dump().substr(0, 60)));
    if (!e.contains("ph")) fail(i, e, "field 'ph' is missing");
    if (!e["ph"].is_string()) fail(i, e, fmt::format("field 'ph' = {}, expected a string", e["ph"].dump()));
    const std::string ph = e["ph"].get<std::string>();
    const bool named = e.contains("name");
    if (named && !e["name"].is_string()) {
      fail(i, e, fmt::format("field 'name' = {}, expected a string", e["name"].dump()));
    }
    if (named && e["name"].get<std::string>() == "[memory]") {
      read_memory(i, e);
    } else if (ph == "X") {
      read_complete(i, e);
    }
  }
}

void EventReader::read_complete(size_t i, const Json& e) {
  if (!e.contains("name")) fail(i, e, "field 'name' is missing");
  Event ev;
  ev.index = i;
  ev.name = e["name"].get<std::string>();
  const double ts = number(i, e, "ts");
  const double dur = number(i, e, "dur");
  if (dur < 0) fail(i, e, fmt::format("field 'dur' = {}, must be >= 0", e["dur"].dump()));
  max_abs_ts_us = std::max(max_abs_ts_us, std::fabs(ts) + dur);
  whole_us = whole_us && ts == std::floor(ts) && dur == std::floor(dur);
  ev.start_ns = static_cast<int64_t>(std::llround(ts * 1000.0));
  // Durations come from "dur" itself: at 1.7e15 us a timestamp's ulp is 0.25 us, dur's is far finer.
  ev.end_ns = ev.start_ns + static_cast<int64_t>(std::llround(dur * 1000.0));
  ev.thread = thread_of(i, e);
  ev.args = args_of(i, e);
  std::string cat;
  if (e.contains("cat")) {
    if (!e["cat"].is_string())
      fail(i, e, fmt::format("field 'cat' = {}, expected a string", e["cat"].dump()));
    cat = lower(e["cat"].get<std::string>());
  }
  const bool cpu_side = cat.empty() || cat == "cpu_op" || cat == "operator" || cat == "user_annotation";
  if (cpu_side && starts_with(ev.name, kStepPrefix)) {
    ev.kind = Kind::step;
  } else if (cat.empty() || cat == "cpu_op" || cat == "operator" ||
             (cat == "user_annotation" && (starts_with(ev.name, kOptimizerStepPrefix) ||
                                           starts_with(ev.name, kOptimizerZeroGradPrefix)))) {
    ev.kind = Kind::cpu_op;
  } else if ((cat.ends_with("runtime") || cat.ends_with("driver")) && ev.args &&
             ev.args->contains("correlation")) {
    ev.kind = Kind::launch;
  } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "memcpy" ||
             cat == "memset") {
    ev.kind = Kind::gpu;
  } else {
    return;
  }
  // Validate the integer arguments the importer reads, once, here.
  for (const char* key : {"External id", "correlation", "Sequence number", "Fwd thread id", "device"}) {
    (void)int_arg(i, e, ev.args, key);
  }
  if (ev.kind == Kind::gpu && !int_arg(i, e, ev.args, "correlation")) {
    fail(i, e, "field 'args.correlation' is missing (it links GPU work to its launch)");
  }
  events.push_back(std::move(ev));
}

void EventReader::read_memory(size_t i, const Json& e) {
  MemoryEvent m;
  m.index = i;
  const double ts = number(i, e, "ts");
  max_abs_ts_us = std::max(max_abs_ts_us, std::fabs(ts));
  m.time_ns = static_cast<int64_t>(std::llround(ts * 1000.0));
  m.thread = thread_of(i, e);
  const Json* args = args_of(i, e);
  if (args == nullptr) fail(i, e, "field 'args' is missing");
  const auto bytes = int_arg(i, e, args, "Bytes");
  if (!bytes) fail(i, e, "field 'args.Bytes' is missing");
  m.bytes = *bytes;
  if (!args->contains("Addr")) fail(i, e, "field 'args.Addr' is missing");
  const Json& addr = (*args)["Addr"];
  if (!addr.is_number_integer() && !addr.is_string()) {
    fail(i, e, fmt::format("field 'args.Addr' = {}, expected an integer or a string", addr.dump()));
  }
  m.addr = addr.dump();
  m.device_type = int_arg(i, e, args, "Device Type").value_or(0);
  m.device_id = int_arg(i, e, args, "Device Id").value_or(-1);
  m.total_allocated = int_arg(i, e, args, "Total Allocated");
  memory.push_back(std::move(m));
}

std::optional<int64_t> event_int_arg(const Event& e, const char* key) {
  if (e.args == nullptr || !e.args->contains(key)) return std::nullopt;
  const Json& v = (*e.args)[key];
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return -1;
  return v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());  // checked on read
}

const Json* device_properties(const Json& doc, int64_t device) {
  if (!doc.is_object() || !doc.contains("deviceProperties") || !doc["deviceProperties"].is_array())
    return nullptr;
  for (const Json& p : doc["deviceProperties"]) {
    if (p.is_object() && p.contains("id") && p["id"].is_number_integer() && p["id"].get<int64_t>() == device)
      return &p;
  }
  return nullptr;
}

std::optional<std::string> device_property_name(const Json& doc, int64_t device) {
  const Json* p = device_properties(doc, device);
  if (p == nullptr || !p->contains("name") || !(*p)["name"].is_string()) return std::nullopt;
  return (*p)["name"].get<std::string>();
}

}  // namespace mutwo::io::kineto
