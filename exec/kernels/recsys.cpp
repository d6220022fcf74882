// Recommendation-model kernels (DLRM): embedding bag (sum), concat, dot interaction, BCE with
// logits; forward and backward. Fused operands are stacked ([k, ...]).
#include <ATen/ATen.h>

#include "exec/kernel.hpp"
#include "exec/model_tensors.hpp"

namespace mutwo::exec {
namespace {

// nn.EmbeddingBag(mode="sum") with bags of a fixed size L: indices [..,B,L], W [V,D] -> [..,B,D].
std::vector<at::Tensor> embedding_bag(const KernelContext& c) {
  const at::Tensor& indices = c.inputs[0];
  const at::Tensor& w = c.inputs[1];
  if (!c.fused()) return {at::embedding(w, indices).sum(-2)};
  const int64_t k = w.size(0), rows = w.size(1);
  return {at::embedding(w.reshape({k * rows, w.size(2)}), offset_model_indices(indices, k, rows)).sum(-2)};
}

// inputs [dY, indices]: every index of a bag receives the bag's gradient.
std::vector<at::Tensor> embedding_bag_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const at::Tensor& indices = c.inputs[1];
  const auto& shape = c.output_ir(0).shape;
  std::vector<int64_t> expanded = indices.sizes().vec();
  expanded.push_back(gy.size(-1));
  const at::Tensor g = gy.unsqueeze(-2).expand(expanded);
  if (!c.fused()) return {at::embedding_dense_backward(g, indices, shape[0], -1, false)};
  const int64_t k = shape[0], rows = shape[1];
  return {at::embedding_dense_backward(g, offset_model_indices(indices, k, rows), k * rows, -1, false)
              .reshape(shape)};
}

std::vector<at::Tensor> concat(const KernelContext& c) {
  return {at::cat(std::vector<at::Tensor>(c.inputs.begin(), c.inputs.end()), -1)};
}

// inputs [dY]; each input that needs a gradient gets its slice (widths from the forward op).
std::vector<at::Tensor> concat_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const ir::Op& fwd = c.forward();
  std::vector<at::Tensor> out;
  int64_t offset = 0;
  for (size_t i = 0; i < fwd.inputs.size(); ++i) {
    const int64_t width = c.graph.tensor(fwd.inputs[i]).shape.back();
    if (c.needs_grad(i)) out.push_back(gy.narrow(-1, offset, width));
    offset += width;
  }
  return out;
}

// DLRM's pair order (interact_features, no self-interaction): (i, j) for i in 0..n-1, j < i,
// row-major, as flat indices i * n + j into [.., n*n]. Built on the device (tril_indices walks the
// strictly lower triangle row by row): no host copy, so a CUDA graph can capture it.
at::Tensor lower_pair_indices(int64_t n, const at::TensorOptions& options) {
  const at::Tensor ij = at::tril_indices(n, n, -1, options.dtype(at::kLong));
  return ij[0] * n + ij[1];
}

// T = stack(inputs) [..,n,d]; Z = T T^T; out = cat(dense, Z[.., li, lj]).
std::vector<at::Tensor> dot_interaction(const KernelContext& c) {
  const std::vector<at::Tensor> features(c.inputs.begin(), c.inputs.end());
  const at::Tensor t = at::stack(features, -2);
  const at::Tensor z = at::matmul(t, t.transpose(-1, -2));
  // z[..., li, lj] -> [.., pairs]
  const at::Tensor flat = z.flatten(-2).index_select(-1, lower_pair_indices(t.size(-2), t.options()));
  return {at::cat({features[0], flat}, -1)};
}

// inputs [dY, every forward input]: dZ from dY's pair columns, dT = (dZ + dZ^T) T, plus dY's
// leading d columns for the dense input.
std::vector<at::Tensor> dot_interaction_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const std::vector<at::Tensor> features(c.inputs.begin() + 1, c.inputs.end());
  const at::Tensor t = at::stack(features, -2);
  const int64_t n = t.size(-2), d = t.size(-1);
  std::vector<int64_t> z_shape = t.sizes().vec();
  z_shape.back() = n;  // [.., n, n]
  std::vector<int64_t> flat_shape(z_shape.begin(), z_shape.end() - 2);
  flat_shape.push_back(n * n);
  const at::Tensor dz =
      at::zeros(flat_shape, gy.options())
          .index_copy(-1, lower_pair_indices(n, t.options()), gy.narrow(-1, d, gy.size(-1) - d))
          .reshape(z_shape);
  const at::Tensor dt = at::matmul(dz + dz.transpose(-1, -2), t);
  std::vector<at::Tensor> out;
  for (int64_t i = 0; i < n; ++i) {
    if (!c.needs_grad(static_cast<size_t>(i))) continue;
    at::Tensor g = dt.select(-2, i);
    if (i == 0) g = g + gy.narrow(-1, 0, d);
    out.push_back(g);
  }
  return out;
}

// Elements per model of a loss input: every dim but the model dim when fused.
int64_t per_model_count(const at::Tensor& t, bool fused) {
  return fused ? t.numel() / t.size(0) : t.numel();
}

// Mean per model: [] at width 1, [k] fused.
at::Tensor mean_per_model(const at::Tensor& values, bool fused) {
  return fused ? values.reshape({values.size(0), -1}).mean(1) : values.mean();
}

// binary_cross_entropy_with_logits, mean per model.
std::vector<at::Tensor> bce_with_logits(const KernelContext& c) {
  const at::Tensor per_element = at::binary_cross_entropy_with_logits(c.inputs[0], c.inputs[1], {}, {}, 0);
  return {mean_per_model(per_element, c.fused())};
}

// inputs [logits, labels] (a loss: d loss / d loss = 1): (sigmoid(x) - y) / n.
std::vector<at::Tensor> bce_with_logits_backward(const KernelContext& c) {
  const at::Tensor& x = c.inputs[0];
  return {(at::sigmoid(x) - c.inputs[1]).div_(static_cast<double>(per_model_count(x, c.fused())))};
}

}  // namespace

void register_recsys_kernels(KernelTable& table) {
  using ir::OpKind;
  table[static_cast<size_t>(OpKind::embedding_bag)] = embedding_bag;
  table[static_cast<size_t>(OpKind::embedding_bag_backward)] = embedding_bag_backward;
  table[static_cast<size_t>(OpKind::concat)] = concat;
  table[static_cast<size_t>(OpKind::concat_backward)] = concat_backward;
  table[static_cast<size_t>(OpKind::dot_interaction)] = dot_interaction;
  table[static_cast<size_t>(OpKind::dot_interaction_backward)] = dot_interaction_backward;
  table[static_cast<size_t>(OpKind::bce_with_logits)] = bce_with_logits;
  table[static_cast<size_t>(OpKind::bce_with_logits_backward)] = bce_with_logits_backward;
}

}  // namespace mutwo::exec
