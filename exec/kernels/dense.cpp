// Dense kernels: linear (a batched matmul over the model dim when fused, HFTA) and the attention
// products, forward and backward (derivatives.yaml: addmm, bmm).
#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "exec/kernel.hpp"

namespace mutwo::exec {
namespace {

// [..., n] -> [k, rows, n] (fused: dim 0 is the model) or [rows, n].
at::Tensor rows_of(const at::Tensor& t, bool fused) {
  return fused ? t.reshape({t.size(0), -1, t.size(-1)}) : t.reshape({-1, t.size(-1)});
}

// y = x W^T + b; fused: x [k,...,in], W [k,out,in], b [k,out] -> baddbmm per model.
std::vector<at::Tensor> linear(const KernelContext& c) {
  const at::Tensor& x = c.inputs[0];
  const at::Tensor& w = c.inputs[1];
  const bool bias = c.inputs.size() == 3;
  if (!c.fused()) return {bias ? at::linear(x, w, c.inputs[2]) : at::linear(x, w)};
  const at::Tensor x3 = rows_of(x, true);
  const at::Tensor y =
      bias ? at::baddbmm(c.inputs[2].unsqueeze(1), x3, w.transpose(1, 2)) : at::bmm(x3, w.transpose(1, 2));
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = w.size(1);
  return {y.reshape(shape)};
}

// inputs [dY, x, W]; outputs dX, dW, db for the inputs that need them.
std::vector<at::Tensor> linear_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const at::Tensor& x = c.inputs[1];
  const at::Tensor& w = c.inputs[2];
  const bool fused = c.fused();
  const at::Tensor g2 = rows_of(gy, fused);
  std::vector<at::Tensor> out;
  if (c.needs_grad(0)) {
    const at::Tensor dx = fused ? at::bmm(g2, w) : at::mm(g2, w);
    out.push_back(dx.reshape(x.sizes()));
  }
  if (c.needs_grad(1)) {
    const at::Tensor x2 = rows_of(x, fused);
    out.push_back(fused ? at::bmm(g2.transpose(1, 2), x2) : at::mm(g2.t(), x2));
  }
  if (c.forward().inputs.size() == 3 && c.needs_grad(2)) out.push_back(g2.sum(fused ? 1 : 0));
  return out;
}

// [..., T, H] -> [..., heads, T, H/heads]
at::Tensor split_heads(const at::Tensor& t, int64_t heads) {
  std::vector<int64_t> shape = t.sizes().vec();
  const int64_t hidden = shape.back();
  shape.back() = heads;
  shape.push_back(hidden / heads);
  return t.reshape(shape).transpose(-3, -2);
}

// [..., heads, T, d] -> [..., T, heads * d]
at::Tensor merge_heads(const at::Tensor& t) {
  std::vector<int64_t> shape = t.sizes().vec();
  const at::Tensor moved = t.transpose(-3, -2);
  shape.pop_back();
  shape.pop_back();
  shape.pop_back();
  shape.push_back(t.size(-2));
  shape.push_back(t.size(-3) * t.size(-1));
  return moved.reshape(shape);
}

// Positions above the diagonal, masked for causal attention (GPT-2's causal bias).
at::Tensor causal_mask(int64_t seq, const at::TensorOptions& like) {
  return at::ones({seq, seq}, like.dtype(at::kBool)).triu(1);
}

// torch.finfo(dtype).min
at::Scalar lowest(at::ScalarType type) {
  switch (type) {
    case at::kDouble:
      return std::numeric_limits<double>::lowest();
    case at::kHalf:
      return -65504.0;
    case at::kBFloat16:
      return -3.3895313892515355e38;
    default:
      return std::numeric_limits<float>::lowest();
  }
}

double scores_scale(const KernelContext& c, int64_t hidden, int64_t heads) {
  return c.attr_double("scale", 1.0 / std::sqrt(static_cast<double>(hidden / heads)));
}

// scores = (q k^T) * scale per head, masked with the dtype's lowest value above the diagonal
// when causal (as transformers' GPT-2 fills torch.finfo(dtype).min before its softmax).
std::vector<at::Tensor> attn_scores(const KernelContext& c) {
  const int64_t heads = c.attr_int("heads", 1);
  const at::Tensor& q = c.inputs[0];
  const at::Tensor& k = c.inputs[1];
  const double scale = scores_scale(c, q.size(-1), heads);
  at::Tensor s = at::matmul(split_heads(q, heads), split_heads(k, heads).transpose(-2, -1)).mul_(scale);
  if (c.attr_int("causal", 0) != 0)
    s.masked_fill_(causal_mask(q.size(-2), q.options()), lowest(q.scalar_type()));
  return {s};
}

// inputs [dS, q, k]: dq = dS' k, dk = dS'^T q with dS' = dS * scale, zero where masked.
std::vector<at::Tensor> attn_scores_backward(const KernelContext& c) {
  const int64_t heads = c.attr_int("heads", 1);
  const at::Tensor& q = c.inputs[1];
  const at::Tensor& k = c.inputs[2];
  at::Tensor gs = c.inputs[0] * scores_scale(c, q.size(-1), heads);
  if (c.attr_int("causal", 0) != 0) gs.masked_fill_(causal_mask(q.size(-2), q.options()), 0);
  std::vector<at::Tensor> out;
  if (c.needs_grad(0)) out.push_back(merge_heads(at::matmul(gs, split_heads(k, heads))));
  if (c.needs_grad(1)) out.push_back(merge_heads(at::matmul(gs.transpose(-2, -1), split_heads(q, heads))));
  return out;
}

// context = p v per head, heads merged: p [..,h,T,T], v [..,T,H] -> [..,T,H].
std::vector<at::Tensor> attn_context(const KernelContext& c) {
  const at::Tensor& p = c.inputs[0];
  const int64_t heads = p.size(-3);
  return {merge_heads(at::matmul(p, split_heads(c.inputs[1], heads)))};
}

// inputs [dO, p, v]: dp = dO_h v_h^T, dv = p^T dO_h.
std::vector<at::Tensor> attn_context_backward(const KernelContext& c) {
  const at::Tensor& p = c.inputs[1];
  const int64_t heads = p.size(-3);
  const at::Tensor go = split_heads(c.inputs[0], heads);
  std::vector<at::Tensor> out;
  if (c.needs_grad(0)) out.push_back(at::matmul(go, split_heads(c.inputs[2], heads).transpose(-2, -1)));
  if (c.needs_grad(1)) out.push_back(merge_heads(at::matmul(p.transpose(-2, -1), go)));
  return out;
}

}  // namespace

void register_dense_kernels(KernelTable& table) {
  using ir::OpKind;
  table[static_cast<size_t>(OpKind::linear)] = linear;
  table[static_cast<size_t>(OpKind::linear_backward)] = linear_backward;
  table[static_cast<size_t>(OpKind::attn_scores)] = attn_scores;
  table[static_cast<size_t>(OpKind::attn_scores_backward)] = attn_scores_backward;
  table[static_cast<size_t>(OpKind::attn_context)] = attn_context;
  table[static_cast<size_t>(OpKind::attn_context_backward)] = attn_context_backward;
}

}  // namespace mutwo::exec
