#pragma once
// The kernels of a horizontally fused layer norm (width k > 1), which are not the unfused op's: ATen's
// layer norm takes one gamma and beta, so HFTA (and exec/kernels/norm.cpp) normalises every model at
// once without them and applies each model's affine transform apart, and autograd computes its
// gradients with element-wise ops and reductions. X is the normalised tensor's bytes:
//   layernorm:          native_layer_norm without affine (read x, write x-hat: 2X, norm),
//                       addcmul(beta, x-hat, gamma) (2X, elementwise);
//   layernorm_backward: dY * gamma (2X), then native_layer_norm_backward for dx (read dY', x, write
//                       dx: 3X, norm); dgamma = sum(dY * ((x - mean) * rstd)): 2X + 2X + 3X
//                       elementwise and 1X reduction; dbeta = sum(dY): 1X reduction; each only
//                       when that gradient is needed (the op's "needs_grad").
// The unfused backward reads dY and x and writes dx (about 3X); the fused one up to 14X in 7
// kernels. The H200 lease measured fused layer-norm backward at 4.3x the price of one such kernel
// (docs/VALIDATION.md, per-kind table).
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "ir/graph.hpp"

namespace mutwo::costmodel {

// The kernels above for a layernorm or layernorm_backward op of width > 1; empty for any other op.
std::vector<OpKernel> fused_norm_kernels(const ir::Graph& graph, const ir::Op& op);

}  // namespace mutwo::costmodel
