#include "profiles/trace_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "profiles/error.hpp"

namespace mutwo::profiles {
namespace {

// Writing keeps the documented key order; reading accepts any order.
using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

constexpr std::string_view kFormatName = "mutwo-trace";

// ---------------------------------------------------------------------------------------------
// Writing

OrderedJson attr_to_json(const AttrValue& value, const std::string& where, const std::string& key) {
  auto finite = [&](double x) {
    if (!std::isfinite(x)) {
      throw FormatError(fmt::format("{}: attribute '{}' = {} cannot be written (JSON has no NaN or infinity)",
                                    where, key, x));
    }
    return x;
  };
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value)) return finite(*d);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* is = std::get_if<std::vector<int64_t>>(&value)) return *is;
  OrderedJson list = OrderedJson::array();
  for (double d : std::get<std::vector<double>>(value)) list.push_back(finite(d));
  return list;
}

OrderedJson tensor_to_json(const Tensor& t) {
  OrderedJson j;
  j["id"] = t.id;
  j["name"] = t.name;
  j["shape"] = t.shape;
  j["dtype"] = dtype_name(t.dtype);
  j["role"] = role_name(t.role);
  j["bytes"] = t.bytes;
  j["width"] = t.width;
  return j;
}

OrderedJson op_to_json(const Op& op) {
  const std::string where = fmt::format("op {}", op.id);
  OrderedJson attrs = OrderedJson::object();
  for (const auto& [key, value] : op.attrs) attrs[key] = attr_to_json(value, where, key);
  OrderedJson j;
  j["id"] = op.id;
  j["name"] = op.name;
  j["kind"] = kind_name(op.kind);
  j["phase"] = phase_name(op.phase);
  j["inputs"] = op.inputs;
  j["outputs"] = op.outputs;
  j["attrs"] = std::move(attrs);
  j["flops"] = op.flops;
  j["bytes_read"] = op.bytes_read;
  j["bytes_written"] = op.bytes_written;
  j["workspace_bytes"] = op.workspace_bytes;
  j["forward_of"] = op.forward_of;
  j["recomputable"] = op.recomputable;
  j["width"] = op.width;
  return j;
}

// ---------------------------------------------------------------------------------------------
// Reading: every access checks presence and type first, so no nlohmann exception escapes.

std::string json_type(const Json& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "float";
  return j.type_name();
}

// One JSON object being read, with the label ("op 2", "tensor 3", "graph") its errors start with.
class Reader {
 public:
  Reader(const Json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const std::string& where() const { return where_; }

  // Rejects keys outside `known`: a misspelt field is an error, not silently ignored.
  void expect_only(std::initializer_list<std::string_view> known) const {
    for (const auto& item : object_.items()) {
      bool ok = false;
      for (std::string_view k : known) ok = ok || item.key() == k;
      if (!ok) throw FormatError(fmt::format("{}: unknown field '{}'", where_, item.key()));
    }
  }

  bool has(std::string_view key) const { return object_.find(key) != object_.end(); }

  const Json& field(std::string_view key) const {
    auto it = object_.find(key);
    if (it == object_.end()) throw FormatError(fmt::format("{}: missing field '{}'", where_, key));
    return *it;
  }

  [[noreturn]] void wrong_type(std::string_view key, std::string_view expected, const Json& got) const {
    throw FormatError(
        fmt::format("{}: field '{}' must be {}, got {}", where_, key, expected, json_type(got)));
  }

  int64_t integer(std::string_view key) const { return to_int64(field(key), key); }

  int32_t int32(std::string_view key) const {
    const int64_t v = integer(key);
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      throw FormatError(fmt::format("{}: field '{}' = {} is out of range", where_, key, v));
    }
    return static_cast<int32_t>(v);
  }

  std::string string(std::string_view key) const {
    const Json& j = field(key);
    if (!j.is_string()) wrong_type(key, "a string", j);
    return j.get<std::string>();
  }

