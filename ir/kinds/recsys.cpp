// Recommendation-model kinds (DLRM): embedding bag, concat, dot interaction, BCE with logits.
// All four use the "stack" layout at width k: every operand gains a leading model dim.
#include <algorithm>

#include <fmt/format.h>

#include "ir/kind_rules.hpp"
#include "support/checked_int.hpp"

namespace mutwo::ir {
namespace {

// concat and dot_interaction take any number of inputs, but KindRules::saved is a static list of
// input positions; dot_interaction lists positions 0..kMaxVariadicInputs-1 (autodiff keeps those that
// exist) and inference refuses more inputs than that.
constexpr size_t kMaxVariadicInputs = 64;

// BCE with logits per element: max(x,0) - x*y + log1p(exp(-|x|)) (abs, neg, exp, log1p, mul, sub, add)
// and the mean's add: 8. Backward: (sigmoid(x) - y) * g / n: sigmoid 4 (as elementwise.cpp), sub, scale.
constexpr int64_t kBceFlopsPerElement = 8;
constexpr int64_t kBceBackwardFlopsPerElement = 6;

// Leading dims of the fused layout: 1 (the model dim) at width k > 1, else 0.
size_t model_dims(const InferContext& ctx) {
  return ctx.width > 1 ? 1 : 0;
}

// At width k, input `i` must lead with the model dim k.
void expect_model_dim(const InferContext& ctx, size_t i) {
  const Tensor& t = *ctx.inputs[i];
  if (ctx.width > 1 && (t.shape.empty() || t.shape[0] != ctx.width)) {
    infer_error(ctx, fmt::format("at width {} input {} '{}' of shape {} must lead with the model dim {}",
                                 ctx.width, i, t.name, shape_string(t.shape), ctx.width));
  }
}

// nn.EmbeddingBag(mode="sum"): indices [B,L] int64, W [V,D] -> [B,D]; stack: [k,B,L], [k,V,D] -> [k,B,D].
// FLOPs: one add per gathered element, B*L*D per model.
InferResult infer_embedding_bag(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const size_t lead = model_dims(ctx);
  expect_rank(ctx, 0, 2 + lead);
  expect_rank(ctx, 1, 2 + lead);
  expect_model_dim(ctx, 0);
  expect_model_dim(ctx, 1);
  const Tensor& indices = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[1];
  if (indices.dtype != DType::i64) {
    infer_error(ctx, fmt::format("input 0 '{}' (indices) has dtype {}, expected int64", indices.name,
                                 dtype_name(indices.dtype)));
  }
  if (!is_floating(w.dtype)) {
    infer_error(ctx, fmt::format("input 1 '{}' (weight) has dtype {}, expected a floating type", w.name,
                                 dtype_name(w.dtype)));
  }
  std::vector<int64_t> out(indices.shape.begin(), indices.shape.end() - 1);  // [k?, B]
  out.push_back(w.shape.back());                                             // [k?, B, D]
  InferResult r;
  r.flops = support::checked_product({element_count(indices.shape), w.shape.back()},
                                     "op '" + std::string(ctx.op_name) + "': FLOPs");
  r.outputs.push_back({"", std::move(out), w.dtype, TensorRole::activation});
  return r;
}

// Dense weight gradient (sparse=False): each gathered row's gradient is added into grad_W.
int64_t embedding_bag_backward_flops(const BackwardContext& ctx) {
  if (!ctx.needs_grad[1]) return 0;
  return element_count(ctx.inputs[0]->shape) * ctx.inputs[1]->shape.back();
}

// torch.cat(dim=-1): inputs share every dim but the last and the dtype.
InferResult infer_concat(const InferContext& ctx) {
  expect_inputs(ctx, 1, kMaxVariadicInputs);
  const Tensor& first = *ctx.inputs[0];
  if (first.shape.size() < 1 + model_dims(ctx)) {
    infer_error(ctx, fmt::format("input 0 '{}' of shape {} has no dim to concatenate", first.name,
                                 shape_string(first.shape)));
  }
  expect_model_dim(ctx, 0);
  const std::vector<int64_t> lead(first.shape.begin(), first.shape.end() - 1);
  int64_t last = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const Tensor& t = *ctx.inputs[i];
    if (t.shape.size() != first.shape.size() || !std::equal(lead.begin(), lead.end(), t.shape.begin()) ||
        t.dtype != first.dtype) {
      infer_error(ctx, fmt::format("input {} '{}' is {} {}, expected {} [{}...,*] like input 0 '{}'", i,
                                   t.name, shape_string(t.shape), dtype_name(t.dtype),
                                   dtype_name(first.dtype), shape_string(lead), first.name));
    }
    last += t.shape.back();
  }
  std::vector<int64_t> out = lead;
  out.push_back(last);
  InferResult r;
  r.outputs.push_back({"", std::move(out), first.dtype, TensorRole::activation});
  return r;
}

// DLRM interact_features (dot, arch_interaction_itself=False): T = cat(x, ly) viewed [B,n,d],
// Z = bmm(T, T^T), R = cat(x, Z[:, i > j]). Inputs dense [B,d] then n-1 sparse [B,d];
// output [B, d + n(n-1)/2]; stack adds a leading k. FLOPs are the bmm's: 2*B*n*n*d per model.
InferResult infer_dot_interaction(const InferContext& ctx) {
  expect_inputs(ctx, 2, kMaxVariadicInputs);
  const size_t lead = model_dims(ctx);
  expect_rank(ctx, 0, 2 + lead);
  expect_model_dim(ctx, 0);
  const Tensor& dense = *ctx.inputs[0];
  if (!is_floating(dense.dtype)) {
    infer_error(ctx, fmt::format("input 0 '{}' has dtype {}, expected a floating type", dense.name,
                                 dtype_name(dense.dtype)));
  }
  for (size_t i = 1; i < ctx.inputs.size(); ++i) {
    const Tensor& t = *ctx.inputs[i];
    if (t.shape != dense.shape || t.dtype != dense.dtype) {
      infer_error(ctx, fmt::format("input {} '{}' is {} {}, expected {} {} like the dense input 0 '{}'", i,
                                   t.name, shape_string(t.shape), dtype_name(t.dtype),
                                   shape_string(dense.shape), dtype_name(dense.dtype), dense.name));
    }
  }
  const auto n = static_cast<int64_t>(ctx.inputs.size());
  const int64_t d = dense.shape.back();
  const int64_t rows = element_count(dense.shape) / d;  // k * B
  std::vector<int64_t> out = dense.shape;
  out.back() = d + n * (n - 1) / 2;
  InferResult r;
  r.flops = support::checked_product({2, rows, n, n, d}, "op '" + std::string(ctx.op_name) + "': FLOPs");
  r.outputs.push_back({"", std::move(out), dense.dtype, TensorRole::activation});
  return r;
}

// bmm backward: grad_T = dZ T + dZ^T T, two bmms of the forward's size.
int64_t dot_interaction_backward_flops(const BackwardContext& ctx) {
  bool any = false;
  for (bool g : ctx.needs_grad) any = any || g;
  if (!any) return 0;
  const auto n = static_cast<int64_t>(ctx.inputs.size());
  const int64_t d = ctx.inputs[0]->shape.back();
  const int64_t rows = element_count(ctx.inputs[0]->shape) / d;
  return support::checked_product({4, rows, n, n, d}, ctx.forward.name + " backward FLOPs");
}

// binary_cross_entropy_with_logits, reduction mean: logits and labels of one shape, floating;
// loss [] per model ([k] stacked at width k).
InferResult infer_bce_with_logits(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  expect_model_dim(ctx, 0);
  const Tensor& logits = *ctx.inputs[0];
  const Tensor& labels = *ctx.inputs[1];
  if (!is_floating(logits.dtype)) {
    infer_error(ctx, fmt::format("input 0 '{}' (logits) has dtype {}, expected a floating type", logits.name,
                                 dtype_name(logits.dtype)));
  }
  if (labels.shape != logits.shape || !is_floating(labels.dtype)) {
    infer_error(ctx, fmt::format("input 1 '{}' (labels) is {} {}, expected a floating type of shape {} like "
                                 "the logits",
                                 labels.name, shape_string(labels.shape), dtype_name(labels.dtype),
                                 shape_string(logits.shape)));
  }
  std::vector<int64_t> loss_shape;
  if (ctx.width > 1) loss_shape.push_back(ctx.width);
  InferResult r;
  r.outputs.push_back({"", std::move(loss_shape), logits.dtype, TensorRole::loss});
  r.flops = kBceFlopsPerElement * element_count(logits.shape);
  return r;
}

int64_t bce_with_logits_backward_flops(const BackwardContext& ctx) {
  return kBceBackwardFlopsPerElement * element_count(ctx.inputs[0]->shape);
}

}  // namespace

