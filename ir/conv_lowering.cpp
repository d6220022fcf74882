#include "ir/conv_lowering.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::ir {

bool conv_fits_batched_gemm(const std::vector<int64_t>& weight, const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups) {
  const auto all = [](const std::vector<int64_t>& v, int64_t value) {
    return std::ranges::all_of(v, [value](int64_t e) { return e == value; });
  };
  return groups > 1 && weight.size() == 4 && weight[2] == 1 && weight[3] == 1 && all(padding, 0) &&
         all(dilation, 1);
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
