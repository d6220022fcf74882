#pragma once
// Where the model index lives in each tensor of a (fused) graph: per-model data, dropout masks and
// per-model optimizer hyper-parameters are laid out along it (HFTA layouts, op_kind.hpp).
#include <cstdint>
#include <vector>

#include "ir/graph.hpp"

namespace mutwo::exec {

enum class ModelAxis : uint8_t {
  single,  // width 1: the whole tensor is one model's
  stack,   // dim 0 has one entry per model: [k, ...]
  dim0,    // dim 0 holds k equal chunks: [k*C, ...] (conv and batch-norm weights)
  dim1,    // dim 1 holds k equal chunks: [B, k*C, H, W] (channel-layout activations)
};

// One axis per tensor. Leaves take the layout of their first reader (transforms::fused_layout_for_use);
// forward outputs follow their kind (conv, batch norm and pooling keep the channel layout, flatten
// and the ViT class token switch to stacked, elementwise kinds keep their input's); gradients take
// their tensor's. Width-1 tensors are `single`.
std::vector<ModelAxis> model_axes(const ir::Graph& graph);

// The per-model shape of a fused tensor (the shape one model's copy has).
std::vector<int64_t> per_model_shape(const std::vector<int64_t>& shape, ModelAxis axis, int32_t width);

}  // namespace mutwo::exec
