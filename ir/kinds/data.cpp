// Data-movement kinds: embedding, ViT class token, token select, channel concatenation, NCHW/NHWC
// permutes.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "ir/kind_rules.hpp"
#include "support/checked_int.hpp"

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

// torch.cat(dim=1) of feature maps [B,C_i,H,W] -> [B,sum C_i,H,W] (DenseNet's dense blocks, Inception's
// branches). Width k ("channel"): inputs [B,k*C_i,H,W]; the output keeps each model's channels
// together, [B,k*(sum C_i),H,W] with model m at [m*sum C_i, (m+1)*sum C_i), so it stays in the
// channel layout the convolutions after it read.
InferResult infer_concat_channels(const InferContext& ctx) {
  if (ctx.inputs.empty()) infer_error(ctx, "has no inputs; expected at least one feature map");
  const Tensor& first = *ctx.inputs[0];
  int64_t channels = 0;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    expect_rank(ctx, i, 4);
    const Tensor& t = *ctx.inputs[i];
    if (t.shape[0] != first.shape[0] || t.shape[2] != first.shape[2] || t.shape[3] != first.shape[3] ||
        t.dtype != first.dtype || t.shape[1] % ctx.width != 0) {
      infer_error(
          ctx, fmt::format("input {} '{}' is {} {}, expected {} [{},{}*C,{},{}] like input 0 '{}'", i, t.name,
                           shape_string(t.shape), dtype_name(t.dtype), dtype_name(first.dtype),
                           first.shape[0], ctx.width, first.shape[2], first.shape[3], first.name));
    }
    channels = support::checked_sum(channels, t.shape[1], "op '" + std::string(ctx.op_name) + "': channels");
  }
  InferResult r;
  r.outputs.push_back(
      {"", {first.shape[0], channels, first.shape[2], first.shape[3]}, first.dtype, TensorRole::activation});
  return r;
}

// x[:, start:start+length] of [B,C,H,W] -> [B,length,H,W] (attrs start >= 0, length >= 1, inside C),
// a copy where PyTorch's slice is a view (the conv or cat that reads it copies it there). Width k
// ("channel"): [B,k*C,H,W] -> [B,k*length,H,W], each model's own slice.
InferResult infer_slice_channels(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  expect_rank(ctx, 0, 4);
  const Tensor& x = *ctx.inputs[0];
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const int64_t start = attr_int(ctx.attrs, "start", where);
  const int64_t length = attr_int(ctx.attrs, "length", where);
  const int64_t channels = x.shape[1] / ctx.width;
  if (x.shape[1] % ctx.width != 0 || start < 0 || length < 1 || start > channels - length) {
    infer_error(
        ctx, fmt::format("attributes 'start' = {} and 'length' = {} do not fit the {} channels per model of "
                         "input 0 '{}' {}",
                         start, length, channels, x.name, shape_string(x.shape)));
  }
  InferResult r;
  r.outputs.push_back(
      {"", {x.shape[0], ctx.width * length, x.shape[2], x.shape[3]}, x.dtype, TensorRole::activation});
  return r;
}

// ShuffleNet's channel_shuffle(x, groups): [B,C,H,W] viewed [B,g,C/g,H,W], transposed to
// [B,C/g,g,H,W] and made contiguous (the copy), viewed back. Width k ("channel"): per model.
InferResult infer_channel_shuffle(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  expect_rank(ctx, 0, 4);
  const Tensor& x = *ctx.inputs[0];
  const int64_t groups = attr_int(ctx.attrs, "groups", "op '" + std::string(ctx.op_name) + "'");
  if (groups < 1 || x.shape[1] % ctx.width != 0 || (x.shape[1] / ctx.width) % groups != 0) {
    infer_error(
        ctx, fmt::format("attribute 'groups' = {} does not divide the {} channels per model of input 0 '{}'",
                         groups, x.shape[1] / ctx.width, x.name));
  }
  InferResult r;
  r.outputs.push_back({"", x.shape, x.dtype, TensorRole::activation});
  return r;
}

