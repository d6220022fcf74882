#include "profiles/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "profiles/trace_file.hpp"

namespace mutwo::profiles {

namespace {

constexpr std::array<std::string_view, 5> kInstrKindNames = {"compute", "recompute", "swap_out", "swap_in",
                                                             "free"};

bool resident_at_start(TensorRole role) {
  return is_persistent(role) || role == TensorRole::input || role == TensorRole::label;
}

}  // namespace

std::string_view instr_kind_name(InstrKind kind) {
  return kInstrKindNames.at(static_cast<size_t>(kind));
}

InstrKind parse_instr_kind(std::string_view name) {
  for (size_t i = 0; i < kInstrKindNames.size(); ++i) {
    if (kInstrKindNames[i] == name) return static_cast<InstrKind>(i);
  }
  throw UnknownNameError(
      fmt::format("unknown instruction kind '{}'; valid: compute, recompute, swap_out, swap_in, "
                  "free",
                  name));
}

// ------------------------------------------------------------------------------------------------------
// concat_graphs

Graph concat_graphs(const std::vector<Graph>& parts, std::vector<SubArray>* sub_arrays) {
  if (parts.empty()) throw GraphError("concat_graphs: no sub-array graphs given");
  Graph out;
  out.batch_size = parts.front().batch_size;
  std::vector<SubArray> ranges;
  const bool prefix = parts.size() > 1;
  for (size_t p = 0; p < parts.size(); ++p) {
    const Graph& part = parts[p];
    const std::string pre = prefix ? fmt::format("s{}/", p) : std::string();
    const auto tensor_base = static_cast<TensorId>(out.tensors.size());
    const auto op_base = static_cast<OpId>(out.ops.size());
    out.name += (p == 0 ? "" : " + ") + part.name;
    out.width = std::max(out.width, part.width);
    for (const Tensor& t : part.tensors) {
      Tensor copy = t;
      copy.id += tensor_base;
      copy.name = pre + t.name;
      out.tensors.push_back(std::move(copy));
    }
    for (const Op& op : part.ops) {
      Op copy = op;
      copy.id += op_base;
      copy.name = pre + op.name;
      for (TensorId& id : copy.inputs) id += tensor_base;
      for (TensorId& id : copy.outputs) id += tensor_base;
      if (copy.forward_of != kNoId) copy.forward_of += op_base;
      out.ops.push_back(std::move(copy));
    }
    SubArray range;
    range.name = part.name;
    range.width = part.width;
    range.first_op = op_base;
    range.end_op = static_cast<OpId>(out.ops.size());
    ranges.push_back(std::move(range));
  }
  link(out);
  validate(out);
  if (sub_arrays) *sub_arrays = std::move(ranges);
  return out;
}

// ------------------------------------------------------------------------------------------------------
// validate_schedule

namespace {

// Walks the instructions in list order (one valid execution, since waits point backwards) keeping
// each tensor's residency, and checks cross-stream ordering with one vector clock per instruction.
class ScheduleChecker {
 public:
  explicit ScheduleChecker(const Schedule& s) : s_(s), g_(s.graph) {
    std::vector<int32_t> ids;
    for (const Instruction& in : s.instructions) ids.push_back(in.stream);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (size_t i = 0; i < ids.size(); ++i) stream_index_[ids[i]] = i;
    streams_ = ids.size();
    clock_.assign(s.instructions.size() * streams_, 0);
    seq_.assign(s.instructions.size(), 0);
    last_on_stream_.assign(streams_, kNoId);
    state_.resize(g_.tensors.size());
    for (const Tensor& t : g_.tensors) state_[static_cast<size_t>(t.id)].resident = resident_at_start(t.role);
    computed_.assign(g_.ops.size(), kNoId);
  }

  void run() {
    check_sub_arrays();
    for (size_t i = 0; i < s_.instructions.size(); ++i) check(s_.instructions[i], static_cast<InstrId>(i));
    for (const Op& op : g_.ops) {
      if (computed_[static_cast<size_t>(op.id)] == kNoId) {
        throw ScheduleError(fmt::format("schedule: op {} '{}' is never computed", op.id, op.name));
      }
    }
  }

 private:
  struct TensorState {
    bool resident = false;
    bool host_copy = false;
    InstrId maker = kNoId;         // made the device copy resident (kNoId: resident from the start)
    InstrId host_maker = kNoId;    // swap_out that made the host copy
    InstrId freed_by = kNoId;      // free that released the last device copy
    std::vector<InstrId> readers;  // read the device copy since `maker`
  };

  std::string tensor_label(TensorId id) const {
    return fmt::format("tensor {} '{}'", id, g_.tensor(id).name);
  }

