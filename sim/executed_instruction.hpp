#pragma once
// One instruction as the engine ran it: the schedule's own, a free it deferred or dropped, or a
// recompute and eviction it inserted (dynamic eviction). In start order.
#include <cstdint>

#include "profiles/schedule.hpp"

namespace mutwo::sim {

struct ExecutedInstruction {
  profiles::InstrKind kind = profiles::InstrKind::compute;
  int32_t target = profiles::kNoId;  // op id (compute, recompute) or tensor id
  int32_t stream = profiles::kComputeStream;
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  profiles::InstrId original = profiles::kNoId;  // the schedule's instruction; kNoId if inserted
};

}  // namespace mutwo::sim
