#include "transforms/optimizer_kind.hpp"

#include <array>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.hpp"

namespace mutwo::transforms {
namespace {

constexpr std::array<std::string_view, 7> kOptimizerNames{
    "sgd", "adam", "adamw", "adam-fused", "adamw-fused", "bert-adam", "bert-adam-hf"};

}  // namespace

std::string_view optimizer_name(OptimizerKind kind) {
  return kOptimizerNames[static_cast<size_t>(kind)];
}

std::string_view optimizer_names() {
  static const std::string names = fmt::format("{}", fmt::join(kOptimizerNames, ", "));
  return names;
}

OptimizerKind parse_optimizer(std::string_view name) {
  for (size_t i = 0; i < kOptimizerNames.size(); ++i) {
    if (kOptimizerNames[i] == name) return static_cast<OptimizerKind>(i);
  }
  throw UnknownNameError(fmt::format("unknown optimizer '{}'; valid: {}", name, optimizer_names()));
}

void add_kind_attributes(OptimizerKind kind, bool first, ir::Attributes& attrs) {
  if (is_fused(kind)) attrs.insert_or_assign("fused", int64_t{1});
  if (kind == OptimizerKind::bert_adam) attrs.insert_or_assign("bert_adam", int64_t{1});
  if (kind == OptimizerKind::bert_adam_hf) {
    attrs.insert_or_assign("bert_adam", int64_t{2});
    attrs.insert_or_assign("max_grad_norm", 1.0);
  }
  if ((kind == OptimizerKind::bert_adam && first) || kind == OptimizerKind::bert_adam_hf) {
    attrs.insert_or_assign("host_sync", int64_t{1});
  }
}

bool is_fused(OptimizerKind kind) {
  return kind == OptimizerKind::adam_fused || kind == OptimizerKind::adamw_fused;
}

OptimizerKind unfused(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::adam_fused:
      return OptimizerKind::adam;
    case OptimizerKind::adamw_fused:
    case OptimizerKind::bert_adam:
    case OptimizerKind::bert_adam_hf:
      return OptimizerKind::adamw;
    default:
      return kind;
  }
}

}  // namespace mutwo::transforms
