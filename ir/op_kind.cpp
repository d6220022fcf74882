#include "ir/op_kind.hpp"

#include <array>
#include <string>

#include "support/error.hpp"

namespace mutwo::ir {
namespace {
struct KindRow {
  std::string_view name;
  Phase phase;
  KindCategory category;
};
constexpr std::array<KindRow, kOpKindCount> kKinds{{
#define MUTWO_X(e, name, phase, category) {name, Phase::phase, KindCategory::category},
    MUTWO_OP_KINDS(MUTWO_X)
#undef MUTWO_X
}};
constexpr std::array<std::string_view, 3> kPhases{"forward", "backward", "optimizer"};
constexpr std::array<std::string_view, 8> kCategories{
    "matmul", "conv", "norm", "elementwise", "reduction", "data_movement", "optimizer", "opaque"};
}  // namespace

std::string_view kind_name(OpKind kind) {
  return kKinds[static_cast<size_t>(kind)].name;
}
Phase kind_phase(OpKind kind) {
  return kKinds[static_cast<size_t>(kind)].phase;
}
KindCategory kind_category(OpKind kind) {
  return kKinds[static_cast<size_t>(kind)].category;
}

OpKind parse_kind(std::string_view name) {
  std::string valid;
  for (size_t i = 0; i < kKinds.size(); ++i) {
    if (kKinds[i].name == name) return static_cast<OpKind>(i);
    valid += (i ? ", " : "") + std::string(kKinds[i].name);
  }
  throw UnknownNameError("unknown op kind '" + std::string(name) + "'; valid: " + valid);
}

std::string_view phase_name(Phase phase) {
  return kPhases[static_cast<size_t>(phase)];
}
Phase parse_phase(std::string_view name) {
  for (size_t i = 0; i < kPhases.size(); ++i) {
    if (kPhases[i] == name) return static_cast<Phase>(i);
  }
  throw UnknownNameError("unknown phase '" + std::string(name) + "'; valid: forward, backward, optimizer");
}
std::string_view category_name(KindCategory category) {
  return kCategories[static_cast<size_t>(category)];
}

}  // namespace mutwo::ir
