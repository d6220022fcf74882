#include "exec/torch_types.hpp"

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::exec {

c10::ScalarType scalar_type(ir::DType dtype) {
  using ir::DType;
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

}  // namespace mutwo::exec
