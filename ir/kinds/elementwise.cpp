// Elementwise and row-wise kinds: activations, dropout, add, mul, softmax.
#include <fmt/format.h>

#include "ir/kind_rules.hpp"

namespace mutwo::ir {
namespace {

// FLOPs per element, forward and backward. Only their order matters: these kinds are
// bandwidth-bound, and the cost model prices them by bytes.
struct PointwiseCost {
  OpKind kind;
  OpKind backward;
  int64_t forward_flops;
  int64_t backward_flops;
  SavedRef::From saves;  // derivatives.yaml saves `result` (output 0) or `self` (input 0)
};
constexpr PointwiseCost kActivations[] = {
    {OpKind::relu, OpKind::relu_backward, 1, 1, SavedRef::From::output},
    {OpKind::relu6, OpKind::relu6_backward, 2, 2, SavedRef::From::input},  // hardtanh saves self
    {OpKind::gelu, OpKind::gelu_backward, 8, 12, SavedRef::From::input},
    {OpKind::tanh, OpKind::tanh_backward, 4, 3, SavedRef::From::output},
    {OpKind::sigmoid, OpKind::sigmoid_backward, 4, 3, SavedRef::From::output},
    {OpKind::hardswish, OpKind::hardswish_backward, 4, 4, SavedRef::From::input},
    {OpKind::hardsigmoid, OpKind::hardsigmoid_backward, 3, 2, SavedRef::From::input},
    {OpKind::silu, OpKind::silu_backward, 5, 8, SavedRef::From::input},  // silu_backward(grad, self)
};

int64_t activation_forward_flops(OpKind kind) {
  for (const auto& a : kActivations) {
    if (a.kind == kind) return a.forward_flops;
  }
  return 0;
}

template <OpKind Kind>
InferResult infer_activation(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  if constexpr (Kind == OpKind::gelu) {  // F.gelu's approximate: 0 "none" (erf), 1 "tanh"
    const int64_t approximate =
        attr_int_or(ctx.attrs, "approximate", 0, "op '" + std::string(ctx.op_name) + "'");
    if (approximate != 0 && approximate != 1) {
      infer_error(ctx, fmt::format("attribute 'approximate' = {} must be 0 (erf) or 1 (tanh)", approximate));
    }
  }
  return same_as_input(ctx, activation_forward_flops(Kind));
}

template <OpKind Kind>
int64_t activation_backward_flops(const BackwardContext& ctx) {
  for (const auto& a : kActivations) {
    if (a.kind == Kind) return a.backward_flops * element_count(ctx.inputs[0]->shape);
  }
  return 0;
}

// native_dropout: attr p; outputs y and the keep mask (bool).
InferResult infer_dropout(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const double p = attr_double_or(ctx.attrs, "p", kDefaultDropoutP, "op '" + std::string(ctx.op_name) + "'");
  if (!(p >= 0.0 && p < 1.0)) infer_error(ctx, fmt::format("attribute 'p' = {} must be in [0, 1)", p));
  InferResult r = same_as_input(ctx, 2);
  r.outputs.push_back({".mask", ctx.inputs[0]->shape, DType::boolean, TensorRole::activation});
  return r;
}
int64_t dropout_backward_flops(const BackwardContext& ctx) {
  return element_count(ctx.inputs[0]->shape);
}

// TensorIterator's type promotion between floating operands (c10::promoteTypes): the wider type;
// f16 with bf16 gives f32. Mixed operands arise under autocast (a half matmul output added to an f32
// residual); the kernel converts on the fly, so no cast op is needed.
DType promote_floating(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::f64 || b == DType::f64) return DType::f64;
  return DType::f32;
}

// b broadcasts to a from the right (each trailing dim equal or 1); output has a's shape.
void expect_broadcastable(const InferContext& ctx) {
  const Tensor& a = *ctx.inputs[0];
  const Tensor& b = *ctx.inputs[1];
  bool ok = b.shape.size() <= a.shape.size();
  for (size_t i = 0; ok && i < b.shape.size(); ++i) {
    const int64_t bd = b.shape[b.shape.size() - 1 - i];
    const int64_t ad = a.shape[a.shape.size() - 1 - i];
    ok = bd == ad || bd == 1;
  }
  const bool dtypes_ok = a.dtype == b.dtype || (is_floating(a.dtype) && is_floating(b.dtype));
  if (!ok || !dtypes_ok) {
    infer_error(ctx, fmt::format("input 1 '{}' {} {} does not broadcast to input 0 '{}' {} {}", b.name,
                                 shape_string(b.shape), dtype_name(b.dtype), a.name, shape_string(a.shape),
                                 dtype_name(a.dtype)));
  }
}

InferResult infer_binary(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  expect_broadcastable(ctx);
  InferResult r = same_as_input(ctx, 1);
  r.outputs[0].dtype = promote_floating(ctx.inputs[0]->dtype, ctx.inputs[1]->dtype);
  return r;
}

// tensor.to(dtype): attr dtype names a floating dtype; one conversion per element.
InferResult infer_cast(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const Tensor& x = *ctx.inputs[0];
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const DType to = parse_dtype(attr_string(ctx.attrs, "dtype", where));
  if (!is_floating(x.dtype) || !is_floating(to)) {
    infer_error(ctx, fmt::format("casts floating tensors only: input 0 '{}' is {}, attribute 'dtype' = {}",
                                 x.name, dtype_name(x.dtype), dtype_name(to)));
  }
  InferResult r = same_as_input(ctx, 1);
  r.outputs[0].dtype = to;
  return r;
}
int64_t cast_backward_flops(const BackwardContext& ctx) {
  return element_count(ctx.inputs[0]->shape);
}

// grad_a = g * b; grad_b = sum-to-shape(g * a).
int64_t mul_backward_flops(const BackwardContext& ctx) {
  const int64_t n = element_count(ctx.outputs[0]->shape);
  return (ctx.needs_grad[0] ? n : 0) + (ctx.needs_grad[1] ? 2 * n : 0);
}

// max, subtract, exp, sum, divide per element. Attr dtype "fp32" on an f16 input is ATen's
// softmax(x, dim, dtype=torch.float) on CUDA, which autocast calls (fp32_set_opt_dtype): one kernel
// reads half and writes float (_softmax with half_to_float, aten/src/ATen/native/SoftMax.cpp); its
// backward writes the half gradient. ATen converts any other pair in a separate copy, a `cast` op.
InferResult infer_softmax(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  InferResult r = same_as_input(ctx, 5);
  if (ctx.attrs.contains("dtype")) {
    const std::string where = "op '" + std::string(ctx.op_name) + "'";
    const DType to = parse_dtype(attr_string(ctx.attrs, "dtype", where));
    const Tensor& x = *ctx.inputs[0];
    if (x.dtype != DType::f16 || to != DType::f32) {
      infer_error(ctx, fmt::format("attribute 'dtype' = {} on input 0 '{}' of dtype {}: the fused softmax "
                                   "converts f16 to f32 only (cast other dtypes first)",
                                   dtype_name(to), x.name, dtype_name(x.dtype)));
    }
    r.outputs[0].dtype = to;
  }
  return r;
}
// grad_x = y * (g - sum(g * y)).
int64_t softmax_backward_flops(const BackwardContext& ctx) {
  return 4 * element_count(ctx.inputs[0]->shape);
}

}  // namespace

