#include "ir/kernel_precision.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.hpp"

namespace mutwo::ir {

const std::vector<KernelPrecisionInfo>& kernel_precisions() {
  static const std::vector<KernelPrecisionInfo> table = {
      {KernelPrecision::fp32, "fp32", DType::f32, false},
      {KernelPrecision::tf32, "tf32", DType::f32, false},
      {KernelPrecision::fp16, "fp16", DType::f16, true},
      {KernelPrecision::bf16, "bf16", DType::bf16, true},
  };
  return table;
}

const KernelPrecisionInfo* find_kernel_precision(std::string_view name) {
  for (const KernelPrecisionInfo& p : kernel_precisions()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const KernelPrecisionInfo& kernel_precision(std::string_view name) {
  if (const KernelPrecisionInfo* p = find_kernel_precision(name)) return *p;
  std::vector<std::string_view> valid;
  for (const KernelPrecisionInfo& p : kernel_precisions()) valid.push_back(p.name);
  throw UnknownNameError(fmt::format("unknown precision '{}'; valid: {}", name, fmt::join(valid, ", ")));
}

const KernelPrecisionInfo& kernel_precision(KernelPrecision id) {
  return kernel_precisions()[static_cast<size_t>(id)];
}

}  // namespace mutwo::ir
