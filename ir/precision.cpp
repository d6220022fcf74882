#include "ir/precision.hpp"

#include <array>
#include <string>

#include "support/error.hpp"

namespace mutwo::ir {
namespace {
constexpr std::array<std::string_view, 5> kNames{"fp32", "tf32", "amp-fp16", "amp-bf16", "bf16"};
}  // namespace

std::string_view precision_name(Precision precision) {
  return kNames[static_cast<size_t>(precision)];
}

std::string_view precision_names() {
  return "fp32, tf32, amp-fp16, amp-bf16, bf16";
}

Precision parse_precision(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Precision>(i);
  }
  throw UnknownNameError("unknown precision '" + std::string(name) +
                         "'; valid: " + std::string(precision_names()));
}

bool is_autocast(Precision precision) {
  return precision == Precision::amp_fp16 || precision == Precision::amp_bf16;
}

DType autocast_dtype(Precision precision) {
  switch (precision) {
    case Precision::amp_fp16:
      return DType::f16;
    case Precision::amp_bf16:
      return DType::bf16;
    default:
      return DType::f32;
  }
}

bool allows_tf32_matmul(Precision precision) {
  return precision == Precision::tf32;
}

}  // namespace mutwo::ir
