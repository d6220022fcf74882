#include "io/execution_trace_nodes.hpp"

#include <algorithm>
#include <climits>
#include <optional>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::io::et {
namespace {

using nlohmann::json;

// An argument's shape when it is a list of integers (a tensor's), else empty.
std::vector<std::vector<int64_t>> shapes(const json& n, const char* field) {
  std::vector<std::vector<int64_t>> out;
  const auto it = n.find(field);
  if (it == n.end() || !it->is_array()) return out;
  for (const json& s : *it) {
    std::vector<int64_t> shape;
    if (s.is_array() &&
        std::all_of(s.begin(), s.end(), [](const json& d) { return d.is_number_integer(); })) {
      for (const json& d : s) shape.push_back(d.get<int64_t>());
    }
    out.push_back(std::move(shape));
  }
  return out;
}

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(int64_t node, std::string_view field, const std::string& what) const {
    throw FormatError(fmt::format("{}: execution trace node {}: field '{}' {}", source_, node, field, what));
  }

  int64_t integer(const json& n, int64_t node, const char* field, std::optional<int64_t> fallback) const {
    const auto it = n.find(field);
    if (it == n.end()) {
      if (fallback) return *fallback;
      fail(node, field, "is missing");
    }
    if (!it->is_number_integer()) fail(node, field, fmt::format("must be an integer, not {}", it->dump()));
    return it->get<int64_t>();
  }

  // [tensor_id, storage_id, offset, numel, element_size, device]; nullopt for an undefined tensor
  // (storage 0: "Tensor(nullptr (uninitialized))").
  std::optional<EtTensor> tensor(const json& v, int64_t node, const std::string& field) const {
    if (!v.is_array() || v.size() != 6 || !v[0].is_number_integer() || !v[1].is_number_integer() ||
        !v[2].is_number_integer() || !v[3].is_number_integer() || !v[4].is_number_integer()) {
      fail(
          node, field,
          fmt::format("must be a tensor [tensor_id, storage_id, offset, numel, element_size, device], not {}",
                      v.dump().substr(0, 80)));
    }
    EtTensor t;
    t.tensor_id = v[0].get<int64_t>();
    t.storage_id = v[1].get<int64_t>();
    const auto offset = v[2].get<int64_t>();
    t.numel = v[3].get<int64_t>();
    t.element_size = v[4].get<int64_t>();
    if (t.storage_id == 0) return std::nullopt;
    t.on_gpu = v[5].is_string() && v[5].get<std::string>().starts_with("cuda");
    if (offset < 0 || t.numel < 0 || t.element_size < 0) {
      fail(node, field,
           fmt::format("has offset {}, numel {}, element_size {}: sizes must be >= 0", offset, t.numel,
                       t.element_size));
    }
    int64_t elements = 0;
    if (__builtin_add_overflow(offset, t.numel, &elements) ||
        __builtin_mul_overflow(elements, t.element_size, &t.extent_bytes)) {
      fail(node, field,
           fmt::format("(offset {} + numel {}) x element_size {} overflows 64-bit bytes", offset, t.numel,
                       t.element_size));
    }
    return t;
  }

  // The tensors among a node's inputs or outputs: "Tensor(...)" values and the tensors of
  // "GenericList[Tensor...]" values (foreach ops).
  std::vector<EtTensor> tensors(const json& n, int64_t node, const char* values_field,
                                const char* types_field) const {
    std::vector<EtTensor> out;
    const auto values = n.find(values_field);
    const auto types = n.find(types_field);
    if (values == n.end() || types == n.end()) return out;
    if (!values->is_array() || !types->is_array()) fail(node, values_field, "and its types must be arrays");
    if (values->size() != types->size()) {
      fail(node, types_field, fmt::format("has {} entries for {} values", types->size(), values->size()));
    }
    for (size_t i = 0; i < values->size(); ++i) {
      if (!(*types)[i].is_string()) fail(node, types_field, "entries must be strings");
      const std::string type = (*types)[i].get<std::string>();
      const std::string field = fmt::format("{}[{}]", values_field, i);
      if (type.starts_with("Tensor")) {
        if (auto t = tensor((*values)[i], node, field)) out.push_back(*t);
      } else if (type.starts_with("GenericList[Tensor")) {
        if (!(*values)[i].is_array()) fail(node, field, "must be a list of tensors");
        for (const json& v : (*values)[i]) {
          if (auto t = tensor(v, node, field)) out.push_back(*t);
        }
      }
    }
    return out;
  }

  std::vector<EtNode> nodes(const json& doc) const {
    const json& list = doc.at("nodes");
    std::vector<EtNode> out;
    out.reserve(list.size());
    for (const json& n : list) {
      if (!n.is_object())
        throw FormatError(fmt::format("{}: execution trace: every node must be an object", source_));
      EtNode e;
      e.id = integer(n, -1, "id", std::nullopt);
      e.parent = integer(n, e.id, "parent", std::nullopt);
      e.rf_id = integer(n, e.id, "rf_id", -1);
      e.seq_id = integer(n, e.id, "seq_id", -1);
      const auto name = n.find("name");
      if (name == n.end() || !name->is_string()) fail(e.id, "name", "must be a string");
      e.name = name->get<std::string>();
      e.inputs = tensors(n, e.id, "inputs", "input_types");
      e.outputs = tensors(n, e.id, "outputs", "output_types");
      e.input_shapes = shapes(n, "input_shapes");
      if (const auto types = n.find("input_types"); types != n.end()) {
        for (const json& t : *types) e.input_types.push_back(t.is_string() ? t.get<std::string>() : "");
      }
      if (const auto values = n.find("inputs"); values != n.end()) e.input_values = &*values;
      e.output_shapes = shapes(n, "output_shapes");
      out.push_back(std::move(e));
    }
    std::sort(out.begin(), out.end(), [](const EtNode& a, const EtNode& b) { return a.id < b.id; });
    for (size_t i = 1; i < out.size(); ++i) {
      if (out[i].id == out[i - 1].id) fail(out[i].id, "id", "appears twice");
    }
    return out;
  }

 private:
  std::string_view source_;
};

}  // namespace

std::vector<size_t> subtree(const std::vector<EtNode>& nodes, size_t root) {
  std::vector<size_t> out{root};
  for (size_t k = 0; k < out.size(); ++k) {
    for (size_t c : nodes[out[k]].children) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  return out;
}

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d)) return 0;  // not a size mutwo can use
    n *= d;
  }
  return n;
}

std::vector<EtNode> read_nodes(const json& doc, std::string_view source) {
  return Reader(source).nodes(doc);
}

}  // namespace mutwo::io::et
