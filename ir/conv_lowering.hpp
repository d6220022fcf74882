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

// Such a convolution's products, from x [N, G*Ci, H, W], weight [G*Co, Ci, 1, 1], y [N, G*Co, P, Q] and
// its effective groups G: N*G products Co x (P*Q) x Ci; a stride above 1 when P*Q < H*W. What the
// memory rule (below) and the cost sources (costmodel/pointwise_conv_kernels.hpp) both count.
struct PointwiseGemm {
  int64_t images = 0;        // N
  int64_t groups = 0;        // G
  int64_t in_channels = 0;   // Ci, per group
  int64_t out_channels = 0;  // Co, per group
  int64_t pixels = 0;        // P*Q
  bool strided = false;
};
PointwiseGemm pointwise_gemm(const std::vector<int64_t>& x, const std::vector<int64_t>& weight,
                             const std::vector<int64_t>& y, int64_t groups);

// The temporaries exec/pointwise_conv.cpp holds while it runs such a convolution, forward or backward:
// the weight broadcast over the N images that at::matmul copies (forward, and W^T for dX) or the
// per-image partial sums of dW, N*G*Co*Ci elements either way; and with a stride above 1 the sampled
// input (or dX before its scatter), N*G*Ci*P*Q elements; `element_bytes` each. `what` names it in an
// overflow error.
int64_t batched_gemm_workspace_bytes(const PointwiseGemm& g, int64_t element_bytes, std::string_view what);

// Whether the attributes record a batched GEMM. Throws GraphError naming `where` on a "lowering"
// attribute of another value.
bool conv_runs_as_batched_gemm(const Attributes& attrs, std::string_view where);
// Whether the op is a conv2d, or its backward (which carries the forward's attributes), recorded to
// run as a batched GEMM; false for any other op.
bool conv_runs_as_batched_gemm(const Op& op);

}  // namespace mutwo::ir
