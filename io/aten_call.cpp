#include "io/aten_call.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "ir/kind_rules.hpp"
#include "support/error.hpp"

namespace mutwo::io {
namespace {

using nlohmann::json;

// Reads one call's arguments; every getter answers nullopt where the argument is absent or of
// another type, so a call that does not fit stays untyped rather than mis-typed.
class Args {
 public:
  explicit Args(const AtenArguments& a) : a_(a) {}

  size_t count() const { return a_.types.size(); }

  const json* value(size_t i) const {
    if (a_.values == nullptr || !a_.values->is_array() || i >= a_.values->size()) return nullptr;
    return &(*a_.values)[i];
  }

  std::optional<ir::Tensor> tensor(size_t i) const {
    if (i >= a_.types.size() || i >= a_.shapes.size()) return std::nullopt;
    const std::optional<ir::DType> dtype = aten_tensor_dtype(a_.types[i]);
    if (!dtype) return std::nullopt;
    ir::Tensor t;
    t.name = "arg" + std::to_string(i);
    t.shape = a_.shapes[i];
    t.dtype = *dtype;
    return t;
  }

  bool is_none(size_t i) const {
    return i >= a_.types.size() || a_.types[i] == "None" || a_.types[i].find("nullptr") != std::string::npos;
  }

  std::optional<int64_t> integer(size_t i) const {
    const json* v = value(i);
    if (v == nullptr || !v->is_number_integer()) return std::nullopt;
    return v->get<int64_t>();
  }

  std::optional<double> number(size_t i) const {
    const json* v = value(i);
    if (v == nullptr || !v->is_number()) return std::nullopt;
    return v->get<double>();
  }

  std::optional<bool> boolean(size_t i) const {
    const json* v = value(i);
    if (v == nullptr || !v->is_boolean()) return std::nullopt;
    return v->get<bool>();
  }

  std::optional<std::string> string(size_t i) const {
    const json* v = value(i);
    if (v == nullptr || !v->is_string()) return std::nullopt;
    return v->get<std::string>();
  }

  // An int list ([2, 2]) or a single int, which aten widens to every spatial dim.
  std::optional<std::vector<int64_t>> pair(size_t i) const {
    const json* v = value(i);
    if (v == nullptr) return std::nullopt;
    if (v->is_number_integer()) return std::vector<int64_t>{v->get<int64_t>(), v->get<int64_t>()};
    if (!v->is_array()) return std::nullopt;
    std::vector<int64_t> out;
    for (const json& x : *v) {
      if (!x.is_number_integer()) return std::nullopt;
      out.push_back(x.get<int64_t>());
    }
    if (out.size() == 1) out.push_back(out[0]);
    return out;
  }

