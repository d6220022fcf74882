// Data-movement kinds: embedding, ViT class token, token select.
#include <fmt/format.h>

#include "ir/kind_rules.hpp"

namespace mutwo::ir {
namespace {

// nn.Embedding: indices (int64, any shape S) and W [V,H] -> S ++ [H], a gather (no FLOPs).
// Width k ("stack"): indices [k,...], W [k,V,H] -> [k,...,H] (one gather per model).
InferResult infer_embedding(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  const Tensor& indices = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[1];
  expect_rank(ctx, 1, ctx.width > 1 ? 3 : 2);
  if (indices.dtype != DType::i64) {
    infer_error(ctx, fmt::format("input 0 '{}' (indices) has dtype {}, expected int64", indices.name,
                                 dtype_name(indices.dtype)));
  }
  if (ctx.width > 1 && (indices.shape.empty() || indices.shape[0] != ctx.width || w.shape[0] != ctx.width)) {
    infer_error(ctx, fmt::format("at width {} indices {} and weight {} must lead with the model dim",
                                 ctx.width, shape_string(indices.shape), shape_string(w.shape)));
  }
  std::vector<int64_t> out = indices.shape;
  out.push_back(w.shape.back());
  InferResult r;
  r.outputs.push_back({"", std::move(out), w.dtype, TensorRole::activation});
  return r;
}

// embedding_dense_backward: the output gradient is scatter-added into a zero [V,H] table
// (num_weights V is the forward weight's dim): one add per output element.
int64_t embedding_backward_flops(const BackwardContext& ctx) {
  return ctx.needs_grad[1] ? element_count(ctx.outputs[0]->shape) : 0;
}

// ViT: conv patches [B,C,h,w] flattened to tokens [B,h*w,C] with the class token W [1,1,C]
// (expanded over the batch) prepended -> [B,1+h*w,C]. Width k: patches [B,k*C,h,w] (channel
// layout of the conv trunk), W [k,1,1,C] -> [k,B,1+h*w,C] (stack layout of the encoder).
InferResult infer_class_token_concat(const InferContext& ctx) {
  expect_inputs(ctx, 2, 2);
  expect_rank(ctx, 0, 4);
  expect_rank(ctx, 1, ctx.width > 1 ? 4 : 3);
  const Tensor& patches = *ctx.inputs[0];
  const Tensor& token = *ctx.inputs[1];
  const int64_t channels = token.shape.back();
  std::vector<int64_t> expected_token{1, 1, channels};
  if (ctx.width > 1) expected_token.insert(expected_token.begin(), ctx.width);
  if (token.shape != expected_token || patches.shape[1] != ctx.width * channels ||
      patches.dtype != token.dtype) {
    infer_error(ctx,
                fmt::format("input 0 '{}' {} {} and input 1 '{}' (class token) {} {} do not match: expected "
                            "patches [B,{}*C,h,w] and token {} with C = {}",
                            patches.name, shape_string(patches.shape), dtype_name(patches.dtype), token.name,
                            shape_string(token.shape), dtype_name(token.dtype), ctx.width,
                            shape_string(expected_token), channels));
  }
  std::vector<int64_t> out{patches.shape[0], 1 + patches.shape[2] * patches.shape[3], channels};
  if (ctx.width > 1) out.insert(out.begin(), ctx.width);
  InferResult r;
  r.outputs.push_back({"", std::move(out), patches.dtype, TensorRole::activation});
  return r;
}

// The patch gradient is a transposing copy; the class token's gradient sums row 0 over the batch.
int64_t class_token_concat_backward_flops(const BackwardContext& ctx) {
  const Tensor& y = *ctx.outputs[0];
  const int64_t tokens = y.shape[y.shape.size() - 2];
  return ctx.needs_grad[1] ? element_count(y.shape) / tokens : 0;
}

// x[:, index] of [B,T,C] -> [B,C] (attr index, default 0; negative counts from the end, as in
// Python). Width k ("stack"): [k,B,T,C] -> [k,B,C].
InferResult infer_select_token(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const size_t lead = ctx.width > 1 ? 1 : 0;
  expect_rank(ctx, 0, 3 + lead);
  const Tensor& x = *ctx.inputs[0];
  if (lead && x.shape[0] != ctx.width) {
    infer_error(ctx, fmt::format("at width {} input 0 '{}' of shape {} must lead with the model dim",
                                 ctx.width, x.name, shape_string(x.shape)));
  }
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const int64_t index = attr_int_or(ctx.attrs, "index", 0, where);
  const int64_t tokens = x.shape[lead + 1];
  if (index < -tokens || index >= tokens) {
    infer_error(ctx, fmt::format("attribute 'index' = {} is out of range for {} tokens", index, tokens));
  }
  std::vector<int64_t> out{x.shape[lead], x.shape[lead + 2]};
  if (lead) out.insert(out.begin(), ctx.width);
  InferResult r;
  r.outputs.push_back({"", std::move(out), x.dtype, TensorRole::activation});
  return r;
}

int64_t no_backward_flops(const BackwardContext&) {
  return 0;
}

}  // namespace

void register_data_kinds(KindRulesTable& table) {
  // derivatives.yaml (embedding): embedding_backward(grad, indices, num_weights, ...) saves indices
  // only; num_weights is V, dim 0 of the forward weight [V,H] (dim 1 of [k,V,H]).
  KindRules embedding;
  embedding.infer = infer_embedding;
  embedding.backward_kind = OpKind::embedding_backward;
  embedding.saved = {{SavedRef::From::input, 0}};
  embedding.backward_flops = embedding_backward_flops;
  table[static_cast<size_t>(OpKind::embedding)] = embedding;

  // cat + flatten/transpose + expand are views and copies: backward slices the gradient and
  // needs no saved tensor (shapes come from the forward op).
  KindRules class_token;
  class_token.infer = infer_class_token_concat;
  class_token.backward_kind = OpKind::class_token_concat_backward;
  class_token.saved = {};
  class_token.backward_flops = class_token_concat_backward_flops;
  table[static_cast<size_t>(OpKind::class_token_concat)] = class_token;

  // derivatives.yaml (select): select_backward(grad, input_sizes, dim, index) saves only sizes:
  // the gradient is scattered into zeros of the forward input's shape.
  KindRules select;
  select.infer = infer_select_token;
  select.backward_kind = OpKind::select_token_backward;
  select.saved = {};
  select.backward_flops = no_backward_flops;
  table[static_cast<size_t>(OpKind::select_token)] = select;
}

}  // namespace mutwo::ir
