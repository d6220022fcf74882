#pragma once
// Tensor operations along the model axis of fused tensors, shared by kernels and leaf values.
#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "exec/model_layout.hpp"

namespace mutwo::exec {

// The k per-model tensors laid out along `axis`: stacked on a new dim 0, or concatenated on dim 0
// or dim 1 (`single`: the one tensor).
at::Tensor join_models(const std::vector<at::Tensor>& models, ModelAxis axis);
// Model m's part of a fused tensor of k models along `axis`, as a view (join_models' inverse, per
// model): index m of dim 0 (stack), or its chunk of dim 0 or dim 1.
at::Tensor model_part(const at::Tensor& fused, ModelAxis axis, int32_t k, int32_t m);

// Indices [k, ...] into k stacked tables of `rows` rows each, as indices into one [k*rows, ...]
// table: model m's indices are offset by m * rows (fused embeddings gather once for all models).
at::Tensor offset_model_indices(const at::Tensor& indices, int64_t k, int64_t rows);

}  // namespace mutwo::exec