  bool boolean(std::string_view key) const {
    const Json& j = field(key);
    if (!j.is_boolean()) wrong_type(key, "a boolean", j);
    return j.get<bool>();
  }

  const Json& array(std::string_view key) const {
    const Json& j = field(key);
    if (!j.is_array()) wrong_type(key, "an array", j);
    return j;
  }

  std::vector<int64_t> int_list(std::string_view key) const {
    const Json& j = field(key);
    if (!j.is_array()) wrong_type(key, "an array of integers", j);
    std::vector<int64_t> out;
    out.reserve(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      if (!j[i].is_number_integer()) {
        throw FormatError(fmt::format("{}: field '{}' must be an array of integers, element {} is {}", where_,
                                      key, i, json_type(j[i])));
      }
      out.push_back(to_int64(j[i], key));
    }
    return out;
  }

  std::vector<int32_t> id_list(std::string_view key) const {
    std::vector<int32_t> out;
    for (int64_t v : int_list(key)) {
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        throw FormatError(fmt::format("{}: field '{}' holds id {}, out of range", where_, key, v));
      }
      out.push_back(static_cast<int32_t>(v));
    }
    return out;
  }

  // Parses an enum name; the registry's UnknownNameError message becomes a FormatError naming the field.
  template <typename Parse>
  auto name(std::string_view key, Parse parse) const {
    const std::string text = string(key);
    try {
      return parse(text);
    } catch (const UnknownNameError& e) {
      throw FormatError(fmt::format("{}: field '{}': {}", where_, key, e.what()));
    }
  }

 private:
  int64_t to_int64(const Json& j, std::string_view key) const {
    if (!j.is_number_integer()) wrong_type(key, "an integer", j);
    if (j.is_number_unsigned()) {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw FormatError(fmt::format("{}: field '{}' = {} does not fit in int64", where_, key, u));
      }
      return static_cast<int64_t>(u);
    }
    return j.get<int64_t>();
  }

  const Json& object_;
  std::string where_;
};

const Json& expect_object(const Json& j, const std::string& what) {
  if (!j.is_object()) throw FormatError(fmt::format("{} must be a JSON object, got {}", what, json_type(j)));
  return j;
}

// JSON integer -> int64, float -> double, string, array of integers -> ints, array with a float -> doubles.
// An empty array reads as a list of integers (the one case the JSON cannot tell apart).
AttrValue attr_from_json(const Json& j, const std::string& where, const std::string& key) {
  auto bad = [&](const std::string& got) {
    return FormatError(
        fmt::format("{}: attribute '{}' must be an integer, a number, a string or an array of "
                    "numbers, got {}",
                    where, key, got));
  };
  auto as_int = [&](const Json& v) -> int64_t {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw FormatError(fmt::format("{}: attribute '{}' holds {}, which does not fit in int64", where, key,
                                    v.get<uint64_t>()));
    }
    return v.get<int64_t>();
  };
  if (j.is_number_integer()) return as_int(j);
  if (j.is_number_float()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  if (!j.is_array()) throw bad(json_type(j));
  bool any_float = false;
  for (const Json& v : j) {
    if (!v.is_number()) throw bad("an array holding " + json_type(v));
    any_float = any_float || v.is_number_float();
  }
  if (any_float) {
    std::vector<double> out;
    out.reserve(j.size());
    for (const Json& v : j) out.push_back(v.get<double>());
    return out;
  }
  std::vector<int64_t> out;
  out.reserve(j.size());
  for (const Json& v : j) out.push_back(as_int(v));
  return out;
}

Tensor tensor_from_json(const Json& j, size_t index) {
  const std::string where = fmt::format("tensor {}", index);
  Reader r(expect_object(j, where), where);
  r.expect_only({"id", "name", "shape", "dtype", "role", "bytes", "width"});
  Tensor t;
  t.id = r.int32("id");
  t.name = r.string("name");
  t.shape = r.int_list("shape");
  t.dtype = r.name("dtype", parse_dtype);
  t.role = r.name("role", parse_role);
  t.bytes = r.integer("bytes");
  t.width = r.int32("width");
  return t;
}

