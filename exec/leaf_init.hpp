#pragma once
// Deterministic starting values of a graph's leaves: weights, inputs and labels drawn per model
// from generators seeded by (run seed, model, tensor name), zero gradients and optimizer state.
// A fused graph therefore starts exactly where its k unfused graphs start (model m's slice of a
// fused leaf equals unfused model m's leaf), which the numerics tests rely on.
//
// Distributions: weights of rank >= 2 U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in the product of
// the per-model shape's trailing dims (nn.Linear's and nn.Conv2d's default bound); norm scales
// (input 1 of layernorm / batchnorm2d) 1 + U(-0.1, 0.1); other rank-1 weights U(-0.1, 0.1);
// floating inputs N(0, 1); floating labels (BCE targets) 0 or 1; int64 indices and labels uniform
// over the range their reader accepts (embedding rows, cross-entropy classes).
#include <cstdint>
#include <string_view>
#include <vector>

#include <ATen/core/Tensor.h>

#include "exec/model_layout.hpp"
#include "ir/graph.hpp"

namespace mutwo::exec {

// The starting value of leaf `id` (a tensor with no producer) on `device`. first_model is the
// global index of the tensor's first model. Throws mutwo::Error naming the tensor when it cannot
// be synthesised (an integer tensor whose readers give no index range).
at::Tensor initial_leaf_value(const ir::Graph& graph, ir::TensorId id, const std::vector<ModelAxis>& axes,
                              int32_t first_model, uint64_t seed, const at::Device& device);

// The name without a "s<i>/" sub-array prefix (concat_graphs): seeds and dropout streams use it,
// so a model draws the same numbers whichever sub-array it lands in.
std::string_view base_name(std::string_view name);

}  // namespace mutwo::exec
