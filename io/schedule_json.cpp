#include "io/schedule_json.hpp"

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/graph_json.hpp"
#include "ir/schedule_check.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::io {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kScheduleFormat = "mutwo-schedule";

OrderedJson instruction_json(const ir::Instruction& in) {
  OrderedJson j;
  j["id"] = in.id;
  j["kind"] = ir::instr_kind_name(in.kind);
  j["stream"] = in.stream;
  if (ir::runs_op(in.kind)) {
    j["op"] = in.op;
  } else {
    j["tensor"] = in.tensor;
  }
  j["waits"] = in.waits;
  return j;
}

ir::Instruction parse_instruction(const Json& j, size_t index) {
  const std::string where = fmt::format("instruction {}", index);
  support::JsonReader r(j, where);
  r.expect_only({"id", "kind", "stream", "op", "tensor", "waits"});
  ir::Instruction in;
  in.id = r.int32("id");
  in.kind = r.name("kind", ir::parse_instr_kind);
  in.stream = r.int32("stream");
  const char* ref = ir::runs_op(in.kind) ? "op" : "tensor";
  const char* other = ir::runs_op(in.kind) ? "tensor" : "op";
  if (r.has(other)) {
    throw FormatError(fmt::format("{}: field '{}' is not allowed for a {} instruction", where, other,
                                  ir::instr_kind_name(in.kind)));
  }
  (ir::runs_op(in.kind) ? in.op : in.tensor) = r.int32(ref);
  const Json& waits = r.array("waits");
  for (size_t k = 0; k < waits.size(); ++k) {
    if (!waits[k].is_number_integer() || waits[k].get<int64_t>() < 0 ||
        waits[k].get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      throw FormatError(fmt::format("{}: field 'waits' entry {} must be an instruction id, got {}", where, k,
                                    waits[k].dump()));
    }
    in.waits.push_back(static_cast<ir::InstrId>(waits[k].get<int64_t>()));
  }
  return in;
}

}  // namespace

std::string schedule_to_json(const ir::Schedule& schedule) {
  // One line per sub-array and per instruction; the graph indented as a block.
  std::string graph_text = graph_to_json(schedule.graph).dump(2);
  std::string indented;
  for (char c : graph_text) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  std::ostringstream out;
  out << "{\n  \"format\": \"" << kScheduleFormat << "\",\n  \"version\": " << ir::kScheduleVersion
      << ",\n  \"policy\": " << OrderedJson(schedule.policy).dump() << ",\n  \"graph\": " << indented
      << ",\n  \"sub_arrays\": [";
  for (size_t i = 0; i < schedule.sub_arrays.size(); ++i) {
    const ir::SubArray& sa = schedule.sub_arrays[i];
    OrderedJson j;
    j["name"] = sa.name;
    j["width"] = sa.width;
    j["first_op"] = sa.first_op;
    j["end_op"] = sa.end_op;
    j["batch_size"] = sa.batch_size;
    if (sa.first_model != ir::kNoId) j["first_model"] = sa.first_model;  // absent: schedule order
    out << (i ? ",\n    " : "\n    ") << j.dump();
  }
  out << (schedule.sub_arrays.empty() ? "" : "\n  ") << "],\n  \"instructions\": [";
  for (size_t i = 0; i < schedule.instructions.size(); ++i) {
    out << (i ? ",\n    " : "\n    ") << instruction_json(schedule.instructions[i]).dump();
  }
  out << (schedule.instructions.empty() ? "" : "\n  ") << "]";
  if (!schedule.host_state.empty()) out << ",\n  \"host_state\": " << OrderedJson(schedule.host_state).dump();
  if (schedule.host_stream != ir::kNoStream) out << ",\n  \"host_stream\": " << schedule.host_stream;
  out << "\n}\n";
  return out.str();
}