  std::string label(const Instruction& in, InstrId index) const {
    const std::string_view kind = instr_kind_name(in.kind);
    if (runs_op(in.kind)) {
      if (in.op >= 0 && static_cast<size_t>(in.op) < g_.ops.size()) {
        return fmt::format("instruction {} ({} op {} '{}')", index, kind, in.op, g_.op(in.op).name);
      }
      return fmt::format("instruction {} ({} op {})", index, kind, in.op);
    }
    if (in.tensor >= 0 && static_cast<size_t>(in.tensor) < g_.tensors.size()) {
      return fmt::format("instruction {} ({} {})", index, kind, tensor_label(in.tensor));
    }
    return fmt::format("instruction {} ({} tensor {})", index, kind, in.tensor);
  }

  [[noreturn]] void fail(const Instruction& in, InstrId index, const std::string& what) const {
    throw ScheduleError(fmt::format("{}: {}", label(in, index), what));
  }

  // True when instruction a happens before instruction b (a != b); kNoId is the step's start.
  bool happens_before(InstrId a, InstrId b) const {
    if (a == kNoId) return true;
    const size_t sa = stream_index_.at(s_.instructions[static_cast<size_t>(a)].stream);
    return seq_[static_cast<size_t>(a)] <= clock_[static_cast<size_t>(b) * streams_ + sa];
  }

  void require_ordered(const Instruction& in, InstrId index, InstrId before, const std::string& what) const {
    if (happens_before(before, index)) return;
    const Instruction& b = s_.instructions[static_cast<size_t>(before)];
    fail(in, index,
         fmt::format(
             "{} {} on stream {}, which is not ordered before it (same stream earlier or reached through "
             "waits)",
             what, label(b, before), b.stream));
  }

  void check_sub_arrays() const {
    OpId end = 0;
    for (size_t i = 0; i < s_.sub_arrays.size(); ++i) {
      const SubArray& sa = s_.sub_arrays[i];
      if (sa.first_op < end || sa.end_op < sa.first_op || static_cast<size_t>(sa.end_op) > g_.ops.size()) {
        throw ScheduleError(
            fmt::format("sub_array {} '{}': op range [{}, {}) is not in order within the graph's {} "
                        "ops (previous range ends at {})",
                        i, sa.name, sa.first_op, sa.end_op, g_.ops.size(), end));
      }
      if (sa.width < 1)
        throw ScheduleError(
            fmt::format("sub_array {} '{}': field 'width' = {} must be >= 1", i, sa.name, sa.width));
      end = sa.end_op;
    }
  }

  void check_fields(const Instruction& in, InstrId index) const {
    if (in.id != index) fail(in, index, fmt::format("field 'id' = {}, expected {}", in.id, index));
    if (runs_op(in.kind)) {
      if (in.op < 0 || static_cast<size_t>(in.op) >= g_.ops.size()) {
        fail(in, index, fmt::format("field 'op' = {} refers to no op ({} ops)", in.op, g_.ops.size()));
      }
      if (in.tensor != kNoId) fail(in, index, fmt::format("field 'tensor' = {} must be unset", in.tensor));
      if (!is_compute_stream(in.stream)) {
        fail(in, index,
             fmt::format("field 'stream' = {} is not a compute stream (0 or >= {})", in.stream,
                         kFirstExtraComputeStream));
      }
    } else {
      if (in.tensor < 0 || static_cast<size_t>(in.tensor) >= g_.tensors.size()) {
        fail(in, index,
             fmt::format("field 'tensor' = {} refers to no tensor ({} tensors)", in.tensor,
                         g_.tensors.size()));
      }
      if (in.op != kNoId) fail(in, index, fmt::format("field 'op' = {} must be unset", in.op));
      const int32_t expected = in.kind == InstrKind::swap_out  ? kDeviceToHostStream
                               : in.kind == InstrKind::swap_in ? kHostToDeviceStream
                                                               : kComputeStream;
      if (in.kind == InstrKind::free ? !is_compute_stream(in.stream) : in.stream != expected) {
        fail(in, index,
             in.kind == InstrKind::free
                 ? fmt::format("field 'stream' = {} is not a compute stream (0 or >= {})", in.stream,
                               kFirstExtraComputeStream)
                 : fmt::format("field 'stream' = {}, {} runs on stream {}", in.stream,
                               instr_kind_name(in.kind), expected));
      }
    }
    for (InstrId w : in.waits) {
      if (w < 0 || w >= index) {
        fail(in, index, fmt::format("field 'waits' lists {}, which is not an earlier instruction", w));
      }
    }
  }

  void tick(const Instruction& in, InstrId index) {
    const size_t si = stream_index_.at(in.stream);
    int32_t* mine = &clock_[static_cast<size_t>(index) * streams_];
    auto join = [&](InstrId other) {
      const int32_t* theirs = &clock_[static_cast<size_t>(other) * streams_];
      for (size_t k = 0; k < streams_; ++k) mine[k] = std::max(mine[k], theirs[k]);
    };
    const InstrId prev = last_on_stream_[si];
    if (prev != kNoId) join(prev);
    for (InstrId w : in.waits) join(w);
    seq_[static_cast<size_t>(index)] = (prev == kNoId ? 0 : seq_[static_cast<size_t>(prev)]) + 1;
    mine[si] = seq_[static_cast<size_t>(index)];
    last_on_stream_[si] = index;
  }

