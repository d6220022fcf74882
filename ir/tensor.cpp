#include "ir/tensor.hpp"

#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.hpp"

namespace mutwo::ir {
namespace {
constexpr std::array<std::string_view, 8> kRoleNames{"input",           "label",      "weight",    "gradient",
                                                     "optimizer_state", "activation", "temporary", "loss"};
}

std::string_view role_name(TensorRole role) {
  return kRoleNames[static_cast<size_t>(role)];
}

TensorRole parse_role(std::string_view name) {
  std::string valid;
  for (size_t i = 0; i < kRoleNames.size(); ++i) {
    if (kRoleNames[i] == name) return static_cast<TensorRole>(i);
    valid += (i ? ", " : "") + std::string(kRoleNames[i]);
  }
  throw UnknownNameError("unknown tensor role '" + std::string(name) + "'; valid: " + valid);
}

bool is_persistent(TensorRole role) {
  return role == TensorRole::weight || role == TensorRole::gradient || role == TensorRole::optimizer_state;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) {
      throw GraphError(
          fmt::format("shape {}: its element count overflows 64-bit integers", shape_string(shape)));
    }
  }
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

}  // namespace mutwo::ir
