#pragma once
// The runtime of Dynamic Tensor Rematerialization (Kirisame et al., ICLR 2021), simulated over a
// base schedule's compute order and recorded as a static Schedule.
//
// Walks the ops in the base's order on one clock (the cost model's op durations, remats included).
// Before an op runs, its inputs are made resident, rematerialising evicted ones recursively (their
// producer runs again; its own evicted inputs first). While the op's new outputs plus workspace would
// take the bytes in use over the budget, the resident evictable tensor of smallest heuristic score
// is evicted. Memory is counted as sim::MemorySimulator counts it (512 B blocks, workspace during the
// op, persistent state resident from the start), so the recorded Schedule replays with the same peak.
//
// Evictable: a resident activation or temporary produced by a forward op marked recomputable, not
// read or written by the op being materialised (nor by one further up a remat chain), whose producer's
// inputs can still be brought back. A tensor that cannot be rebuilt (an input, a backward result)
// keeps its device copy past the base's free while an evicted tensor may still need it.
//
// Recorded: compute at each position, recompute before the op that needed it, free for every
// eviction at the moment it happened, the base's frees where the tensor is still resident, and a
// free of rebuilt tensors no reader needs any more once the op that needed them ran. All on the
// compute stream, without waits: the Schedule validates (profiles::validate_schedule).
#include <cstdint>
#include <string>

#include "costmodel/op_cost_model.hpp"
#include "policies/dtr_heuristics.hpp"
#include "profiles/schedule.hpp"

namespace mutwo::policies {

struct DtrRun {
  profiles::Schedule schedule;  // policy left empty; the caller names it
  // False when some op could not fit under the budget even with everything evictable evicted, or
  // when recomputation passed the step's own compute time (simrd's thrashing limit, overhead 2.0).
  // The run then went on without evicting any more (so the Schedule is complete) and `failure`
  // says where.
  bool fits = true;
  std::string failure;
  int64_t peak_bytes = 0;      // the runtime's peak, equal to the simulator's on `schedule`
  int64_t resident_bytes = 0;  // rounded bytes resident from the start
  int64_t clock_ns = 0;        // base compute + remat compute: the single-stream step time
  int64_t remat_ns = 0;
  int32_t evictions = 0;  // chosen by the heuristic (the base's frees not counted)
  int32_t remats = 0;     // recompute instructions
};

// Throws mutwo::Error when the base holds swap or recompute instructions, or computes an op twice
// or not at all (not a base schedule), or when budget_bytes <= 0.
DtrRun run_dtr(const profiles::Schedule& base, const costmodel::OpCostModel& cost, int64_t budget_bytes,
               DtrHeuristic& heuristic);

}  // namespace mutwo::policies
