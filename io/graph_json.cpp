#include "io/graph_json.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "support/error.hpp"
#include "support/json_reader.hpp"

namespace mutwo::io {
namespace {

using OrderedJson = nlohmann::ordered_json;
using Json = nlohmann::json;

// Writing keeps the documented key order; reading accepts any order.

OrderedJson attr_to_json(const ir::AttrValue& value, const std::string& where, const std::string& key) {
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

OrderedJson tensor_to_json(const ir::Tensor& t) {
  OrderedJson j;
  j["id"] = t.id;
  j["name"] = t.name;
  j["shape"] = t.shape;
  j["dtype"] = ir::dtype_name(t.dtype);
  j["role"] = ir::role_name(t.role);
  j["bytes"] = t.bytes;
  j["width"] = t.width;
  return j;
}

OrderedJson op_to_json(const ir::Op& op) {
  const std::string where = fmt::format("op {}", op.id);
  OrderedJson attrs = OrderedJson::object();
  for (const auto& [key, value] : op.attrs) attrs[key] = attr_to_json(value, where, key);
  OrderedJson j;
  j["id"] = op.id;
  j["name"] = op.name;
  j["kind"] = ir::kind_name(op.kind);
  j["phase"] = ir::phase_name(op.phase);
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

}  // namespace

OrderedJson graph_to_json(const ir::Graph& graph) {
  OrderedJson j;
  j["name"] = graph.name;
  j["width"] = graph.width;
  j["batch_size"] = graph.batch_size;
  // Written only when not the default, so fp32 traces stay byte-identical to earlier versions.
  if (graph.precision != ir::Precision::fp32) j["precision"] = ir::precision_name(graph.precision);
  OrderedJson tensors = OrderedJson::array();
  for (const ir::Tensor& t : graph.tensors) tensors.push_back(tensor_to_json(t));
  OrderedJson ops = OrderedJson::array();
  for (const ir::Op& op : graph.ops) ops.push_back(op_to_json(op));
  j["tensors"] = std::move(tensors);
  j["ops"] = std::move(ops);
  return j;
}

namespace {

// JSON integer -> int64, float -> double, string, array of integers -> ints, array with a float -> doubles.
// An empty array reads as a list of integers (the one case the JSON cannot tell apart).
ir::AttrValue attr_from_json(const Json& j, const std::string& where, const std::string& key) {
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
  if (!j.is_array()) throw bad(support::json_type_name(j));
  bool any_float = false;
  for (const Json& v : j) {
    if (!v.is_number()) throw bad("an array holding " + support::json_type_name(v));
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

ir::Tensor tensor_from_json(const Json& j, size_t index) {
  const std::string where = fmt::format("tensor {}", index);
  support::JsonReader r(j, where);
  r.expect_only({"id", "name", "shape", "dtype", "role", "bytes", "width"});
  ir::Tensor t;
  t.id = r.int32("id");
  t.name = r.string("name");
  t.shape = r.int_list("shape");
  t.dtype = r.name("dtype", ir::parse_dtype);
  t.role = r.name("role", ir::parse_role);
  t.bytes = r.integer("bytes");
  t.width = r.int32("width");
  return t;
}

ir::Op op_from_json(const Json& j, size_t index) {
  const std::string where = fmt::format("op {}", index);
  support::JsonReader r(j, where);
  r.expect_only({"id", "name", "kind", "phase", "inputs", "outputs", "attrs", "flops", "bytes_read",
                 "bytes_written", "workspace_bytes", "forward_of", "recomputable", "width"});
  ir::Op op;
  op.id = r.int32("id");
  op.name = r.string("name");
  op.kind = r.name("kind", ir::parse_kind);
  op.phase = r.name("phase", ir::parse_phase);
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

}  // namespace

ir::Graph graph_from_json(const Json& j) {
  support::JsonReader r(j, "graph", "field 'graph'");
  r.expect_only({"name", "width", "batch_size", "precision", "tensors", "ops"});
  ir::Graph g;
  g.name = r.string("name");
  g.width = r.int32("width");
  g.batch_size = r.integer("batch_size");
  if (g.batch_size < 0)
    throw FormatError(fmt::format("graph: field 'batch_size' = {} is negative", g.batch_size));
  if (j.contains("precision")) g.precision = r.name("precision", ir::parse_precision);
  const Json& tensors = r.array("tensors");
  g.tensors.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) g.tensors.push_back(tensor_from_json(tensors[i], i));
  const Json& ops = r.array("ops");
  g.ops.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) g.ops.push_back(op_from_json(ops[i], i));
  ir::link(g);
  ir::validate(g);
  return g;
}

}  // namespace mutwo::io
