#pragma once
// One run of the `dtr` policies: the engine (sim::simulate) with a DTR heuristic's dynamic eviction
// at a budget over a base schedule, and the Schedule it recorded (compute at each position,
// recompute right before the op that needed it, a free for every eviction where it happened, the
// base's frees where the tensor was still resident). The recorded Schedule validates and simulates
// to the same figures.
#include <cstdint>
#include <string>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "sim/eviction_heuristic.hpp"
#include "sim/prediction.hpp"

namespace mutwo::policies {

struct DtrRun {
  ir::Schedule schedule;  // policy left empty; the caller names it
  // False when some op could not fit under the budget even with everything evictable evicted, or
  // when recomputation passed the step's own compute time (simrd's thrashing limit, overhead 2.0).
  // The run then went on without evicting any more (so the Schedule is complete) and `failure`
  // says where.
  bool fits = true;
  std::string failure;
  int64_t peak_bytes = 0;      // the run's peak, equal to the simulator's on `schedule`
  int64_t resident_bytes = 0;  // rounded bytes resident from the start
  int64_t clock_ns = 0;        // base compute + remat compute: the single-stream step time
  int64_t remat_ns = 0;
  int32_t evictions = 0;  // chosen by the heuristic (the base's frees not counted)
  int32_t remats = 0;     // recompute instructions
  sim::Prediction prediction;  // the engine's figures of `schedule` with no limit
};

// Throws mutwo::Error when the base holds swap or recompute instructions, or computes an op twice
// or not at all (not a base schedule), or when budget_bytes <= 0.
DtrRun run_dtr(const ir::Schedule& base, const costmodel::OpCostModel& cost, int64_t budget_bytes,
               const sim::EvictionHeuristic& heuristic);

}  // namespace mutwo::policies
