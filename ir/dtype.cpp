#include "ir/dtype.hpp"

#include <array>

#include "support/error.hpp"

namespace mutwo::ir {
namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int64_t size_bytes;
};
constexpr std::array<DTypeInfo, 8> kDTypes{{{DType::f32, "fp32", 4},
                                            {DType::bf16, "bf16", 2},
                                            {DType::f16, "fp16", 2},
                                            {DType::f64, "fp64", 8},
                                            {DType::i64, "int64", 8},
                                            {DType::i32, "int32", 4},
                                            {DType::u8, "uint8", 1},
                                            {DType::boolean, "bool", 1}}};
}  // namespace

int64_t dtype_size_bytes(DType dtype) {
  return kDTypes[static_cast<size_t>(dtype)].size_bytes;
}
std::string_view dtype_name(DType dtype) {
  return kDTypes[static_cast<size_t>(dtype)].name;
}
bool is_floating(DType dtype) {
  return dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16 || dtype == DType::f64;
}

DType parse_dtype(std::string_view name) {
  std::string valid;
  for (const auto& info : kDTypes) {
    if (info.name == name) return info.dtype;
    valid += (valid.empty() ? "" : ", ") + std::string(info.name);
  }
  throw UnknownNameError("unknown dtype '" + std::string(name) + "'; valid: " + valid);
}

}  // namespace mutwo::ir
