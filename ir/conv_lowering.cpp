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

PointwiseGemm pointwise_gemm(const std::vector<int64_t>& x, const std::vector<int64_t>& weight,
                             const std::vector<int64_t>& y, int64_t groups) {
  PointwiseGemm g;
  g.images = x.at(0);
  g.groups = groups;
  g.in_channels = weight.at(1);
  g.out_channels = weight.at(0) / groups;
  g.pixels = y.at(2) * y.at(3);
  g.strided = y.at(2) != x.at(2) || y.at(3) != x.at(3);
  return g;
}

int64_t batched_gemm_workspace_bytes(const PointwiseGemm& g, int64_t element_bytes, std::string_view what) {
  using support::checked_product;
  const int64_t weights = checked_product({g.images, g.groups, g.out_channels, g.in_channels}, what);
  const int64_t sampled =
      g.strided ? checked_product({g.images, g.groups, g.in_channels, g.pixels}, what) : 0;
  return checked_product({support::checked_sum(weights, sampled, what), element_bytes}, what);
}

namespace {

// Whether `attrs` record a batched GEMM; `where()` names the op only when the value is wrong.
template <class Where>
bool recorded(const Attributes& attrs, Where where) {
  const auto it = attrs.find(kConvLoweringAttr);
  if (it == attrs.end()) return false;
  const std::string* value = std::get_if<std::string>(&it->second);
  if (value == nullptr || *value != kBatchedGemmLowering) {
    throw GraphError(fmt::format("{}: attribute '{}' must be the string '{}'", where(), kConvLoweringAttr,
                                 kBatchedGemmLowering));
  }
  return true;
}

}  // namespace

bool conv_runs_as_batched_gemm(const Attributes& attrs, std::string_view where) {
  return recorded(attrs, [where] { return where; });
}

bool conv_runs_as_batched_gemm(const Op& op) {
  if (op.kind != OpKind::conv2d && op.kind != OpKind::conv2d_backward) return false;
  return recorded(op.attrs, [&op] { return fmt::format("op '{}'", op.name); });
}

}  // namespace mutwo::ir
