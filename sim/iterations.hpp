#pragma once
// Several training steps back to back (DESIGN.md "Simulation": it runs N iterations and reports
// the steady state beside the first). The schedule of one step is repeated; each stream runs its
// instructions in list order across the boundary, so the copy engines and the host may start the
// next iteration's work while the compute stream finishes this one (a next-iteration swap-in whose
// tensor is free, the host issuing the next forward): what one step alone cannot show.
//
// Across the boundary, an instruction of iteration k+1 that touches a tensor (reads, writes,
// swaps or frees it) first in its iteration waits on the last instruction of iteration k that
// touched it, when that one runs on another stream. Every iteration after the first starts with
// the upload of its batch: a host->device copy of each input and label tensor on the compute
// stream, before the iteration's first instruction there. That is a training loop's
// `x.to(device, non_blocking=True)` at the top of each iteration (from a data loader's pinned
// memory, on the current stream), and what the executor's back-to-back steps do
// (exec/interpreter.cpp): the copy waits for the previous iteration's compute, the next batch never
// lands on top of the previous step's activations, and the copy engines stay free for the next
// iteration's prefetched swap-ins.
#include <cstdint>
#include <vector>

#include "profiles/schedule.hpp"

namespace mutwo::sim {

struct UnrolledSchedule {
  profiles::Schedule schedule;  // the iterations' instructions, one after another (not validated)
  std::vector<int32_t> iteration_of;  // per unrolled instruction: its iteration, 0-based
  // per unrolled instruction: its id in the one step (kNoId: a batch upload)
  std::vector<profiles::InstrId> original_of;
};

// iterations >= 1 (1: the schedule as it is). Throws mutwo::Error naming the value otherwise.
UnrolledSchedule unroll_iterations(const profiles::Schedule& schedule, int32_t iterations);

}  // namespace mutwo::sim