void register_elementwise_kinds(KindRulesTable& table) {
#define MUTWO_ACTIVATION(K)                                                       \
  table[static_cast<size_t>(OpKind::K)] = {.infer = infer_activation<OpKind::K>,  \
                                           .backward_kind = OpKind::K##_backward, \
                                           .saved = {},                           \
                                           .backward_flops = activation_backward_flops<OpKind::K>};
  MUTWO_ACTIVATION(relu)
  MUTWO_ACTIVATION(relu6)
  MUTWO_ACTIVATION(gelu)
  MUTWO_ACTIVATION(tanh)
  MUTWO_ACTIVATION(sigmoid)
  MUTWO_ACTIVATION(hardswish)
  MUTWO_ACTIVATION(hardsigmoid)
  MUTWO_ACTIVATION(silu)
#undef MUTWO_ACTIVATION
  for (const auto& a : kActivations) table[static_cast<size_t>(a.kind)].saved = {{a.saves, 0}};

  // derivatives.yaml (native_dropout): saves result1 (mask).
  table[static_cast<size_t>(OpKind::dropout)] = {.infer = infer_dropout,
                                                 .backward_kind = OpKind::dropout_backward,
                                                 .saved = {{SavedRef::From::output, 1}},
                                                 .backward_flops = dropout_backward_flops};
  // add saves nothing: operand gradients are the output gradient (summed down if broadcast).
  KindRules add_rules;
  add_rules.infer = infer_binary;
  add_rules.passthrough = true;
  table[static_cast<size_t>(OpKind::add)] = add_rules;
  // derivatives.yaml (mul): saves self and other.
  table[static_cast<size_t>(OpKind::mul)] = {
      .infer = infer_binary,
      .backward_kind = OpKind::mul_backward,
      .saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}},
      .backward_flops = mul_backward_flops};
  // derivatives.yaml (_to_copy): self: _to_copy_backward(grad, self.options()) saves nothing but the
  // input's dtype: the gradient is cast back.
  table[static_cast<size_t>(OpKind::cast)] = {.infer = infer_cast,
                                              .backward_kind = OpKind::cast_backward,
                                              .saved = {},
                                              .backward_flops = cast_backward_flops};
  // derivatives.yaml (_softmax): saves result.
  table[static_cast<size_t>(OpKind::softmax)] = {.infer = infer_softmax,
                                                 .backward_kind = OpKind::softmax_backward,
                                                 .saved = {{SavedRef::From::output, 0}},
                                                 .backward_flops = softmax_backward_flops};
}

}  // namespace mutwo::ir
