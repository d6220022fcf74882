// Dense (GEMM-like) kinds: linear, attention products.
#include <fmt/format.h>

#include "ir/kind_rules.hpp"
#include "support/checked_int.hpp"

namespace mutwo::ir {
namespace {

// y = x W^T + b. Width k ("stack"): x [k,...,in], W [k,out,in], b [k,out].
InferResult infer_linear(const InferContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[1];
  const size_t w_rank = ctx.width > 1 ? 3 : 2;
  expect_rank(ctx, 1, w_rank);
  if (x.shape.empty() || x.shape.back() != w.shape.back()) {
    infer_error(ctx, fmt::format("input 0 '{}' shape {} does not end in the weight's in_features {}", x.name,
                                 shape_string(x.shape), w.shape.back()));
  }
  if (ctx.width > 1 && (x.shape.size() < 2 || x.shape[0] != ctx.width || w.shape[0] != ctx.width)) {
    infer_error(ctx, fmt::format("at width {} input {} and weight {} must lead with the model dim", ctx.width,
                                 shape_string(x.shape), shape_string(w.shape)));
  }
  const int64_t out_features = w.shape[w_rank - 2];
  if (ctx.inputs.size() == 3) {
    std::vector<int64_t> bias_shape{out_features};
    if (ctx.width > 1) bias_shape.insert(bias_shape.begin(), ctx.width);
    if (ctx.inputs[2]->shape != bias_shape) {
      infer_error(ctx, fmt::format("input 2 '{}' (bias) has shape {}, expected {}", ctx.inputs[2]->name,
                                   shape_string(ctx.inputs[2]->shape), shape_string(bias_shape)));
    }
  }
  InferResult r;
  std::vector<int64_t> out = x.shape;
  out.back() = out_features;
  const int64_t rows = element_count(x.shape) / x.shape.back();
  const std::string what = "op '" + std::string(ctx.op_name) + "': FLOPs";
  r.flops = support::checked_sum(
      support::checked_product({2, rows, x.shape.back(), out_features}, what),
      ctx.inputs.size() == 3 ? support::checked_product({rows, out_features}, what) : 0, what);
  r.outputs.push_back({"", std::move(out), x.dtype, TensorRole::activation});
  return r;
}

// dX = dY W (2 r i o), dW = dY^T X (2 r i o), db = sum dY (r o).
int64_t linear_backward_flops(const BackwardContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int64_t in = x.shape.back();
  const int64_t rows = element_count(x.shape) / in;
  const int64_t out = ctx.outputs[0]->shape.back();
  const int64_t product = support::checked_product({2, rows, in, out}, ctx.forward.name + " backward FLOPs");
  int64_t flops = 0;
  if (ctx.needs_grad[0]) flops += product;
  if (ctx.needs_grad[1]) flops += product;
  if (ctx.needs_grad.size() > 2 && ctx.needs_grad[2]) flops += rows * out;
  return flops;
}

// Per-model shapes of attention operands: [B,T,H] at width 1, [k,B,T,H] at width k ("stack").
size_t model_dims(const InferContext& ctx) {
  return ctx.width > 1 ? 1 : 0;
}

void expect_model_dim(const InferContext& ctx, size_t input) {
  const Tensor& t = *ctx.inputs[input];
  if (ctx.width > 1 && t.shape[0] != ctx.width) {
    infer_error(ctx, fmt::format("at width {} input {} '{}' of shape {} must lead with the model dim",
                                 ctx.width, input, t.name, shape_string(t.shape)));
  }
}

// 2 * (elements of the probability tensor [..,heads,T,T]) * head dim: one MAC per score and head-dim
// element, for either attention product and either of its operand gradients.
int64_t attention_matmul_flops(const Tensor& probs, const Tensor& tokens) {
  const int64_t heads = probs.shape[probs.shape.size() - 3];
  return support::checked_product({2, element_count(probs.shape), tokens.shape.back() / heads},
                                  "attention FLOPs");
}

// scores = (q k^T) * scale per head, masked above the diagonal if causal (the BERT/GPT-2/ViT
// matmul + scale + mask before the softmax). Inputs q, k [B,T,H] (width k: [k,B,T,H]);
// attrs heads (H % heads == 0), causal (0/1, default 0), scale (default 1/sqrt(H/heads)).
// Output [B,heads,T,T] (width k: [k,B,heads,T,T]).
InferResult infer_attn_scores(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const size_t lead = model_dims(ctx);
  expect_rank(ctx, 0, 3 + lead);
  expect_rank(ctx, 1, 3 + lead);
  expect_model_dim(ctx, 0);
  const Tensor& q = *ctx.inputs[0];
  const Tensor& k = *ctx.inputs[1];
  if (q.shape != k.shape || q.dtype != k.dtype) {
    infer_error(ctx,
                fmt::format("input 1 '{}' (k) is {} {}, expected q's {} {}", k.name, shape_string(k.shape),
                            dtype_name(k.dtype), shape_string(q.shape), dtype_name(q.dtype)));
  }
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const int64_t heads = attr_int(ctx.attrs, "heads", where);
  const int64_t causal = attr_int_or(ctx.attrs, "causal", 0, where);
  const int64_t batch = q.shape[lead], seq = q.shape[lead + 1], hidden = q.shape[lead + 2];
  if (heads < 1 || hidden % heads != 0) {
    infer_error(
        ctx, fmt::format("attribute 'heads' = {} must be >= 1 and divide the hidden size {}", heads, hidden));
  }
  if (causal != 0 && causal != 1)
    infer_error(ctx, fmt::format("attribute 'causal' = {} must be 0 or 1", causal));
  if (attr_double_or(ctx.attrs, "scale", 1.0, where) <= 0.0)
    infer_error(ctx, "attribute 'scale' must be > 0");
  std::vector<int64_t> out{batch, heads, seq, seq};
  if (lead) out.insert(out.begin(), ctx.width);
  InferResult r;
  // heads * T * T dot products of length H/heads per sample and model: 2 * B * T * T * H.
  r.flops = support::checked_product({2, ctx.width, batch, seq, seq, hidden},
                                     "op '" + std::string(ctx.op_name) + "': FLOPs");
  r.outputs.push_back({"", std::move(out), q.dtype, TensorRole::activation});
  return r;
}

// dq = dS k * scale and dk = dS^T q * scale, each as many MACs as the forward.
int64_t attn_scores_backward_flops(const BackwardContext& ctx) {
  const int64_t forward = attention_matmul_flops(*ctx.outputs[0], *ctx.inputs[0]);
  return (ctx.needs_grad[0] ? forward : 0) + (ctx.needs_grad[1] ? forward : 0);
}

// context = p v per head, heads merged back: inputs p [B,heads,T,T], v [B,T,H] -> [B,T,H]
// (width k: [k,B,heads,T,T], [k,B,T,H] -> [k,B,T,H]).
InferResult infer_attn_context(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const size_t lead = model_dims(ctx);
  expect_rank(ctx, 0, 4 + lead);
  expect_rank(ctx, 1, 3 + lead);
  expect_model_dim(ctx, 0);
  expect_model_dim(ctx, 1);
  const Tensor& p = *ctx.inputs[0];
  const Tensor& v = *ctx.inputs[1];
  const int64_t batch = v.shape[lead], seq = v.shape[lead + 1], hidden = v.shape[lead + 2];
  const int64_t heads = p.shape[lead + 1];
  if (p.shape[lead] != batch || p.shape[lead + 2] != seq || p.shape[lead + 3] != seq || heads < 1 ||
      hidden % heads != 0 || p.dtype != v.dtype) {
    infer_error(ctx, fmt::format("input 0 '{}' (p) is {} {}, expected [B,heads,T,T] = [{},h,{},{}] {} with h "
                                 "dividing the hidden size {} of input 1 '{}'",
                                 p.name, shape_string(p.shape), dtype_name(p.dtype), batch, seq, seq,
                                 dtype_name(v.dtype), hidden, v.name));
  }
  InferResult r;
  r.flops = support::checked_product({2, ctx.width, batch, seq, seq, hidden},
                                     "op '" + std::string(ctx.op_name) + "': FLOPs");
  r.outputs.push_back({"", v.shape, v.dtype, TensorRole::activation});
  return r;
}

// dp = dO v^T and dv = p^T dO, each as many MACs as the forward.
int64_t attn_context_backward_flops(const BackwardContext& ctx) {
  const int64_t forward = attention_matmul_flops(*ctx.inputs[0], *ctx.inputs[1]);
  return (ctx.needs_grad[0] ? forward : 0) + (ctx.needs_grad[1] ? forward : 0);
}

}  // namespace

void register_dense_kinds(KindRulesTable& table) {
  // derivatives.yaml (addmm): saves mat1 (x) and mat2 (W).
  table[static_cast<size_t>(OpKind::linear)] = {
      .infer = infer_linear,
      .backward_kind = OpKind::linear_backward,
      .saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}},
      .backward_flops = linear_backward_flops,
  };

  // derivatives.yaml (bmm/matmul of q and k^T): saves both operands.
  KindRules scores;
  scores.infer = infer_attn_scores;
  scores.backward_kind = OpKind::attn_scores_backward;
  scores.saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}};
  scores.backward_flops = attn_scores_backward_flops;
  table[static_cast<size_t>(OpKind::attn_scores)] = scores;

  // derivatives.yaml (bmm of p and v): saves both operands.
  KindRules context;
  context.infer = infer_attn_context;
  context.backward_kind = OpKind::attn_context_backward;
  context.saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}};
  context.backward_flops = attn_context_backward_flops;
  table[static_cast<size_t>(OpKind::attn_context)] = context;
}

}  // namespace mutwo::ir
