#pragma once
// The optimizers a training step can end with (autodiff.hpp) and their names on the command line.
#include <cstdint>
#include <string_view>

namespace mutwo::transforms {

enum class OptimizerKind : uint8_t { sgd, adam, adamw };
std::string_view optimizer_name(OptimizerKind kind);   // "sgd", "adam", "adamw"
OptimizerKind parse_optimizer(std::string_view name);  // throws UnknownNameError naming the valid ones

}  // namespace mutwo::transforms
