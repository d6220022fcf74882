#pragma once
// Conversions between the Graph IR's element types and ATen's scalar types.
#include <ATen/core/ATen_fwd.h>
#include <c10/core/ScalarType.h>

#include "ir/dtype.hpp"

namespace mutwo::exec {

c10::ScalarType scalar_type(ir::DType dtype);

}  // namespace mutwo::exec
