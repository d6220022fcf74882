#include "profiles/schedule_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "profiles/schedule_check.hpp"
#include "profiles/trace_file.hpp"

namespace mutwo::profiles {

namespace {

using Json = nlohmann::ordered_json;

const Json& field(const Json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) throw FormatError(fmt::format("{}: missing field '{}'", where, key));
  return *it;
}

int64_t int_field(const Json& obj, const char* key, const std::string& where) {
  const Json& v = field(obj, key, where);
  if (!v.is_number_integer())
    throw FormatError(fmt::format("{}: field '{}' must be an integer, got {}", where, key, v.dump()));
  return v.get<int64_t>();
}

int32_t int32_field(const Json& obj, const char* key, const std::string& where) {
  const int64_t v = int_field(obj, key, where);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    throw FormatError(fmt::format("{}: field '{}' = {} is out of range", where, key, v));
  return static_cast<int32_t>(v);
}

std::string string_field(const Json& obj, const char* key, const std::string& where) {
  const Json& v = field(obj, key, where);
  if (!v.is_string())
    throw FormatError(fmt::format("{}: field '{}' must be a string, got {}", where, key, v.dump()));
  return v.get<std::string>();
}

const Json& array_field(const Json& obj, const char* key, const std::string& where) {
  const Json& v = field(obj, key, where);
  if (!v.is_array()) throw FormatError(fmt::format("{}: field '{}' must be an array", where, key));
  return v;
}

void expect_object(const Json& obj, std::initializer_list<std::string_view> keys, const std::string& where) {
  if (!obj.is_object())
    throw FormatError(fmt::format("{}: must be a JSON object, got {}", where, obj.dump()));
  for (const auto& item : obj.items()) {
    if (std::find(keys.begin(), keys.end(), item.key()) == keys.end()) {
      throw FormatError(fmt::format("{}: unknown field '{}'", where, item.key()));
    }
  }
}

Json instruction_json(const Instruction& in) {
  Json j;
  j["id"] = in.id;
  j["kind"] = instr_kind_name(in.kind);
  j["stream"] = in.stream;
  if (runs_op(in.kind)) {
    j["op"] = in.op;
  } else {
    j["tensor"] = in.tensor;
  }
  j["waits"] = in.waits;
  return j;
}

Instruction parse_instruction(const Json& j, size_t index) {
  const std::string where = fmt::format("instruction {}", index);
  expect_object(j, {"id", "kind", "stream", "op", "tensor", "waits"}, where);
  Instruction in;
  in.id = int32_field(j, "id", where);
  try {
    in.kind = parse_instr_kind(string_field(j, "kind", where));
  } catch (const UnknownNameError& e) {
    throw FormatError(fmt::format("{}: field 'kind': {}", where, e.what()));
  }
  in.stream = int32_field(j, "stream", where);
  const char* ref = runs_op(in.kind) ? "op" : "tensor";
  const char* other = runs_op(in.kind) ? "tensor" : "op";
  if (j.contains(other)) {
    throw FormatError(fmt::format("{}: field '{}' is not allowed for a {} instruction", where, other,
                                  instr_kind_name(in.kind)));
  }
  (runs_op(in.kind) ? in.op : in.tensor) = int32_field(j, ref, where);
  const Json& waits = array_field(j, "waits", where);
  for (size_t k = 0; k < waits.size(); ++k) {
    if (!waits[k].is_number_integer() || waits[k].get<int64_t>() < 0 ||
        waits[k].get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      throw FormatError(fmt::format("{}: field 'waits' entry {} must be an instruction id, got {}", where, k,
                                    waits[k].dump()));
    }
    in.waits.push_back(static_cast<InstrId>(waits[k].get<int64_t>()));
  }
  return in;
}

}  // namespace