 private:
  const AtenArguments& a_;
};

// What a call maps to before its kind's rule checks it: the kind, its inputs (argument index and
// the shape to use when it differs from the argument's, a transposed GEMM operand) and attributes.
struct Mapping {
  ir::OpKind kind = ir::OpKind::opaque;
  std::vector<std::pair<size_t, std::optional<std::vector<int64_t>>>> inputs;
  ir::Attributes attrs;
};

using Mapper = std::function<std::optional<Mapping>(const Args&)>;

// c10::ScalarType's codes (c10/core/ScalarType.h) of the floating dtypes, as a trace records a dtype
// argument; nullopt for the others.
std::optional<int64_t> scalar_type_code(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::f16:
      return 5;
    case ir::DType::f32:
      return 6;
    case ir::DType::f64:
      return 7;
    case ir::DType::bf16:
      return 15;
    default:
      return std::nullopt;
  }
}

std::optional<Mapping> unary(ir::OpKind kind, const Args& a) {
  if (!a.tensor(0)) return std::nullopt;
  return Mapping{kind, {{0, std::nullopt}}, {}};
}

// x @ W^T with W [N, K] from the second operand [..., K, N].
std::optional<Mapping> gemm(size_t x, size_t w, const Args& a) {
  const auto lhs = a.tensor(x);
  const auto rhs = a.tensor(w);
  if (!lhs || !rhs || lhs->shape.size() < 2 || rhs->shape.size() < 2) return std::nullopt;
  const std::vector<int64_t>& s = rhs->shape;
  return Mapping{ir::OpKind::linear,
                 {{x, std::nullopt}, {w, std::vector<int64_t>{s[s.size() - 1], s[s.size() - 2]}}},
                 {}};
}

// The two tensor operands of add/mul, the larger first (mutwo's add and mul broadcast the second).
std::optional<Mapping> binary(ir::OpKind kind, const Args& a) {
  const auto x = a.tensor(0);
  const auto y = a.tensor(1);
  if (!x || !y || !ir::is_floating(x->dtype) || !ir::is_floating(y->dtype)) return std::nullopt;
  const bool swap = ir::element_count(y->shape) > ir::element_count(x->shape);
  return Mapping{kind, {{swap ? 1u : 0u, std::nullopt}, {swap ? 0u : 1u, std::nullopt}}, {}};
}

std::optional<Mapping> conv(const Args& a, size_t groups_arg, bool has_transposed) {
  if (!a.tensor(0) || !a.tensor(1)) return std::nullopt;
  const auto stride = a.pair(3), padding = a.pair(4), dilation = a.pair(5);
  const auto groups = a.integer(groups_arg);
  if (!stride || !padding || !dilation || !groups) return std::nullopt;
  if (has_transposed && a.boolean(6).value_or(true)) return std::nullopt;
  Mapping m{ir::OpKind::conv2d, {{0, std::nullopt}, {1, std::nullopt}}, {}};
  if (!a.is_none(2)) m.inputs.push_back({2, std::nullopt});
  m.attrs["stride"] = *stride;
  m.attrs["padding"] = *padding;
  m.attrs["dilation"] = *dilation;
  m.attrs["groups"] = *groups;
  return m;
}

// (self, kernel_size, stride, padding, dilation, ceil_mode).
std::optional<Mapping> max_pool(const Args& a) {
  const auto kernel = a.pair(1), stride = a.pair(2), padding = a.pair(3), dilation = a.pair(4);
  const auto ceil_mode = a.boolean(5);
  if (!a.tensor(0) || !kernel || !padding || !ceil_mode ||
      dilation.value_or(std::vector<int64_t>{}) != std::vector<int64_t>{1, 1}) {
    return std::nullopt;
  }
  Mapping m{ir::OpKind::max_pool2d, {{0, std::nullopt}}, {}};
  m.attrs["kernel"] = *kernel;
  m.attrs["stride"] = stride && !stride->empty() ? *stride : *kernel;  // [] means the kernel's
  m.attrs["padding"] = *padding;
  if (*ceil_mode) m.attrs["ceil_mode"] = int64_t{1};
  return m;
}

// (self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override): no override.
std::optional<Mapping> avg_pool(const Args& a) {
  const auto kernel = a.pair(1), stride = a.pair(2), padding = a.pair(3);
  const auto ceil_mode = a.boolean(4), include_pad = a.boolean(5);
  if (!a.tensor(0) || !kernel || !padding || !ceil_mode || !include_pad || !a.is_none(6)) return std::nullopt;
  Mapping m{ir::OpKind::avg_pool2d, {{0, std::nullopt}}, {}};
  m.attrs["kernel"] = *kernel;
  m.attrs["stride"] = stride && !stride->empty() ? *stride : *kernel;
  m.attrs["padding"] = *padding;
  m.attrs["ceil_mode"] = int64_t{*ceil_mode ? 1 : 0};
  m.attrs["count_include_pad"] = int64_t{*include_pad ? 1 : 0};
  return m;
}

std::optional<Mapping> dropout(const Args& a) {
  const auto p = a.number(1);
  if (!a.tensor(0) || !p || *p <= 0 || !a.boolean(2).value_or(false))
    return std::nullopt;  // else the identity
  Mapping m{ir::OpKind::dropout, {{0, std::nullopt}}, {}};
  m.attrs["p"] = *p;
  return m;
}

const std::map<std::string, Mapper, std::less<>>& mappers() {
  static const std::map<std::string, Mapper, std::less<>> table = [] {
    std::map<std::string, Mapper, std::less<>> t;
    t["aten::linear"] = [](const Args& a) -> std::optional<Mapping> {
      if (!a.tensor(0) || !a.tensor(1)) return std::nullopt;
      Mapping m{ir::OpKind::linear, {{0, std::nullopt}, {1, std::nullopt}}, {}};
      if (!a.is_none(2)) m.inputs.push_back({2, std::nullopt});
      return m;
    };
    t["aten::addmm"] = [](const Args& a) -> std::optional<Mapping> {  // bias + m1 @ m2
      auto m = gemm(1, 2, a);
      if (m) m->inputs.push_back({0, std::nullopt});
      return m;
    };
    t["aten::mm"] = [](const Args& a) { return gemm(0, 1, a); };
    t["aten::matmul"] = [](const Args& a) { return gemm(0, 1, a); };
    t["aten::bmm"] = [](const Args& a) { return gemm(0, 1, a); };
    t["aten::conv2d"] = [](const Args& a) { return conv(a, 6, false); };
    t["aten::convolution"] = [](const Args& a) { return conv(a, 8, true); };
    t["aten::_convolution"] = [](const Args& a) { return conv(a, 8, true); };
    t["aten::batch_norm"] = [](const Args& a) -> std::optional<Mapping> {
      const auto x = a.tensor(0);
      const auto eps = a.number(7);
      if (!x || x->shape.size() != 4 || a.is_none(1) || a.is_none(2) || !eps) return std::nullopt;
      Mapping m{ir::OpKind::batchnorm2d, {{0, std::nullopt}, {1, std::nullopt}, {2, std::nullopt}}, {}};
      m.attrs["eps"] = *eps;
      return m;
    };
    t["aten::layer_norm"] = [](const Args& a) -> std::optional<Mapping> {
      const auto normalized = a.pair(1);
      const auto eps = a.number(4);
      if (!a.tensor(0) || !normalized || a.value(1)->size() != 1 || a.is_none(2) || a.is_none(3) || !eps) {
        return std::nullopt;
      }
      Mapping m{ir::OpKind::layernorm, {{0, std::nullopt}, {2, std::nullopt}, {3, std::nullopt}}, {}};
      m.attrs["eps"] = *eps;
      return m;
    };
    for (const auto& [name, kind] :
         std::vector<std::pair<std::string, ir::OpKind>>{{"relu", ir::OpKind::relu},
                                                         {"tanh", ir::OpKind::tanh},
                                                         {"sigmoid", ir::OpKind::sigmoid},
                                                         {"hardswish", ir::OpKind::hardswish},
                                                         {"hardsigmoid", ir::OpKind::hardsigmoid},
                                                         {"silu", ir::OpKind::silu}}) {
      const ir::OpKind k = kind;  // a structured binding cannot be captured before C++20 in clang 14
      const Mapper f = [k](const Args& a) { return unary(k, a); };
      t["aten::" + name] = f;
      t["aten::" + name + "_"] = f;
    }
    const Mapper relu6 = [](const Args& a) -> std::optional<Mapping> {
      if (a.number(1) != 0.0 || a.number(2) != 6.0) return std::nullopt;
      return unary(ir::OpKind::relu6, a);
    };
    t["aten::hardtanh"] = relu6;
    t["aten::hardtanh_"] = relu6;
    t["aten::relu6"] = [](const Args& a) { return unary(ir::OpKind::relu6, a); };
    t["aten::gelu"] = [](const Args& a) -> std::optional<Mapping> {
      const std::string approximate = a.string(1).value_or("none");
      if (approximate != "none" && approximate != "tanh") return std::nullopt;
      auto m = unary(ir::OpKind::gelu, a);
      if (m) m->attrs["approximate"] = int64_t{approximate == "tanh" ? 1 : 0};
      return m;
    };
    t["aten::dropout"] = dropout;
    t["aten::dropout_"] = dropout;
    t["aten::native_dropout"] = dropout;
    for (const char* name : {"aten::add", "aten::add_"})
      t[name] = [](const Args& a) { return binary(ir::OpKind::add, a); };
    for (const char* name : {"aten::mul", "aten::mul_"})
      t[name] = [](const Args& a) { return binary(ir::OpKind::mul, a); };
    // softmax(self, dim, dtype=None) and _softmax(self, dim, half_to_float): a half input read into
    // float in the kernel (autocast's call on CUDA) is attr dtype fp32 (ir/kinds/elementwise.cpp);
    // any other conversion is ATen's copy first, another call: left untyped.
    const auto softmax = [](const Args& a, bool converts) -> std::optional<Mapping> {
      const auto x = a.tensor(0);
      const auto dim = a.integer(1);
      if (!x || !dim || (*dim != -1 && *dim != static_cast<int64_t>(x->shape.size()) - 1))
        return std::nullopt;
      auto m = unary(ir::OpKind::softmax, a);
      if (m && converts) {
        if (x->dtype != ir::DType::f16) return std::nullopt;
        m->attrs["dtype"] = std::string(ir::dtype_name(ir::DType::f32));
      }
      return m;
    };
    t["aten::softmax"] = [softmax](const Args& a) -> std::optional<Mapping> {
      const auto x = a.tensor(0);
      if (!x) return std::nullopt;
      if (a.is_none(2)) return softmax(a, false);
      const std::optional<int64_t> dtype = a.integer(2);  // a c10::ScalarType code
      if (dtype && dtype == scalar_type_code(x->dtype)) return softmax(a, false);
      if (dtype && dtype == scalar_type_code(ir::DType::f32)) return softmax(a, true);
      return std::nullopt;
    };
    t["aten::_softmax"] = [softmax](const Args& a) -> std::optional<Mapping> {
      const std::optional<bool> half_to_float = a.boolean(2);
      if (!half_to_float) return std::nullopt;
      return softmax(a, *half_to_float);
    };
    t["aten::cross_entropy_loss"] = [](const Args& a) -> std::optional<Mapping> {
      // (self, target, weight, reduction, ignore_index, label_smoothing): mean, unweighted, unsmoothed.
      if (!a.tensor(0) || !a.tensor(1) || !a.is_none(2) || a.integer(3) != 1 ||
          a.number(5).value_or(0.0) != 0.0) {
        return std::nullopt;
      }
      return Mapping{ir::OpKind::cross_entropy, {{0, std::nullopt}, {1, std::nullopt}}, {}};
    };
    t["aten::max_pool2d"] = max_pool;
    t["aten::max_pool2d_with_indices"] = max_pool;
    t["aten::avg_pool2d"] = avg_pool;
    t["aten::adaptive_avg_pool2d"] = [](const Args& a) -> std::optional<Mapping> {
      if (a.pair(1) != std::vector<int64_t>{1, 1}) return std::nullopt;
      return unary(ir::OpKind::adaptive_avg_pool2d, a);
    };
    t["aten::flatten"] = [](const Args& a) -> std::optional<Mapping> {
      const auto x = a.tensor(0);
      if (!x || x->shape.size() != 4 || a.integer(1) != 1 || a.integer(2).value_or(-1) != -1)
        return std::nullopt;
      return unary(ir::OpKind::flatten, a);
    };
    t["aten::embedding"] = [](const Args& a) -> std::optional<Mapping> {  // (weight, indices, ...)
      if (!a.tensor(0) || !a.tensor(1)) return std::nullopt;
      return Mapping{ir::OpKind::embedding, {{1, std::nullopt}, {0, std::nullopt}}, {}};
    };
    return t;
  }();
  return table;
}

}  // namespace

