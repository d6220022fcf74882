#include "ir/needs_grad.hpp"

#include "ir/attributes.hpp"

namespace mutwo::ir {

bool needs_grad(const Op& backward, size_t input) {
  const auto flags = attr_ints_or(backward.attrs, "needs_grad", {}, backward.name);
  return input < flags.size() && flags[input] != 0;
}

}  // namespace mutwo::ir