  void read(const Instruction& in, InstrId index, TensorId id) {
    TensorState& st = state_[static_cast<size_t>(id)];
    if (!st.resident) {
      fail(in, index,
           st.freed_by == kNoId
               ? fmt::format("reads {} which is not resident (never produced)", tensor_label(id))
               : fmt::format("reads {} which is not resident (freed by instruction {})", tensor_label(id),
                             st.freed_by));
    }
    require_ordered(in, index, st.maker, fmt::format("reads {} made resident by", tensor_label(id)));
    if (st.readers.empty() || st.readers.back() != index) st.readers.push_back(index);
  }

  void check(const Instruction& in, InstrId index) {
    check_fields(in, index);
    tick(in, index);
    switch (in.kind) {
      case InstrKind::compute:
      case InstrKind::recompute: {
        const Op& op = g_.op(in.op);
        const InstrId done = computed_[static_cast<size_t>(op.id)];
        if (in.kind == InstrKind::compute && done != kNoId) {
          fail(in, index, fmt::format("op is already computed by instruction {}", done));
        }
        if (in.kind == InstrKind::recompute) {
          if (done == kNoId) fail(in, index, "recomputes an op that is not computed yet");
          if (op.phase != Phase::forward || !op.recomputable) {
            fail(in, index,
                 fmt::format("op is not recomputable (phase {}, recomputable {})", phase_name(op.phase),
                             op.recomputable));
          }
        }
        for (TensorId id : op.inputs) read(in, index, id);
        for (TensorId id : op.outputs) {
          TensorState& st = state_[static_cast<size_t>(id)];
          if (in.kind == InstrKind::recompute && st.resident) continue;  // kept; recomputed copy discarded
          if (!st.resident && st.freed_by != kNoId) {
            require_ordered(in, index, st.freed_by, fmt::format("rebuilds {} freed by", tensor_label(id)));
          }
          st.resident = true;
          st.maker = index;
          st.readers.clear();
          if (in.kind == InstrKind::compute) st.host_copy = false;
        }
        if (in.kind == InstrKind::compute) computed_[static_cast<size_t>(op.id)] = index;
        break;
      }
      case InstrKind::swap_out: {
        read(in, index, in.tensor);
        TensorState& st = state_[static_cast<size_t>(in.tensor)];
        st.host_copy = true;
        st.host_maker = index;
        break;
      }
      case InstrKind::swap_in: {
        TensorState& st = state_[static_cast<size_t>(in.tensor)];
        if (!st.host_copy)
          fail(in, index, fmt::format("{} has no host copy (no swap_out)", tensor_label(in.tensor)));
        if (st.resident) fail(in, index, fmt::format("{} is already resident", tensor_label(in.tensor)));
        require_ordered(in, index, st.host_maker, "copies the host copy made by");
        require_ordered(in, index, st.freed_by, "reloads a tensor freed by");
        st.resident = true;
        st.maker = index;
        st.readers.clear();
        break;
      }
      case InstrKind::free: {
        TensorState& st = state_[static_cast<size_t>(in.tensor)];
        if (!st.resident) {
          fail(in, index,
               st.freed_by == kNoId
                   ? fmt::format("frees {} which is not resident (never produced)", tensor_label(in.tensor))
                   : fmt::format("frees {} which is not resident (already freed by instruction {})",
                                 tensor_label(in.tensor), st.freed_by));
        }
        require_ordered(in, index, st.maker, "frees a tensor made resident by");
        for (InstrId r : st.readers) require_ordered(in, index, r, "frees a tensor still read by");
        st.resident = false;
        st.freed_by = index;
        st.readers.clear();
        break;
      }
    }
  }

  const Schedule& s_;
  const Graph& g_;
  std::map<int32_t, size_t> stream_index_;
  size_t streams_ = 0;
  std::vector<int32_t> clock_;  // clock_[i * streams_ + k]: last seq on stream k that happens before-or-is i
  std::vector<int32_t> seq_;    // 1-based position of each instruction on its stream
  std::vector<InstrId> last_on_stream_;
  std::vector<TensorState> state_;
  std::vector<InstrId> computed_;
};

}  // namespace

void validate_schedule(const Schedule& schedule) {
  ScheduleChecker(schedule).run();
}

// ------------------------------------------------------------------------------------------------------
// JSON

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

std::string describe_instruction(const Schedule& schedule, InstrId id) {
  const Instruction& in = schedule.instructions.at(static_cast<size_t>(id));
  if (runs_op(in.kind)) {
    return fmt::format("{} op {} '{}'", instr_kind_name(in.kind), in.op, schedule.graph.op(in.op).name);
  }
  return fmt::format("{} tensor {} '{}'", instr_kind_name(in.kind), in.tensor,
                     schedule.graph.tensor(in.tensor).name);
}

}  // namespace mutwo::profiles
