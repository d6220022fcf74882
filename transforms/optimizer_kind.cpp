#include "transforms/optimizer_kind.hpp"

#include <array>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::transforms {
namespace {

constexpr std::array<std::string_view, 3> kOptimizerNames{"sgd", "adam", "adamw"};

}  // namespace

std::string_view optimizer_name(OptimizerKind kind) {
  return kOptimizerNames[static_cast<size_t>(kind)];
}

OptimizerKind parse_optimizer(std::string_view name) {
  for (size_t i = 0; i < kOptimizerNames.size(); ++i) {
    if (kOptimizerNames[i] == name) return static_cast<OptimizerKind>(i);
  }
  throw UnknownNameError(fmt::format("unknown optimizer '{}'; valid: sgd, adam, adamw", name));
}

}  // namespace mutwo::transforms
