#pragma once
// Element types of tensors and their sizes.
#include <cstdint>
#include <string>
#include <string_view>

namespace mutwo::ir {

enum class DType : uint8_t { f32, bf16, f16, f64, i64, i32, u8, boolean };

int64_t dtype_size_bytes(DType dtype);
std::string_view dtype_name(DType dtype);
// Throws UnknownNameError listing the valid names.
DType parse_dtype(std::string_view name);
bool is_floating(DType dtype);

}  // namespace mutwo::ir
