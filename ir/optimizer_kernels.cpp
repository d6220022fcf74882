#include "ir/optimizer_kernels.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "ir/attributes.hpp"

namespace mutwo::ir {
namespace {

bool any_nonzero(const Op& op, std::string_view key) {
  if (op.attrs.find(std::string(key)) == op.attrs.end()) return false;
  const std::vector<double>& values = attr_doubles(op.attrs, key, "op '" + op.name + "'");
  return std::any_of(values.begin(), values.end(), [](double v) { return v != 0.0; });
}

}  // namespace

OptimizerKernels optimizer_kernels(const Op& op) {
  const bool decay = any_nonzero(op, "weight_decay");
  switch (op.kind) {
    case OpKind::adam_step:
      return decay ? OptimizerKernels{8, 21} : OptimizerKernels{7, 18};
    case OpKind::adamw_step:
      return decay ? OptimizerKernels{8, 20} : OptimizerKernels{7, 18};
    case OpKind::sgd_step: {
      OptimizerKernels k{1, 3};
      if (any_nonzero(op, "momentum")) k = {k.kernels + 2, k.passes + 5};
      if (decay) k = {k.kernels + 1, k.passes + 3};
      return k;
    }
    default:
      return {};
  }
}

}  // namespace mutwo::ir
