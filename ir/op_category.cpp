#include "ir/op_category.hpp"

#include <string>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::ir {

KindCategory op_category(const Op& op) {
  if (kind_category(op.kind) != KindCategory::opaque) return kind_category(op.kind);
  if (const auto it = op.attrs.find("typed_kind"); it != op.attrs.end()) {
    if (const auto* name = std::get_if<std::string>(&it->second)) return kind_category(parse_kind(*name));
  }
  if (const auto it = op.attrs.find("category"); it != op.attrs.end()) {
    if (const auto* name = std::get_if<std::string>(&it->second)) {
      for (int c = 0; c <= static_cast<int>(KindCategory::opaque); ++c) {
        if (category_name(static_cast<KindCategory>(c)) == *name) return static_cast<KindCategory>(c);
      }
      throw GraphError(fmt::format("op {} '{}': attribute 'category' = '{}' is not a cost category", op.id,
                                   op.name, *name));
    }
  }
  return KindCategory::opaque;
}

bool is_view_op(const Op& op) {
  return op.attrs.contains("view");
}

}  // namespace mutwo::ir
