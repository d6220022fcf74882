#pragma once
// Whether a backward op computes the gradient of its forward op's input i: its "needs_grad" flags
// (autodiff writes one per forward input; an op without them computes none). The executor's kernels
// and the cost sources' kernel counts both read it.
#include <cstddef>

#include "ir/op.hpp"

namespace mutwo::ir {

bool needs_grad(const Op& backward, size_t input);

}  // namespace mutwo::ir
