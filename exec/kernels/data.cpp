// Data-movement kernels: embedding (one gather per model when fused: model m's indices are
// offset by m * V into the flattened [k*V,H] table), the ViT class token, token select, channel
// concatenation, slicing and shuffling, and the NCHW/NHWC permutes.
#include <ATen/ATen.h>

#include "exec/kernel.hpp"
#include "exec/model_tensors.hpp"

namespace mutwo::exec {
namespace {

// nn.Embedding: inputs indices, W [V,H] (fused [k,V,H]).
std::vector<at::Tensor> embedding(const KernelContext& c) {
  const at::Tensor& indices = c.inputs[0];
  const at::Tensor& w = c.inputs[1];
  if (!c.fused()) return {at::embedding(w, indices)};
  const int64_t k = w.size(0), rows = w.size(1);
  return {at::embedding(w.reshape({k * rows, w.size(2)}), offset_model_indices(indices, k, rows))};
}

// embedding_dense_backward of dY [...,H] into a zero [V,H] table (V from the weight gradient's
// shape: the forward weight is not an input of the backward).
at::Tensor dense_table_grad(const KernelContext& c, const at::Tensor& gy, const at::Tensor& indices) {
  const auto& shape = c.output_ir(0).shape;  // [V,H] or [k,V,H]
  if (!c.fused()) return at::embedding_dense_backward(gy, indices, shape[0], -1, false);
  const int64_t k = shape[0], rows = shape[1];
  return at::embedding_dense_backward(gy, offset_model_indices(indices, k, rows), k * rows, -1, false)
      .reshape(shape);
}

// inputs [dY, indices]; output dW.
std::vector<at::Tensor> embedding_backward(const KernelContext& c) {
  return {dense_table_grad(c, c.inputs[0], c.inputs[1])};
}

// ViT: patches [B,C,h,w] -> tokens [B,h*w,C] with the class token W [1,1,C] prepended; fused:
// patches [B,k*C,h,w] (channel layout), W [k,1,1,C] -> [k,B,1+h*w,C] (stacked).
std::vector<at::Tensor> class_token_concat(const KernelContext& c) {
  const at::Tensor& patches = c.inputs[0];
  const at::Tensor& token = c.inputs[1];
  const int64_t b = patches.size(0), hw = patches.size(2) * patches.size(3), ch = token.size(-1);
  if (!c.fused()) {
    const at::Tensor tokens = patches.flatten(2).transpose(1, 2);
    return {at::cat({token.expand({b, 1, ch}), tokens}, 1)};
  }
  const int64_t k = c.width();
  const at::Tensor tokens = patches.reshape({b, k, ch, hw}).permute({1, 0, 3, 2});
  return {at::cat({token.expand({k, b, 1, ch}), tokens}, 2)};
}

// inputs [dY]; outputs d patches (a transposing copy), d token (row 0 summed over the batch).
std::vector<at::Tensor> class_token_concat_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const int64_t tokens_dim = gy.dim() - 2;
  std::vector<at::Tensor> out;
  size_t next = 0;
  if (c.needs_grad(0)) {
    const auto& shape = c.output_ir(next++).shape;  // [B,k*C,h,w]
    const at::Tensor rows = gy.narrow(tokens_dim, 1, gy.size(tokens_dim) - 1);
    if (!c.fused()) {
      out.push_back(rows.transpose(1, 2).reshape(shape));
    } else {
      out.push_back(rows.permute({1, 0, 3, 2}).reshape(shape));  // [k,B,hw,C] -> [B,k,C,hw]
    }
  }
  if (c.needs_grad(1)) {
    out.push_back(gy.narrow(tokens_dim, 0, 1).sum(tokens_dim - 1, /*keepdim=*/true));
  }
  return out;
}

int64_t token_index(const KernelContext& c, int64_t tokens) {
  const int64_t index = c.attr_int("index", 0);
  return index < 0 ? index + tokens : index;
}

// x[:, index] of [..., T, C].
std::vector<at::Tensor> select_token(const KernelContext& c) {
  const at::Tensor& x = c.inputs[0];
  return {x.select(-2, token_index(c, x.size(-2)))};
}

// inputs [dY]; dY scattered into zeros of the forward input's shape.
std::vector<at::Tensor> select_token_backward(const KernelContext& c) {
  const auto& shape = c.output_ir(0).shape;
  at::Tensor dx = at::zeros(shape, c.inputs[0].options());
  dx.select(-2, token_index(c, shape[shape.size() - 2])).copy_(c.inputs[0]);
  return {dx};
}

// torch.cat(dim=1); fused, each model's channels stay together: [B,k*C_i,H,W] viewed [B,k,C_i,H,W]
// and concatenated on the per-model channel dim.
std::vector<at::Tensor> concat_channels(const KernelContext& c) {
  if (!c.fused()) return {at::cat(std::vector<at::Tensor>(c.inputs.begin(), c.inputs.end()), 1)};
  const int64_t k = c.width();
  std::vector<at::Tensor> parts;
  for (const at::Tensor& x : c.inputs) parts.push_back(x.reshape({x.size(0), k, -1, x.size(2), x.size(3)}));
  const at::Tensor y = at::cat(parts, 2);
  return {y.reshape({y.size(0), -1, y.size(3), y.size(4)})};
}

// inputs [dY]; each input that needs a gradient gets its channels (counts from the forward op).
std::vector<at::Tensor> concat_channels_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const ir::Op& fwd = c.forward();
  const int64_t k = c.width();
  const at::Tensor g = gy.reshape({gy.size(0), k, -1, gy.size(2), gy.size(3)});  // k = 1 alone
  std::vector<at::Tensor> out;
  int64_t offset = 0;
  for (size_t i = 0; i < fwd.inputs.size(); ++i) {
    const auto& shape = c.graph.tensor(fwd.inputs[i]).shape;
    const int64_t channels = shape[1] / k;
    if (c.needs_grad(i)) out.push_back(g.narrow(2, offset, channels).reshape(shape));
    offset += channels;
  }
  return out;
}

