#pragma once
// The kernels of a convolution recorded to run as a batched GEMM (ir/conv_lowering.hpp: a grouped
// 1x1 convolution, as k fused models' pointwise convolutions are), as exec/pointwise_conv.hpp runs
// them, so that the cost sources price what the executor runs.
//
// x [N, G*Ci, H, W], weight [G*Co, Ci, 1, 1], y [N, G*Co, P, Q] (stride s: P = ceil(H / s)), X the
// bytes of an element:
//   conv2d            the weight copied over the N images (at::matmul's broadcast: G*Co*Ci elements
//                     read, N*G*Co*Ci written, helper pass), then one GEMM of N*G products Co x PQ x Ci;
//   conv2d_backward   dX: W^T copied over the images likewise, N*G products Ci x PQ x Co; dW: N*G
//                     products Co x Ci x PQ, then a sum over the N images (a reduction reading
//                     N*G*Co*Ci elements); each only when that gradient is needed ("needs_grad");
//   stride > 1        the sampled input copied before each product that reads it (2 x N*G*Ci*PQ
//                     elements, helper pass), and dX scattered into zeros (the zeros: N*G*Ci*H*W
//                     written; the scatter: 2 x N*G*Ci*PQ).
// Left out, as the cuDNN path's pricing leaves them out: the bias (its add and its gradient).
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "ir/graph.hpp"

namespace mutwo::costmodel {

// Empty unless ir::conv_runs_as_batched_gemm(op). Its math is the convolution's (op_precision: cuDNN's
// TF32 flag, which the executor applies to these GEMMs).
std::vector<OpKernel> pointwise_conv_kernels(const ir::Graph& graph, const ir::Op& op);

}  // namespace mutwo::costmodel
