// Normalisation kernels: layer norm (per-model affine when fused) and training-mode batch norm
// (channels are independent, so the fused op is k batch norms as is); forward and backward with
// ATen's native kernels (derivatives.yaml: native_layer_norm, native_batch_norm).
#include <ATen/ATen.h>

#include "exec/kernel.hpp"

namespace mutwo::exec {

at::Tensor per_model_affine(const at::Tensor& p, int64_t x_dim) {
  std::vector<int64_t> shape(static_cast<size_t>(x_dim), 1);
  shape.front() = p.size(0);
  shape.back() = p.size(1);
  return p.reshape(shape);
}

namespace {

// inputs x, gamma, beta; outputs y, mean, rstd ([...,1]).
std::vector<at::Tensor> layernorm(const KernelContext& c) {
  const at::Tensor& x = c.inputs[0];
  const double eps = c.attr_double("eps", 1e-5);
  const std::vector<int64_t> normalized{x.size(-1)};
  if (!c.fused()) {
    auto [y, mean, rstd] = at::native_layer_norm(x, normalized, c.inputs[1], c.inputs[2], eps);
    return {y, mean, rstd};
  }
  // One normalisation for all models, then each model's affine transform.
  auto [xhat, mean, rstd] = at::native_layer_norm(x, normalized, {}, {}, eps);
  const at::Tensor y =
      at::addcmul(per_model_affine(c.inputs[2], x.dim()), xhat, per_model_affine(c.inputs[1], x.dim()));
  return {y, mean, rstd};
}

// inputs [dY, x, gamma, beta, mean, rstd]; outputs dx, dgamma, dbeta as needed.
std::vector<at::Tensor> layernorm_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const at::Tensor& x = c.inputs[1];
  const at::Tensor& gamma = c.inputs[2];
  const at::Tensor& beta = c.inputs[3];
  const at::Tensor& mean = c.inputs[4];
  const at::Tensor& rstd = c.inputs[5];
  const std::vector<int64_t> normalized{x.size(-1)};
  const std::array<bool, 3> mask{c.needs_grad(0), c.needs_grad(1), c.needs_grad(2)};
  std::vector<at::Tensor> out;
  if (!c.fused()) {
    auto [dx, dgamma, dbeta] =
        at::native_layer_norm_backward(gy, x, normalized, mean, rstd, gamma, beta, mask);
    if (mask[0]) out.push_back(dx);
    if (mask[1]) out.push_back(dgamma);
    if (mask[2]) out.push_back(dbeta);
    return out;
  }
  // y = xhat * gamma_m + beta_m: dx through the un-affine norm with dY * gamma_m; dgamma, dbeta
  // reduce over every dim but the model and the feature dims.
  std::vector<int64_t> reduce;
  for (int64_t d = 1; d + 1 < x.dim(); ++d) reduce.push_back(d);
  if (mask[0]) {
    auto grads = at::native_layer_norm_backward(gy * per_model_affine(gamma, x.dim()), x, normalized, mean,
                                                rstd, {}, {}, {true, false, false});
    out.push_back(std::get<0>(grads));
  }
  // x [k,H] has nothing to reduce (an empty dim list would reduce every dim).
  auto reduced = [&](const at::Tensor& t) { return reduce.empty() ? t : t.sum(reduce); };
  if (mask[1]) out.push_back(reduced(gy * ((x - mean) * rstd)));
  if (mask[2]) out.push_back(reduced(gy));
  return out;
}

// inputs x, gamma, beta; outputs y, save_mean, save_invstd. No running statistics (op_kind.hpp).
std::vector<at::Tensor> batchnorm2d(const KernelContext& c) {
  auto [y, mean, invstd] = at::native_batch_norm(c.inputs[0], c.inputs[1], c.inputs[2], {}, {}, true, 0.1,
                                                 c.attr_double("eps", 1e-5));
  return {y, mean, invstd};
}

// inputs [dY, x, gamma, save_mean, save_invstd].
std::vector<at::Tensor> batchnorm2d_backward(const KernelContext& c) {
  const std::array<bool, 3> mask{c.needs_grad(0), c.needs_grad(1), c.needs_grad(2)};
  auto [dx, dgamma, dbeta] =
      at::native_batch_norm_backward(c.inputs[0], c.inputs[1], c.inputs[2], {}, {}, c.inputs[3], c.inputs[4],
                                     true, c.attr_double("eps", 1e-5), mask);
  std::vector<at::Tensor> out;
  if (mask[0]) out.push_back(dx);
  if (mask[1]) out.push_back(dgamma);
  if (mask[2]) out.push_back(dbeta);
  return out;
}

}  // namespace

void register_norm_kernels(KernelTable& table) {
  using ir::OpKind;
  table[static_cast<size_t>(OpKind::layernorm)] = layernorm;
  table[static_cast<size_t>(OpKind::layernorm_backward)] = layernorm_backward;
  table[static_cast<size_t>(OpKind::batchnorm2d)] = batchnorm2d;
  table[static_cast<size_t>(OpKind::batchnorm2d_backward)] = batchnorm2d_backward;
}

}  // namespace mutwo::exec
