#pragma once
// Dropout's keep mask as mutwo's executor draws it. ATen's native_dropout draws the mask inside its one
// kernel; the executor draws each model's mask from that model's own generator, so that a fused op and
// its k models run apart draw the same masks (exec/kernels/elementwise.cpp, dropout_mask): k bernoulli_
// launches, each writing its model's part of the bool mask (1 byte per element), before the masked scale
// (native_dropout_backward over x and the mask: op_kernels' one kernel for dropout, the op's bytes).
// The lean attention's attn_dropout_context draws its mask the same way. The draws are `helper` kernels,
// priced by the bytes they write: the Philox work per element is not priced (the wave model's elementwise
// group is fitted on bytes, NeuSight's ops draw no random numbers).
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "ir/graph.hpp"

namespace mutwo::costmodel {

// The mask draws of a dropout or attn_dropout_context (its bool output; `launches` = the op's width,
// each one model's share); empty for any other op.
std::vector<OpKernel> dropout_mask_draws(const ir::Graph& graph, const ir::Op& op);

}  // namespace mutwo::costmodel