std::string schedule_to_json(const Schedule& schedule) {
  Trace trace;
  trace.graph = schedule.graph;
  const Json graph = Json::parse(trace_to_json(trace)).at("graph");
  std::string graph_text = graph.dump(2);
  std::string indented;
  for (char c : graph_text) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  std::ostringstream out;
  out << "{\n  \"format\": \"mutwo-schedule\",\n  \"version\": " << kScheduleVersion
      << ",\n  \"policy\": " << Json(schedule.policy).dump() << ",\n  \"graph\": " << indented
      << ",\n  \"sub_arrays\": [";
  for (size_t i = 0; i < schedule.sub_arrays.size(); ++i) {
    const SubArray& sa = schedule.sub_arrays[i];
    Json j;
    j["name"] = sa.name;
    j["width"] = sa.width;
    j["first_op"] = sa.first_op;
    j["end_op"] = sa.end_op;
    out << (i ? ",\n    " : "\n    ") << j.dump();
  }
  out << (schedule.sub_arrays.empty() ? "" : "\n  ") << "],\n  \"instructions\": [";
  for (size_t i = 0; i < schedule.instructions.size(); ++i) {
    out << (i ? ",\n    " : "\n    ") << instruction_json(schedule.instructions[i]).dump();
  }
  out << (schedule.instructions.empty() ? "" : "\n  ") << "]\n}\n";
  return out.str();
}

Schedule schedule_from_json(const std::string& text) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw FormatError(fmt::format("schedule: not valid JSON: {}", e.what()));
  }
  const std::string where = "schedule";
  // The format first: a trace or another JSON file given as a schedule is named as such.
  if (root.is_object() && root.contains("format")) {
    if (const std::string format = string_field(root, "format", where); format != "mutwo-schedule") {
      throw FormatError(fmt::format("schedule: field 'format' = '{}', expected 'mutwo-schedule'", format));
    }
  }
  expect_object(root, {"format", "version", "policy", "graph", "sub_arrays", "instructions"}, where);
  string_field(root, "format", where);  // present and a string
  if (const int64_t version = int_field(root, "version", where); version != kScheduleVersion) {
    throw FormatError(fmt::format("schedule: unsupported version {} (this build reads version {})", version,
                                  kScheduleVersion));
  }
  Schedule s;
  s.policy = string_field(root, "policy", where);
  Json trace;
  trace["format"] = "mutwo-trace";
  trace["version"] = kTraceVersion;
  trace["graph"] = field(root, "graph", where);
  try {
    s.graph = trace_from_json(trace.dump()).graph;
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("schedule: field 'graph': {}", e.what()));
  } catch (const GraphError& e) {
    throw GraphError(fmt::format("schedule: field 'graph': {}", e.what()));
  }
  const Json& subs = array_field(root, "sub_arrays", where);
  for (size_t i = 0; i < subs.size(); ++i) {
    const std::string sub_where = fmt::format("sub_array {}", i);
    expect_object(subs[i], {"name", "width", "first_op", "end_op"}, sub_where);
    SubArray sa;
    sa.name = string_field(subs[i], "name", sub_where);
    sa.width = int32_field(subs[i], "width", sub_where);
    sa.first_op = int32_field(subs[i], "first_op", sub_where);
    sa.end_op = int32_field(subs[i], "end_op", sub_where);
    s.sub_arrays.push_back(std::move(sa));
  }
  const Json& instrs = array_field(root, "instructions", where);
  s.instructions.reserve(instrs.size());
  for (size_t i = 0; i < instrs.size(); ++i) s.instructions.push_back(parse_instruction(instrs[i], i));
  validate_schedule(s);
  return s;
}

void write_schedule(const Schedule& schedule, const std::string& path) {
  const std::string text = schedule_to_json(schedule);
  const std::filesystem::path target(path);
  std::filesystem::path temp = target;
  temp += ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) throw FormatError(fmt::format("cannot write schedule file '{}'", temp.string()));
    out << text;
    out.close();
    if (!out) throw FormatError(fmt::format("cannot write schedule file '{}'", temp.string()));
  }
  std::error_code ec;
  std::filesystem::rename(temp, target, ec);
  if (ec) {
    const std::string reason = ec.message();
    std::filesystem::remove(temp, ec);
    throw FormatError(fmt::format("cannot write schedule file '{}': {}", path, reason));
  }
}

Schedule read_schedule(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError(fmt::format("cannot open schedule file '{}'", path));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return schedule_from_json(text.str());
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace mutwo::profiles
