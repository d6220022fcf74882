#include "exec/torch_types.hpp"

#include <fmt/format.h>

#include "profiles/error.hpp"

namespace mutwo::exec {

c10::ScalarType scalar_type(profiles::DType dtype) {
  using profiles::DType;
  switch (dtype) {
    case DType::f32:
      return c10::kFloat;
    case DType::bf16:
      return c10::kBFloat16;
    case DType::f16:
      return c10::kHalf;
    case DType::f64:
      return c10::kDouble;
    case DType::i64:
      return c10::kLong;
    case DType::i32:
      return c10::kInt;
    case DType::u8:
      return c10::kByte;
    case DType::boolean:
      return c10::kBool;
  }
  throw Error(fmt::format("dtype {} has no ATen scalar type", static_cast<int>(dtype)));
}

profiles::DType ir_dtype(c10::ScalarType type) {
  using profiles::DType;
  switch (type) {
    case c10::kFloat:
      return DType::f32;
    case c10::kBFloat16:
      return DType::bf16;
    case c10::kHalf:
      return DType::f16;
    case c10::kDouble:
      return DType::f64;
    case c10::kLong:
      return DType::i64;
    case c10::kInt:
      return DType::i32;
    case c10::kByte:
      return DType::u8;
    case c10::kBool:
      return DType::boolean;
    default:
      throw Error(fmt::format("ATen scalar type {} has no mutwo dtype", c10::toString(type)));
  }
}

}  // namespace mutwo::exec
