#include "ir/conv_groups.hpp"

#include <string>

namespace mutwo::ir {

int64_t conv_groups(const Attributes& attrs, int32_t width, std::string_view where) {
  return attr_int_or(attrs, "groups", 1, where) * width;
}

int64_t conv_groups(const Op& op) {
  return conv_groups(op.attrs, op.width, "op '" + op.name + "'");
}

}  // namespace mutwo::ir
