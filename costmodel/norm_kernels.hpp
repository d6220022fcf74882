#pragma once
// The kernels of the norms where they are not one pass over the graph's bytes.
//
// Batch norm in training (any width) needs each channel's statistics over N x H x W before it can
// normalise, more than an SM holds, so ATen and cuDNN read the input twice: a statistics pass (read
// x: 1X, reduction) before the normalising kernel (the op's own bytes, 2X); its backward reduces
// dY and x per channel (2X, reduction) before dx (the op's bytes, 3X). Layer norm's statistics are
// per row and stay on the SM: one pass. The statistics passes are `helper` kernels: a profile fitted
// on bench-ops' batch-norm rows (whose bytes are the op's) already holds them in its own kernel.
//
// A horizontally fused layer norm (width k > 1) is not the unfused op's kernel: ATen's layer norm
// takes one gamma and beta, so HFTA (and exec/kernels/norm.cpp) normalises every model at once
// without them and applies each model's affine transform apart, and autograd computes its gradients
// with element-wise ops and reductions. X is the normalised tensor's bytes:
//   layernorm:          native_layer_norm without affine (read x, write x-hat: 2X, norm),
//                       addcmul(beta, x-hat, gamma) (2X, elementwise);
//   layernorm_backward: dY * gamma (2X), then native_layer_norm_backward for dx (read dY', x, write
//                       dx: 3X, norm); dgamma = sum(dY * ((x - mean) * rstd)): 2X + 2X + 3X
//                       elementwise and 1X reduction; dbeta = sum(dY): 1X reduction; each only
//                       when that gradient is needed (the op's "needs_grad").
// The unfused backward reads dY and x and writes dx (about 3X); the fused one up to 14X in 7
// kernels. The H200 lease measured fused layer-norm backward at 4.4x the price of one such kernel
// (docs/VALIDATION.md, per-kind table).
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "ir/graph.hpp"

namespace mutwo::costmodel {

// A fused layer norm's kernels above (layernorm, layernorm_backward of width > 1); empty for any
// other op (then op_kernels' one kernel).
std::vector<OpKernel> norm_kernels(const ir::Graph& graph, const ir::Op& op);
// Batch norm's statistics pass (batchnorm2d, batchnorm2d_backward), a `helper` kernel beside the
// op's own; empty for any other op.
std::vector<OpKernel> batchnorm_statistics(const ir::Graph& graph, const ir::Op& op);

}  // namespace mutwo::costmodel
