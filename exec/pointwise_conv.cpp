#include "exec/pointwise_conv.hpp"

#include <ATen/ATen.h>

#include "exec/tf32_guard.hpp"

namespace mutwo::exec {
namespace {

bool strided(const std::vector<int64_t>& stride) {
  return stride.at(0) != 1 || stride.at(1) != 1;
}

// The pixels a 1x1 convolution of this stride reads: every stride-th row and column.
at::Tensor sampled(const at::Tensor& x, const std::vector<int64_t>& stride) {
  if (!strided(stride)) return x;
  return x.slice(2, 0, c10::nullopt, stride[0]).slice(3, 0, c10::nullopt, stride[1]);
}

// x [N, G*Ci, H, W] as [N, G, Ci, H*W] (a copy only when x is strided or not contiguous).
at::Tensor per_group(const at::Tensor& x, int64_t groups) {
  return x.reshape({x.size(0), groups, x.size(1) / groups, x.size(2) * x.size(3)});
}

}  // namespace

at::Tensor pointwise_conv_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                                  const std::vector<int64_t>& stride, int64_t groups) {
  const Tf32Guard math(at::globalContext().allowTF32CuDNN());
  const at::Tensor xs = sampled(x, stride);
  const int64_t co = w.size(0) / groups;
  // [1, G, Co, Ci] x [N, G, Ci, HW]: one batched GEMM of N * G products.
  at::Tensor y = at::matmul(w.reshape({1, groups, co, w.size(1)}), per_group(xs, groups));
  y = y.reshape({xs.size(0), w.size(0), xs.size(2), xs.size(3)});
  if (bias.defined()) y.add_(bias.reshape({1, -1, 1, 1}));
  return y;
}

std::array<at::Tensor, 3> pointwise_conv_backward(const at::Tensor& dy, const at::Tensor& x,
                                                  const at::Tensor& w, const std::vector<int64_t>& stride,
                                                  int64_t groups, std::array<bool, 3> mask) {
  const Tf32Guard math(at::globalContext().allowTF32CuDNN());
  const int64_t co = w.size(0) / groups;
  const at::Tensor dy4 = per_group(dy, groups);  // [N, G, Co, HW]
  std::array<at::Tensor, 3> out;
  if (mask[0]) {
    const at::Tensor w4 = w.reshape({1, groups, co, w.size(1)});
    const at::Tensor dxs =
        at::matmul(w4.transpose(-1, -2), dy4).reshape({dy.size(0), x.size(1), dy.size(2), dy.size(3)});
    if (strided(stride)) {
      out[0] = at::zeros_like(x, at::MemoryFormat::Contiguous);
      sampled(out[0], stride).copy_(dxs);
    } else {
      out[0] = dxs;
    }
  }
  if (mask[1]) {
    // One Co x Ci product per image and group, summed over the images: the partial sums are N * G * Co * Ci
    // elements, where one GEMM per group over every image's pixels would first copy x and dY into
    // [G, C, N*HW] (activation-sized temporaries the memory plan does not hold).
    const at::Tensor x4 = per_group(sampled(x, stride), groups);
    out[1] = at::matmul(dy4, x4.transpose(-1, -2)).sum(0).reshape(w.sizes());
  }
  if (mask[2]) out[2] = dy.sum({0, 2, 3});
  return out;
}

}  // namespace mutwo::exec
