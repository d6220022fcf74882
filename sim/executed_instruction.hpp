#pragma once
// One instruction as the engine ran it: the schedule's own, a free it deferred or dropped, or a
// recompute and eviction it inserted (dynamic eviction). In start order.
#include <cstdint>

#include "ir/schedule.hpp"

namespace mutwo::sim {

struct ExecutedInstruction {
  ir::InstrKind kind = ir::InstrKind::compute;
  int32_t target = ir::kNoId;  // op id (compute, recompute) or tensor id
  int32_t stream = ir::kComputeStream;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  ir::InstrId original = ir::kNoId;  // the schedule's instruction; kNoId if inserted
};

}  // namespace mutwo::sim