std::optional<ir::DType> aten_tensor_dtype(std::string_view type) {
  static const std::map<std::string, ir::DType, std::less<>> dtypes = {
      {"Tensor(float)", ir::DType::f32},       {"Tensor(double)", ir::DType::f64},
      {"Tensor(c10::Half)", ir::DType::f16},   {"Tensor(c10::BFloat16)", ir::DType::bf16},
      {"Tensor(long int)", ir::DType::i64},    {"Tensor(long)", ir::DType::i64},
      {"Tensor(int)", ir::DType::i32},         {"Tensor(bool)", ir::DType::boolean},
      {"Tensor(unsigned char)", ir::DType::u8}};
  const auto it = dtypes.find(type);
  if (it == dtypes.end()) return std::nullopt;
  return it->second;
}

std::optional<TypedCall> type_aten_call(std::string_view name, const AtenArguments& arguments) {
  const auto it = mappers().find(name);
  if (it == mappers().end()) return std::nullopt;
  // One value, shape and type per argument, or the call is not read at all.
  if (arguments.values == nullptr || !arguments.values->is_array() ||
      arguments.values->size() != arguments.types.size() ||
      arguments.shapes.size() != arguments.types.size()) {
    return std::nullopt;
  }
  const Args args(arguments);
  const std::optional<Mapping> m = it->second(args);
  if (!m) return std::nullopt;
  TypedCall call;
  call.kind = m->kind;
  call.attrs = m->attrs;
  for (const auto& [arg, shape] : m->inputs) {
    std::optional<ir::Tensor> t = args.tensor(arg);
    if (!t) return std::nullopt;
    if (shape) t->shape = *shape;
    for (int64_t d : t->shape) {
      if (d < 0) return std::nullopt;
    }
    t->bytes = ir::element_count(t->shape) * ir::dtype_size_bytes(t->dtype);
    call.inputs.push_back(std::move(*t));
    call.arg_of.push_back(arg);
  }
  std::vector<const ir::Tensor*> inputs;
  for (const ir::Tensor& t : call.inputs) inputs.push_back(&t);
  const std::string op_name(name);
  try {
    const ir::InferResult r =
        ir::kind_rules(call.kind)->infer(ir::InferContext{op_name, inputs, call.attrs, 1});
    call.flops = r.flops;
    for (const ir::OutputSpec& o : r.outputs) {
      ir::Tensor t;
      t.name = op_name + o.suffix;
      t.shape = o.shape;
      t.dtype = o.dtype;
      t.role = o.role;
      t.bytes = ir::element_count(t.shape) * ir::dtype_size_bytes(t.dtype);
      call.outputs.push_back(std::move(t));
    }
    if (!arguments.output_shapes.empty() && !call.outputs.empty() &&
        arguments.output_shapes[0] != call.outputs[0].shape) {
      return std::nullopt;  // the call computed something else than the kind would
    }
  } catch (const Error&) {
    return std::nullopt;  // the arguments do not fit the kind's rule
  }
  return call;
}

int64_t typed_backward_flops(const TypedCall& call, const std::vector<bool>& needs_grad) {
  const ir::KindRules* rules = ir::kind_rules(call.kind);
  if (rules == nullptr || !rules->differentiable || rules->backward_flops == nullptr) return 0;
  ir::Op forward;
  forward.name = std::string(ir::kind_name(call.kind));
  forward.kind = call.kind;
  forward.attrs = call.attrs;
  std::vector<const ir::Tensor*> inputs, outputs;
  for (const ir::Tensor& t : call.inputs) inputs.push_back(&t);
  for (const ir::Tensor& t : call.outputs) outputs.push_back(&t);
  return rules->backward_flops(ir::BackwardContext{forward, inputs, outputs, needs_grad});
}

}  // namespace mutwo::io