// x[:, start:start+length] as a copy; fused, each model's slice: [B,k,C,H,W] narrowed on the model's
// channels.
std::vector<at::Tensor> slice_channels(const KernelContext& c) {
  const at::Tensor& x = c.inputs[0];
  const int64_t k = c.width();
  const at::Tensor per_model = x.reshape({x.size(0), k, -1, x.size(2), x.size(3)});
  const at::Tensor y = per_model.narrow(2, c.attr_int("start", 0), c.attr_int("length", 1)).contiguous();
  return {y.reshape({x.size(0), -1, x.size(2), x.size(3)})};
}

// inputs [dY]: the gradient placed in zeros of the forward input's shape (slice_backward).
std::vector<at::Tensor> slice_channels_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const auto& shape = c.output_ir(0).shape;
  const int64_t k = c.width();
  at::Tensor dx = at::zeros(shape, gy.options());
  dx.view({shape[0], k, -1, shape[2], shape[3]})
      .narrow(2, c.attr_int("start", 0), c.attr_int("length", 1))
      .copy_(gy.reshape({gy.size(0), k, -1, gy.size(2), gy.size(3)}));
  return {dx};
}

// channel_shuffle per model: [B,k,g,C/g,H,W] with g and C/g swapped (k = 1 alone).
at::Tensor shuffle_channels(const at::Tensor& x, int64_t k, int64_t groups) {
  const at::Tensor y =
      x.reshape({x.size(0), k, groups, -1, x.size(2), x.size(3)}).transpose(2, 3).contiguous();
  return y.reshape(x.sizes());
}

std::vector<at::Tensor> channel_shuffle(const KernelContext& c) {
  return {shuffle_channels(c.inputs[0], c.width(), c.attr_int("groups", 1))};
}

// inputs [dY]: the inverse permutation is the shuffle with C/g groups.
std::vector<at::Tensor> channel_shuffle_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const int64_t k = c.width();
  return {shuffle_channels(gy, k, gy.size(1) / k / c.attr_int("groups", 1))};
}

// NCHW -> NHWC; fused [B,k*C,H,W] -> [k,B,H,W,C].
at::Tensor to_channels_last(const at::Tensor& x, int64_t k) {
  if (k == 1) return x.permute({0, 2, 3, 1}).contiguous();
  return x.reshape({x.size(0), k, -1, x.size(2), x.size(3)}).permute({1, 0, 3, 4, 2}).contiguous();
}

// NHWC -> NCHW; fused [k,B,H,W,C] -> [B,k*C,H,W].
at::Tensor to_channels_first(const at::Tensor& x, int64_t k) {
  if (k == 1) return x.permute({0, 3, 1, 2}).contiguous();
  return x.permute({1, 0, 4, 2, 3}).reshape({x.size(1), -1, x.size(2), x.size(3)});
}

bool permutes_to_channels_last(const KernelContext& c) {
  return ir::attr_ints(c.op.attrs, "dims", c.op.name).at(1) == 2;  // a backward op carries the attrs
}

std::vector<at::Tensor> permute(const KernelContext& c) {
  return {permutes_to_channels_last(c) ? to_channels_last(c.inputs[0], c.width())
                                       : to_channels_first(c.inputs[0], c.width())};
}

// inputs [dY]: the gradient permuted back.
std::vector<at::Tensor> permute_backward(const KernelContext& c) {
  return {permutes_to_channels_last(c) ? to_channels_first(c.inputs[0], c.width())
                                       : to_channels_last(c.inputs[0], c.width())};
}

}  // namespace

void register_data_kernels(KernelTable& table) {
  using ir::OpKind;
  table[static_cast<size_t>(OpKind::embedding)] = embedding;
  table[static_cast<size_t>(OpKind::embedding_backward)] = embedding_backward;
  table[static_cast<size_t>(OpKind::class_token_concat)] = class_token_concat;
  table[static_cast<size_t>(OpKind::class_token_concat_backward)] = class_token_concat_backward;
  table[static_cast<size_t>(OpKind::select_token)] = select_token;
  table[static_cast<size_t>(OpKind::select_token_backward)] = select_token_backward;
  table[static_cast<size_t>(OpKind::concat_channels)] = concat_channels;
  table[static_cast<size_t>(OpKind::concat_channels_backward)] = concat_channels_backward;
  table[static_cast<size_t>(OpKind::slice_channels)] = slice_channels;
  table[static_cast<size_t>(OpKind::slice_channels_backward)] = slice_channels_backward;
  table[static_cast<size_t>(OpKind::channel_shuffle)] = channel_shuffle;
  table[static_cast<size_t>(OpKind::channel_shuffle_backward)] = channel_shuffle_backward;
  table[static_cast<size_t>(OpKind::permute)] = permute;
  table[static_cast<size_t>(OpKind::permute_backward)] = permute_backward;
}

}  // namespace mutwo::exec