// The two permutes between NCHW and NHWC (ConvNeXt's blocks and LayerNorm2d).
constexpr std::array<int64_t, 4> kToChannelsLast{0, 2, 3, 1};
constexpr std::array<int64_t, 4> kToChannelsFirst{0, 3, 1, 2};

// x.permute(dims) written as a copy (PyTorch's permute is a view; the layer norm or matmul after it
// makes it contiguous, which is this copy). attr dims: [0,2,3,1] or [0,3,1,2]. Width k: [0,2,3,1]
// takes the channel layout [B,k*C,H,W] to the stack layout [k,B,H,W,C] the linears and layer norms
// after it read; [0,3,1,2] takes [k,B,H,W,C] back to [B,k*C,H,W].
InferResult infer_permute(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const auto& dims = attr_ints(ctx.attrs, "dims", where);
  const bool to_last = std::equal(dims.begin(), dims.end(), kToChannelsLast.begin(), kToChannelsLast.end());
  const bool to_first =
      std::equal(dims.begin(), dims.end(), kToChannelsFirst.begin(), kToChannelsFirst.end());
  if (!to_last && !to_first) {
    infer_error(ctx,
                fmt::format("attribute 'dims' = {}, expected [0,2,3,1] (NCHW to NHWC) or [0,3,1,2] (back)",
                            shape_string(dims)));
  }
  const Tensor& x = *ctx.inputs[0];
  const bool stacked = ctx.width > 1 && to_first;
  expect_rank(ctx, 0, stacked ? 5 : 4);
  std::vector<int64_t> out;
  if (to_last) {
    if (x.shape[1] % ctx.width != 0) {
      infer_error(ctx, fmt::format("input 0 '{}' has shape {}, expected [B,{}*C,H,W]", x.name,
                                   shape_string(x.shape), ctx.width));
    }
    out = {x.shape[0], x.shape[2], x.shape[3], x.shape[1] / ctx.width};
    if (ctx.width > 1) out.insert(out.begin(), ctx.width);
  } else if (stacked) {
    if (x.shape[0] != ctx.width) {
      infer_error(ctx, fmt::format("at width {} input 0 '{}' of shape {} must lead with the model dim",
                                   ctx.width, x.name, shape_string(x.shape)));
    }
    out = {x.shape[1], ctx.width * x.shape[4], x.shape[2], x.shape[3]};
  } else {
    out = {x.shape[0], x.shape[3], x.shape[1], x.shape[2]};
  }
  InferResult r;
  r.outputs.push_back({"", std::move(out), x.dtype, TensorRole::activation});
  return r;
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

  // derivatives.yaml (cat): saves nothing but the input sizes, which the graph's shapes carry.
  KindRules concat;
  concat.infer = infer_concat_channels;
  concat.backward_kind = OpKind::concat_channels_backward;
  concat.saved = {};
  concat.backward_flops = no_backward_flops;
  table[static_cast<size_t>(OpKind::concat_channels)] = concat;

  // derivatives.yaml (slice): slice_backward(grad, input_sizes, ...) saves only sizes.
  KindRules slice;
  slice.infer = infer_slice_channels;
  slice.backward_kind = OpKind::slice_channels_backward;
  slice.saved = {};
  slice.backward_flops = no_backward_flops;
  table[static_cast<size_t>(OpKind::slice_channels)] = slice;

  // view, transpose, contiguous, view: the gradient shuffled back (the inverse permutation); nothing saved.
  KindRules shuffle;
  shuffle.infer = infer_channel_shuffle;
  shuffle.backward_kind = OpKind::channel_shuffle_backward;
  shuffle.saved = {};
  shuffle.backward_flops = no_backward_flops;
  table[static_cast<size_t>(OpKind::channel_shuffle)] = shuffle;

  // derivatives.yaml (permute): the gradient permuted back; nothing saved.
  KindRules permute;
  permute.infer = infer_permute;
  permute.backward_kind = OpKind::permute_backward;
  permute.saved = {};
  permute.backward_flops = no_backward_flops;
  table[static_cast<size_t>(OpKind::permute)] = permute;
}

}  // namespace mutwo::ir
