#pragma once
// How a convolution runs, decided once when the op is built and recorded on it, so that the executor
// runs and the cost sources price the same kernels (both read the Schedule's graph).
//
// A grouped 1x1 convolution with no padding and dilation 1 (what HFTA makes of k models' pointwise
// convolutions: k times their groups), whose weights are no larger than its activations, runs as one
// strided-batched GEMM of N * groups products
// (exec/pointwise_conv.hpp; why: cuDNN ran such convolutions 15-25x slower than their models' own
// kernels on the lent H100, docs/VALIDATION-H100.md). Its kind rule (ir/kinds/conv.cpp) records
// "lowering" = "batched-gemm" on such an op; an op without the attribute runs through cuDNN, as every
// convolution did before the attribute existed (the schedules of earlier GPU leases).
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/attributes.hpp"
#include "ir/op.hpp"
#include "ir/tensor.hpp"

namespace mutwo::ir {

inline constexpr std::string_view kConvLoweringAttr = "lowering";
inline constexpr std::string_view kBatchedGemmLowering = "batched-gemm";

// Whether a convolution of input x ([N, G*Ci, H, W]), weight ([G*Co, Ci, kh, kw]), output y ([N, G*Co,
// P, Q]), padding, dilation and effective groups (ir/conv_groups.hpp) runs as a batched GEMM: 1x1,
// padding 0, dilation 1, groups > 1, at any stride, and the weight broadcast over the N images (the
// GEMMs' temporaries, batched_gemm_workspace_bytes) no larger than x or y. Where the weights
// outweigh the activations (deep layers at small images) the temporaries would cost more memory
// than the activations the op moves, and the convolution stays cuDNN's.
bool conv_fits_batched_gemm(const std::vector<int64_t>& x, const std::vector<int64_t>& weight,
                            const std::vector<int64_t>& y, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups);

// The temporaries exec/pointwise_conv.cpp holds while it runs such a convolution, forward or backward:
// the weight broadcast over the N images that at::matmul copies (forward, and W^T for dX) or the
// per-image partial sums of dW, N * G*Co * Ci elements either way; and with a stride above 1 the
// sampled input (or dX before its scatter), N * G*Ci * P*Q elements. Element size of x's dtype. x
// [N, G*Ci, H, W], weight [G*Co, Ci, 1, 1], y [N, G*Co, P, Q].
int64_t batched_gemm_workspace_bytes(const Tensor& x, const std::vector<int64_t>& weight,
                                     const std::vector<int64_t>& y);

// Whether the op (a conv2d, or its backward, which carries the forward's attributes) was recorded to
// run as a batched GEMM. Throws GraphError on a "lowering" attribute of another value.
bool conv_runs_as_batched_gemm(const Attributes& attrs, std::string_view where);
bool conv_runs_as_batched_gemm(const Op& op);
// The same, false for any op but a conv2d or conv2d_backward.
bool is_conv_run_as_gemm(const Op& op);

}  // namespace mutwo::ir
