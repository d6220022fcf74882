#pragma once
// A grouped 1x1 convolution run as one batched GEMM: what a fused model array's pointwise
// convolutions (HFTA: k models' 1x1 convolutions become one with k times the groups) execute as.
//
// Why: cuDNN runs a grouped 1x1 convolution with few channels per group with a poor algorithm. On
// the lent H100 (docs/VALIDATION-H100.md) the backward of MobileNet-V2's fused 1x1 expansion at
// 112x112 (4 models, 16 -> 96 channels each, batch 32) took 15.1 ms where its four models' own
// kernels take 0.6 ms, and a 2-wide fused resnet18 downsample 22.5x its two models' kernels; the
// autotuner (cudnn.benchmark) did not remove it. A 1x1 convolution is a product per image and group:
//   y[n, g] = W[g] x[n, g]   with x[n, g]: Ci x (H W), W[g]: Co x Ci
// so the whole op is one strided-batched GEMM of N * G products (Co x HW x Ci), its backward two more
// (dX = W^T dY; dW = sum over n of dY x^T) and a sum over the images. The GEMMs run under cuDNN's
// TF32 flag (on by PyTorch's default), the math of the convolution they replace, not cuBLAS's (off).
//
// Runs the convolutions whose op records "lowering" = "batched-gemm" (ir/conv_lowering.hpp: a 1x1
// kernel, no padding, dilation 1, more than one group, at any stride, weights no larger than the
// activations; a stride s samples every s-th pixel first, a copy). Its temporaries (the weight
// broadcast over the images, dW's per-image partial sums, the sampled input) are the op's workspace
// in the memory rule (ir::batched_gemm_workspace_bytes), and costmodel/pointwise_conv_kernels.hpp
// prices its kernels. Ungrouped 1x1 convolutions stay with at::convolution, which cuDNN runs well.
// Used on every device, so the CPU suites test the path the GPU runs (tests/test_exec_kernels.cpp:
// against at::convolution and autograd).
#include <array>
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

namespace mutwo::exec {

// y = conv2d(x, w, bias, stride, padding 0, dilation 1, groups); `bias` may be undefined.
at::Tensor pointwise_conv_forward(const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias,
                                  const std::vector<int64_t>& stride, int64_t groups);

// at::convolution_backward's dX, dW, db for the same convolution; an entry whose mask is false is
// undefined.
std::array<at::Tensor, 3> pointwise_conv_backward(const at::Tensor& dy, const at::Tensor& x,
                                                  const at::Tensor& w, const std::vector<int64_t>& stride,
                                                  int64_t groups, std::array<bool, 3> mask);

}  // namespace mutwo::exec
