// Convolution-family kernels: conv2d (a grouped convolution over k models when fused, HFTA; a grouped
// 1x1 one as a batched GEMM where the op records it, ir/conv_lowering.hpp and exec/pointwise_conv.hpp), max,
// average and adaptive average pooling, flatten; forward and backward.
#include <ATen/ATen.h>

#include "exec/kernel.hpp"
#include "exec/pointwise_conv.hpp"
#include "ir/conv_groups.hpp"
#include "ir/conv_lowering.hpp"

namespace mutwo::exec {
namespace {

std::vector<int64_t> ints(const KernelContext& c, std::string_view key, std::vector<int64_t> fallback) {
  return ir::attr_ints_or(c.op.attrs, key, std::move(fallback), c.op.name);
}

struct ConvParams {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
};

// Attributes of the forward op (a backward op carries a copy of them).
ConvParams conv_params(const KernelContext& c) {
  return {ints(c, "stride", {1, 1}), ints(c, "padding", {0, 0}), ints(c, "dilation", {1, 1}),
          ir::conv_groups(c.op)};
}

std::vector<at::Tensor> conv2d(const KernelContext& c) {
  const ConvParams p = conv_params(c);
  const at::Tensor bias = c.inputs.size() == 3 ? c.inputs[2] : at::Tensor();
  if (ir::conv_runs_as_batched_gemm(c.op)) {
    return {pointwise_conv_forward(c.inputs[0], c.inputs[1], bias, p.stride, p.groups)};
  }
  return {at::convolution(c.inputs[0], c.inputs[1], bias, p.stride, p.padding, p.dilation, false, {0, 0},
                          p.groups)};
}

// inputs [dY, x, W]; outputs dX, dW, db (at::convolution_backward's output_mask).
std::vector<at::Tensor> conv2d_backward(const KernelContext& c) {
  const ConvParams p = conv_params(c);
  const at::Tensor& w = c.inputs[2];
  const bool has_bias = c.forward().inputs.size() == 3;
  const std::array<bool, 3> mask{c.needs_grad(0), c.needs_grad(1), has_bias && c.needs_grad(2)};
  const std::vector<int64_t> bias_sizes{w.size(0)};
  std::array<at::Tensor, 3> grads;
  if (ir::conv_runs_as_batched_gemm(c.forward())) {
    grads = pointwise_conv_backward(c.inputs[0], c.inputs[1], w, p.stride, p.groups, mask);
  } else {
    auto [dx, dw, db] = at::convolution_backward(
        c.inputs[0], c.inputs[1], w, has_bias ? at::OptionalIntArrayRef(bias_sizes) : c10::nullopt, p.stride,
        p.padding, p.dilation, false, {0, 0}, p.groups, mask);
    grads = {dx, dw, db};
  }
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (mask[i]) out.push_back(grads[i]);
  }
  return out;
}

struct PoolParams {
  std::vector<int64_t> kernel, stride, padding;
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg_pool2d only
};

PoolParams pool_params(const KernelContext& c) {
  const auto kernel = ir::attr_ints(c.op.attrs, "kernel", c.op.name);
  return {kernel, ints(c, "stride", kernel), ints(c, "padding", {0, 0}), c.attr_int("ceil_mode", 0) != 0,
          c.attr_int("count_include_pad", 1) != 0};
}

std::vector<at::Tensor> max_pool2d(const KernelContext& c) {
  const PoolParams p = pool_params(c);
  auto [y, indices] =
      at::max_pool2d_with_indices(c.inputs[0], p.kernel, p.stride, p.padding, {1, 1}, p.ceil_mode);
  return {y, indices};
}

// inputs [dY, x, indices].
std::vector<at::Tensor> max_pool2d_backward(const KernelContext& c) {
  const PoolParams p = pool_params(c);
  return {at::max_pool2d_with_indices_backward(c.inputs[0], c.inputs[1], p.kernel, p.stride, p.padding,
                                               {1, 1}, p.ceil_mode, c.inputs[2])};
}

std::vector<at::Tensor> avg_pool2d(const KernelContext& c) {
  const PoolParams p = pool_params(c);
  return {at::avg_pool2d(c.inputs[0], p.kernel, p.stride, p.padding, p.ceil_mode, p.count_include_pad)};
}

// inputs [dY, x].
std::vector<at::Tensor> avg_pool2d_backward(const KernelContext& c) {
  const PoolParams p = pool_params(c);
  return {at::avg_pool2d_backward(c.inputs[0], c.inputs[1], p.kernel, p.stride, p.padding, p.ceil_mode,
                                  p.count_include_pad, c10::nullopt)};
}

std::vector<at::Tensor> adaptive_avg_pool2d(const KernelContext& c) {
  return {at::_adaptive_avg_pool2d(c.inputs[0], {1, 1})};
}

// inputs [dY, x].
std::vector<at::Tensor> adaptive_avg_pool2d_backward(const KernelContext& c) {
  return {at::_adaptive_avg_pool2d_backward(c.inputs[0], c.inputs[1])};
}

// [B,C,H,W] -> [B,C*H*W]; fused [B,k*C,H,W] -> [k,B,C*H*W] (channel layout to stacked).
std::vector<at::Tensor> flatten(const KernelContext& c) {
  const at::Tensor& x = c.inputs[0];
  if (!c.fused()) return {x.flatten(1)};
  const int64_t k = c.width();
  return {x.reshape({x.size(0), k, -1}).transpose(0, 1).contiguous()};
}

// inputs [dY]; output of the forward input's shape.
std::vector<at::Tensor> flatten_backward(const KernelContext& c) {
  const at::Tensor& g = c.inputs[0];
  const auto& shape = c.output_ir(0).shape;
  if (!c.fused()) return {g.reshape(shape)};
  return {g.transpose(0, 1).reshape(shape)};
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  using ir::OpKind;
  table[static_cast<size_t>(OpKind::conv2d)] = conv2d;
  table[static_cast<size_t>(OpKind::conv2d_backward)] = conv2d_backward;
  table[static_cast<size_t>(OpKind::max_pool2d)] = max_pool2d;
  table[static_cast<size_t>(OpKind::max_pool2d_backward)] = max_pool2d_backward;
  table[static_cast<size_t>(OpKind::adaptive_avg_pool2d)] = adaptive_avg_pool2d;
  table[static_cast<size_t>(OpKind::adaptive_avg_pool2d_backward)] = adaptive_avg_pool2d_backward;
  table[static_cast<size_t>(OpKind::avg_pool2d)] = avg_pool2d;
  table[static_cast<size_t>(OpKind::avg_pool2d_backward)] = avg_pool2d_backward;
  table[static_cast<size_t>(OpKind::flatten)] = flatten;
  table[static_cast<size_t>(OpKind::flatten_backward)] = flatten_backward;
}

}  // namespace mutwo::exec
