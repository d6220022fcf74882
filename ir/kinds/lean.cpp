// Tempo's memory-lean layers (Andoorveedu, Zhu, Zheng, Pekhimenko: "Tempo: Accelerating
// Transformer-Based Model Training through Memory Footprint Reduction", NeurIPS 2022,
// arXiv:2210.10246; code github.com/UofT-EcoSystem/Tempo). Each is a drop-in for a plain kind:
// the same forward result and gradients, less kept for backward. Their shape inference is the plain
// kind's (registered before this family); transforms/lean_ops.hpp rewrites a graph to use them.
#include <fmt/format.h>

#include "ir/kind_rules.hpp"
#include "support/checked_int.hpp"

namespace mutwo::ir {
namespace {

// §3.1 In-place GELU: the forward also writes a one-byte mask, x >= argmin gelu (-0.7518 for erf),
// which tells the two branches of gelu^-1 apart; backward reads the output and the mask instead of
// the input. Forward: gelu's 8 per element and the comparison.
constexpr int64_t kGeluLeanFlopsPerElement = 9;
// Tempo's backward kernel (src/inplace_gelu/gelu_kernel.cu) evaluates gelu' as a degree-12
// polynomial of the output by Horner's method (24), shifted (1), times the gradient (1).
constexpr int64_t kGeluLeanBackwardFlopsPerElement = 26;
// §3.2 In-place LayerNorm: backward from the output, xhat = (y - beta) / gamma (2 per element),
// then layer norm's own backward (14, ir/kinds/norm.cpp).
constexpr int64_t kLayerNormLeanBackwardFlopsPerElement = 16;
// §3.3 attention: dropout's output is recomputed in backward from the softmax output and the mask
// (mask * scale: 2 per element) and dropout's backward scales dp (1 per element).
constexpr int64_t kDropoutRecomputeFlopsPerElement = 2;
constexpr int64_t kDropoutBackwardFlopsPerElement = 1;

InferFn g_gelu_infer = nullptr;
InferFn g_layernorm_infer = nullptr;
InferFn g_context_infer = nullptr;

InferResult infer_gelu_lean(const InferContext& ctx) {
  InferResult r = g_gelu_infer(ctx);
  r.flops = kGeluLeanFlopsPerElement * element_count(ctx.inputs[0]->shape);
  r.outputs.push_back({".mask", ctx.inputs[0]->shape, DType::boolean, TensorRole::activation});
  return r;
}
int64_t gelu_lean_backward_flops(const BackwardContext& ctx) {
  return kGeluLeanBackwardFlopsPerElement * element_count(ctx.inputs[0]->shape);
}

int64_t layernorm_lean_backward_flops(const BackwardContext& ctx) {
  return kLayerNormLeanBackwardFlopsPerElement * element_count(ctx.inputs[0]->shape);
}

// inputs p [B,h,T,T] (the softmax output), v [B,T,H]; attr p, the dropout probability in [0, 1).
InferResult infer_attn_dropout_context(const InferContext& ctx) {
  InferResult r = g_context_infer(ctx);
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const double p = attr_double(ctx.attrs, "p", where);
  if (!(p >= 0.0 && p < 1.0)) infer_error(ctx, fmt::format("attribute 'p' = {} must be in [0, 1)", p));
  const Tensor& probs = *ctx.inputs[0];
  r.flops += kDropoutRecomputeFlopsPerElement * element_count(probs.shape);
  r.outputs.push_back({".mask", probs.shape, DType::boolean, TensorRole::activation});
  return r;
}
// dp = dropout_backward(dO v^T), dv = dropout(p)^T dO after recomputing dropout(p).
int64_t attn_dropout_context_backward_flops(const BackwardContext& ctx) {
  const Tensor& probs = *ctx.inputs[0];
  const int64_t heads = probs.shape[probs.shape.size() - 3];
  const int64_t product =
      support::checked_product({2, element_count(probs.shape), ctx.inputs[1]->shape.back() / heads},
                               ctx.forward.name + " backward FLOPs");
  const int64_t elements = element_count(probs.shape);
  int64_t flops = 0;
  if (ctx.needs_grad[0]) flops += product + kDropoutBackwardFlopsPerElement * elements;
  if (ctx.needs_grad[1]) flops += product + kDropoutRecomputeFlopsPerElement * elements;
  return flops;
}

}  // namespace

void register_lean_kinds(KindRulesTable& table) {
  g_gelu_infer = table[static_cast<size_t>(OpKind::gelu)].infer;
  g_layernorm_infer = table[static_cast<size_t>(OpKind::layernorm)].infer;
  g_context_infer = table[static_cast<size_t>(OpKind::attn_context)].infer;
  // Saves y (which the next linear keeps anyway) and the mask, not x.
  table[static_cast<size_t>(OpKind::gelu_lean)] = {
      .infer = infer_gelu_lean,
      .backward_kind = OpKind::gelu_lean_backward,
      .saved = {{SavedRef::From::output, 0}, {SavedRef::From::output, 1}},
      .backward_flops = gelu_lean_backward_flops,
  };
  // Saves y (which the next linear keeps anyway), gamma, beta and rstd, not x and mean.
  table[static_cast<size_t>(OpKind::layernorm_lean)] = {
      .infer = g_layernorm_infer,
      .backward_kind = OpKind::layernorm_lean_backward,
      .saved = {{SavedRef::From::output, 0},
                {SavedRef::From::input, 1},
                {SavedRef::From::input, 2},
                {SavedRef::From::output, 2}},
      .backward_flops = layernorm_lean_backward_flops,
  };
  // Saves p (which softmax's backward keeps anyway), v and the mask, not dropout(p).
  table[static_cast<size_t>(OpKind::attn_dropout_context)] = {
      .infer = infer_attn_dropout_context,
      .backward_kind = OpKind::attn_dropout_context_backward,
      .saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}, {SavedRef::From::output, 1}},
      .backward_flops = attn_dropout_context_backward_flops,
  };
}

}  // namespace mutwo::ir
