#pragma once
// A convolution's groups as it runs: the per-model "groups" attribute (default 1) times the models
// fused into the op (HFTA: k models' convolutions become one with k times their groups). The IR's
// shape rule, the executor's ATen call and the cost sources' kernels all read it here.
#include <cstdint>
#include <string_view>

#include "ir/attributes.hpp"
#include "ir/op.hpp"

namespace mutwo::ir {

// Throws Error (naming `where`) on a non-integer "groups" attribute.
int64_t conv_groups(const Attributes& attrs, int32_t width, std::string_view where);
int64_t conv_groups(const Op& op);

}  // namespace mutwo::ir
