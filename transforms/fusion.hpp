#pragma once
// Horizontal fusion (HFTA, Wang et al. MLSys 2021): k copies of one architecture -> one Graph of
// width k. Layouts per kind are in op_kind.hpp: linear -> batched matmul, conv -> grouped conv,
// norms, embeddings and optimizer hyper-parameters per model.
#include <cstddef>
#include <cstdint>

#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"

namespace mutwo::transforms {

// Rebuilds a width-1 forward Graph at width k by replaying its ops through each kind's shape
// inference with fused leaf layouts. Throws GraphError if the graph is already fused or holds an
// opaque op (imported traces cannot be fused).
ir::Graph horizontal_fuse(const ir::Graph& forward, int32_t width);

// The fused layout a leaf (input, label, weight) has when read at position `input` of an op of
// `kind`: "channel" kinds (conv2d, batchnorm2d, pooling, flatten, the ViT patches) take activations
// on dim 1 and their weights on dim 0; every other operand is stacked (op_kind.hpp).
ir::FuseAxis fused_layout_for_use(ir::OpKind kind, size_t input);

// The layout a leaf takes when read at position `input` of `op` in a linked graph: as
// fused_layout_for_use, except that
// - a `cast` (autocast, transforms/autocast.hpp) keeps its input's layout, so the leaf takes the
//   layout of the cast output's first reader (stack if none);
// - a parameter that `add` or `mul` broadcasts onto a feature map in the channel layout (ConvNeXt's
//   layer scale gamma [C,1,1]) is concatenated on its channel dim: dim0 for [C,1,1], dim1 for
//   [1,C,1,1], as batch norm's gamma.
ir::FuseAxis fused_layout_of_use(const ir::Graph& graph, const ir::Op& op, size_t input);

// Forward kinds whose outputs take the layout of their input 0 (activations, dropout, add, mul,
// softmax, cast).
bool keeps_input_layout(ir::OpKind kind);

// The layout of forward output `index` of an op of `kind` that does not keep its input's layout:
// dim1 for the feature maps of the channel kinds (conv2d, batch norm's y, pools, concat_channels,
// permute back to NCHW), dim0 for batch norm's per-channel statistics, stack for the rest
// (linear, attention, embeddings, flatten, permute to NHWC, losses, ...).
ir::FuseAxis fused_layout_of_output(const ir::Op& op, size_t index);

// The layout activation `id` has in the fused graph, following its producers through the kinds that
// keep their input's layout; a leaf is stacked.
ir::FuseAxis fused_layout_of_activation(const ir::Graph& graph, ir::TensorId id);

}  // namespace mutwo::transforms