Op op_from_json(const Json& j, size_t index) {
  const std::string where = fmt::format("op {}", index);
  Reader r(expect_object(j, where), where);
  r.expect_only({"id", "name", "kind", "phase", "inputs", "outputs", "attrs", "flops", "bytes_read",
                 "bytes_written", "workspace_bytes", "forward_of", "recomputable", "width"});
  Op op;
  op.id = r.int32("id");
  op.name = r.string("name");
  op.kind = r.name("kind", parse_kind);
  op.phase = r.name("phase", parse_phase);
  op.inputs = r.id_list("inputs");
  op.outputs = r.id_list("outputs");
  const Json& attrs = r.field("attrs");
  if (!attrs.is_object()) r.wrong_type("attrs", "an object", attrs);
  for (const auto& item : attrs.items())
    op.attrs.emplace(item.key(), attr_from_json(item.value(), where, item.key()));
  op.flops = r.integer("flops");
  op.bytes_read = r.integer("bytes_read");
  op.bytes_written = r.integer("bytes_written");
  op.workspace_bytes = r.integer("workspace_bytes");
  op.forward_of = r.int32("forward_of");
  op.recomputable = r.boolean("recomputable");
  op.width = r.int32("width");
  return op;
}

Graph graph_from_json(const Json& j) {
  Reader r(expect_object(j, "field 'graph'"), "graph");
  r.expect_only({"name", "width", "batch_size", "tensors", "ops"});
  Graph g;
  g.name = r.string("name");
  g.width = r.int32("width");
  g.batch_size = r.integer("batch_size");
  if (g.batch_size < 0)
    throw FormatError(fmt::format("graph: field 'batch_size' = {} is negative", g.batch_size));
  const Json& tensors = r.array("tensors");
  g.tensors.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) g.tensors.push_back(tensor_from_json(tensors[i], i));
  const Json& ops = r.array("ops");
  g.ops.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) g.ops.push_back(op_from_json(ops[i], i));
  return g;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot open trace file '{}': {}", path.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(fmt::format("cannot read trace file '{}'", path.string()));
  return std::move(text).str();
}

}  // namespace

std::string trace_to_json(const Trace& trace) {
  OrderedJson graph;
  graph["name"] = trace.graph.name;
  graph["width"] = trace.graph.width;
  graph["batch_size"] = trace.graph.batch_size;
  OrderedJson tensors = OrderedJson::array();
  for (const Tensor& t : trace.graph.tensors) tensors.push_back(tensor_to_json(t));
  OrderedJson ops = OrderedJson::array();
  for (const Op& op : trace.graph.ops) ops.push_back(op_to_json(op));
  graph["tensors"] = std::move(tensors);
  graph["ops"] = std::move(ops);

  OrderedJson root;
  root["format"] = kFormatName;
  root["version"] = kTraceVersion;
  root["graph"] = std::move(graph);
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
  Reader r(expect_object(root, "a trace"), "trace");
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
  link(trace.graph);
  validate(trace.graph);
  return trace;
}

void write_trace(const Trace& trace, const std::filesystem::path& path) {
  const std::string text = trace_to_json(trace);
  std::filesystem::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  // Same directory as the target, so the rename is atomic on one file system.
  const std::filesystem::path tmp = dir / fmt::format(".{}.tmp-{}", path.filename().string(), ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw Error(fmt::format("cannot write trace file '{}': {}", path.string(), std::strerror(errno)));
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw Error(fmt::format("cannot write trace file '{}': write failed", path.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw Error(fmt::format("cannot write trace file '{}': {}", path.string(), ec.message()));
  }
}

Trace read_trace(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  try {
    return trace_from_json(text);
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("{}: {}", path.string(), e.what()));
  } catch (const GraphError& e) {
    throw GraphError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

}  // namespace mutwo::profiles
