#include "ir/conv_lowering.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ir/dtype.hpp"
#include "support/checked_int.hpp"
#include "support/error.hpp"

namespace mutwo::ir {

bool conv_fits_batched_gemm(const std::vector<int64_t>& x, const std::vector<int64_t>& weight,
                            const std::vector<int64_t>& y, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups) {
  const auto all = [](const std::vector<int64_t>& v, int64_t value) {
    return std::ranges::all_of(v, [value](int64_t e) { return e == value; });
  };
  if (!(groups > 1 && x.size() == 4 && weight.size() == 4 && y.size() == 4 && weight[2] == 1 &&
        weight[3] == 1 && all(padding, 0) && all(dilation, 1))) {
    return false;
  }
  // Sizes in doubles: a comparison, not an allocation (checked where the bytes are counted).
  const auto elements = [](const std::vector<int64_t>& s) {
    double n = 1;
    for (int64_t d : s) n *= static_cast<double>(d);
    return n;
  };
  const double broadcast =
      static_cast<double>(x[0]) * static_cast<double>(weight[0]) * static_cast<double>(weight[1]);
  return broadcast <= std::max(elements(x), elements(y));
}

int64_t batched_gemm_workspace_bytes(const Tensor& x, const std::vector<int64_t>& weight,
                                     const std::vector<int64_t>& y) {
  const std::string what = fmt::format("the batched-GEMM workspace of a convolution of '{}'", x.name);
  const int64_t images = x.shape.at(0);
  const bool strided = y.at(2) != x.shape.at(2) || y.at(3) != x.shape.at(3);
  const int64_t weights = support::checked_product({images, weight.at(0), weight.at(1)}, what);
  const int64_t sampled =
      strided ? support::checked_product({images, x.shape.at(1), y.at(2), y.at(3)}, what) : 0;
  return support::checked_product({support::checked_sum(weights, sampled, what), dtype_size_bytes(x.dtype)},
                                  what);
}

bool conv_runs_as_batched_gemm(const Attributes& attrs, std::string_view where) {
  const auto it = attrs.find(kConvLoweringAttr);
  if (it == attrs.end()) return false;
  const std::string* value = std::get_if<std::string>(&it->second);
  if (value == nullptr || *value != kBatchedGemmLowering) {
    throw GraphError(fmt::format("{}: attribute '{}' must be the string '{}'", where, kConvLoweringAttr,
                                 kBatchedGemmLowering));
  }
  return true;
}

bool conv_runs_as_batched_gemm(const Op& op) {
  return conv_runs_as_batched_gemm(op.attrs, fmt::format("op '{}'", op.name));
}

bool is_conv_run_as_gemm(const Op& op) {
  return (op.kind == OpKind::conv2d || op.kind == OpKind::conv2d_backward) && conv_runs_as_batched_gemm(op);
}

}  // namespace mutwo::ir