void register_recsys_kinds(KindRulesTable& table) {
  // derivatives.yaml (_embedding_bag): the backward reads indices (and offsets / offset2bag, which
  // one-index-per-bag input makes implicit). Its weight gradient is dense, as with sparse=False.
  table[static_cast<size_t>(OpKind::embedding_bag)] = {
      .infer = infer_embedding_bag,
      .backward_kind = OpKind::embedding_bag_backward,
      .saved = {{SavedRef::From::input, 0}},
      .backward_flops = embedding_bag_backward_flops,
  };
  // derivatives.yaml (cat): saves nothing but the input sizes, which the graph's shapes carry.
  table[static_cast<size_t>(OpKind::concat)] = {
      .infer = infer_concat,
      .backward_kind = OpKind::concat_backward,
      .saved = {},
      .backward_flops = no_backward_flops,
  };
  // derivatives.yaml (bmm): saves self and mat2, both the concatenation of every input.
  KindRules dot;
  dot.infer = infer_dot_interaction;
  dot.backward_kind = OpKind::dot_interaction_backward;
  for (size_t i = 0; i < kMaxVariadicInputs; ++i)
    dot.saved.push_back({SavedRef::From::input, static_cast<int>(i)});
  dot.backward_flops = dot_interaction_backward_flops;
  table[static_cast<size_t>(OpKind::dot_interaction)] = dot;
  // derivatives.yaml (binary_cross_entropy_with_logits): saves self and target.
  KindRules bce;
  bce.infer = infer_bce_with_logits;
  bce.is_loss = true;
  bce.backward_kind = OpKind::bce_with_logits_backward;
  bce.saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}};
  bce.backward_flops = bce_with_logits_backward_flops;
  table[static_cast<size_t>(OpKind::bce_with_logits)] = bce;
}

}  // namespace mutwo::ir
