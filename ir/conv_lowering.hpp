#pragma once
// How a convolution runs, decided once when the op is built and recorded on it, so that the executor
// runs and the cost sources price the same kernels (both read the Schedule's graph).
//
// A grouped 1x1 convolution with no padding and dilation 1 (what HFTA makes of k models' pointwise
// convolutions: k times their groups) runs as one strided-batched GEMM of N * groups products
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

// Whether a convolution of weight shape `weight` ([G*Co, Ci, kh, kw]), padding, dilation and its
// effective groups (ir/conv_groups.hpp) can run as a batched GEMM: 1x1, padding 0, dilation 1,
// groups > 1, at any stride.
bool conv_fits_batched_gemm(const std::vector<int64_t>& weight, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups);

// Whether the op (a conv2d, or its backward, which carries the forward's attributes) was recorded to
// run as a batched GEMM. Throws GraphError on a "lowering" attribute of another value.
bool conv_runs_as_batched_gemm(const Attributes& attrs, std::string_view where);
bool conv_runs_as_batched_gemm(const Op& op);
// The same, false for any op but a conv2d or conv2d_backward.
bool is_conv_run_as_gemm(const Op& op);

}  // namespace mutwo::ir
