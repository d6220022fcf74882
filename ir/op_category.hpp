#pragma once
// What bounds an op's speed, for the cost models: its kind's category, or for an imported op
// (opaque kind) whose aten call has a mutwo kind, that kind's (attr "typed_kind", set by the
// execution-trace import), or the category it names in attr "category".
#include "ir/op.hpp"

namespace mutwo::ir {

KindCategory op_category(const Op& op);

// An imported view or metadata op (attr "view", set by the execution-trace import): it launches
// no kernel and moves no data, so a GPU cost source prices it at 0 (its host dispatch remains).
bool is_view_op(const Op& op);

}  // namespace mutwo::ir
