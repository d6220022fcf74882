#include "exec/model_tensors.hpp"

#include <ATen/ATen.h>

namespace mutwo::exec {

at::Tensor join_models(const std::vector<at::Tensor>& models, ModelAxis axis) {
  switch (axis) {
    case ModelAxis::single:
      return models.at(0);
    case ModelAxis::stack:
      return at::stack(models, 0);
    case ModelAxis::dim0:
      return at::cat(models, 0);
    case ModelAxis::dim1:
      return at::cat(models, 1);
  }
  return models.at(0);
}

at::Tensor model_part(const at::Tensor& fused, ModelAxis axis, int32_t k, int32_t m) {
  switch (axis) {
    case ModelAxis::single:
      return fused;
    case ModelAxis::stack:
      return fused.select(0, m);
    case ModelAxis::dim0:
      return fused.narrow(0, m * (fused.size(0) / k), fused.size(0) / k);
    case ModelAxis::dim1:
      return fused.narrow(1, m * (fused.size(1) / k), fused.size(1) / k);
  }
  return fused;
}

at::Tensor offset_model_indices(const at::Tensor& indices, int64_t k, int64_t rows) {
  std::vector<int64_t> shape(static_cast<size_t>(indices.dim()), 1);
  shape[0] = k;
  return indices + at::arange(k, indices.options()).mul_(rows).reshape(shape);
}

}  // namespace mutwo::exec