ir::Schedule schedule_from_json(const std::string& text) {
  Json root;
  try {
    root = Json::parse(text, support::unique_keys_callback());
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for a number past double's range
    throw FormatError(fmt::format("schedule: not valid JSON: {}", e.what()));
  }
  support::JsonReader r(root, "schedule");
  // The format first: a trace or another JSON file given as a schedule is named as such.
  if (r.has("format")) {
    if (const std::string format = r.string("format"); format != kScheduleFormat) {
      throw FormatError(
          fmt::format("schedule: field 'format' = '{}', expected '{}'", format, kScheduleFormat));
    }
  }
  r.expect_only(
      {"format", "version", "policy", "graph", "sub_arrays", "instructions", "host_state", "host_stream"});
  r.string("format");  // present and a string
  const int64_t version = r.integer("version");
  if (version < 1 || version > ir::kScheduleVersion) {
    throw FormatError(fmt::format("schedule: unsupported version {} (this build reads versions 1 to {})",
                                  version, ir::kScheduleVersion));
  }
  if (version < 2 && r.has("host_state")) {
    throw FormatError("schedule: field 'host_state' needs version 2 (the file says version 1)");
  }
  if (version < 3 && r.has("host_stream")) {
    throw FormatError(
        fmt::format("schedule: field 'host_stream' needs version 3 (the file says version {})", version));
  }
  ir::Schedule s;
  s.policy = r.string("policy");
  try {
    s.graph = graph_from_json(r.field("graph"));
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("schedule: field 'graph': {}", e.what()));
  } catch (const GraphError& e) {
    throw GraphError(fmt::format("schedule: field 'graph': {}", e.what()));
  }
  const Json& subs = r.array("sub_arrays");
  for (size_t i = 0; i < subs.size(); ++i) {
    support::JsonReader sub(subs[i], fmt::format("sub_array {}", i));
    if (version >= 4) {
      sub.expect_only({"name", "width", "first_op", "end_op", "batch_size", "first_model"});
    } else {
      sub.expect_only({"name", "width", "first_op", "end_op"});
    }
    ir::SubArray sa;
    sa.name = sub.string("name");
    sa.width = sub.int32("width");
    sa.first_op = sub.int32("first_op");
    sa.end_op = sub.int32("end_op");
    // Before version 4 every sub-array trained the graph's batch.
    sa.batch_size = version >= 4 ? sub.integer("batch_size") : s.graph.batch_size;
    if (sub.has("first_model")) sa.first_model = sub.int32("first_model");
    s.sub_arrays.push_back(std::move(sa));
  }
  const Json& instrs = r.array("instructions");
  s.instructions.reserve(instrs.size());
  for (size_t i = 0; i < instrs.size(); ++i) s.instructions.push_back(parse_instruction(instrs[i], i));
  if (r.has("host_state")) {
    const Json& ids = r.array("host_state");
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!ids[i].is_number_integer()) {
        throw FormatError(
            fmt::format("schedule: field 'host_state' entry {} is not an integer tensor id", i));
      }
      const int64_t id = ids[i].get<int64_t>();
      if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
        throw FormatError(
            fmt::format("schedule: field 'host_state' entry {} = {} is not a tensor id", i, id));
      }
      s.host_state.push_back(static_cast<ir::TensorId>(id));
    }
  }
  if (r.has("host_stream")) s.host_stream = r.int32("host_stream");
  ir::validate_schedule(s);
  ir::check_forward_flops(s.graph);
  return s;
}

void write_schedule(const ir::Schedule& schedule, const std::string& path) {
  support::write_file_atomic(path, schedule_to_json(schedule), "schedule file");
}

ir::Schedule read_schedule(const std::string& path) {
  std::string text;
  try {
    text = support::read_text_file(path, "schedule file");
  } catch (const FormatError&) {
    throw;
  } catch (const Error& e) {
    throw FormatError(e.what());  // a schedule that cannot be read is reported as a bad schedule file
  }
  try {
    return schedule_from_json(text);
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("{}: {}", path, e.what()));
  } catch (const ir::ScheduleError& e) {  // the file is sound JSON, its schedule is not
    throw ir::ScheduleError(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace mutwo::io
