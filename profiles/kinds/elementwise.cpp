// Elementwise and row-wise kinds: activations, dropout, add, mul, softmax.
#include <fmt/format.h>

#include "profiles/kind_rules.hpp"

namespace mutwo::profiles {
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
  InferResult r = same_as_input(ctx, 2);
  r.outputs.push_back({".mask", ctx.inputs[0]->shape, DType::boolean, TensorRole::activation});
  return r;
}
int64_t dropout_backward_flops(const BackwardContext& ctx) {
  return element_count(ctx.inputs[0]->shape);
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
  if (!ok || a.dtype != b.dtype) {
    infer_error(ctx, fmt::format("input 1 '{}' {} {} does not broadcast to input 0 '{}' {} {}", b.name,
                                 shape_string(b.shape), dtype_name(b.dtype), a.name, shape_string(a.shape),
                                 dtype_name(a.dtype)));
  }
}

InferResult infer_binary(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  expect_broadcastable(ctx);
  return same_as_input(ctx, 1);
}

// grad_a = g * b; grad_b = sum-to-shape(g * a).
int64_t mul_backward_flops(const BackwardContext& ctx) {
  const int64_t n = element_count(ctx.outputs[0]->shape);
  return (ctx.needs_grad[0] ? n : 0) + (ctx.needs_grad[1] ? 2 * n : 0);
}

// max, subtract, exp, sum, divide per element.
InferResult infer_softmax(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  return same_as_input(ctx, 5);
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
  // derivatives.yaml (_softmax): saves result.
  table[static_cast<size_t>(OpKind::softmax)] = {.infer = infer_softmax,
                                                 .backward_kind = OpKind::softmax_backward,
                                                 .saved = {{SavedRef::From::output, 0}},
                                                 .backward_flops = softmax_backward_flops};
}

}  // namespace mutwo::profiles
