#pragma once
// Several training steps back to back (docs/ARCHITECTURE.md "Simulation": it runs N iterations and reports
// the steady state beside the first), as both back ends run them. The schedule of one step is
// repeated; each stream runs its instructions in list order across the boundary, so the copy
// engines and the host may start the next iteration's work while the compute stream finishes this
// one (a next-iteration swap-in whose tensor is free, the host issuing the next forward): what one
// step alone cannot show.
//
// Across the boundary, an instruction of iteration k+1 that touches a tensor (reads, writes,
// swaps or frees it) first in its iteration waits on the last instruction of iteration k that
// touched it, when that one runs on another stream. Every iteration after the first uploads its
// batch: a host->device copy of each input and label tensor on the compute stream. Unwrapped, the
// uploads come before the iteration's first instruction: a training loop's
// `x.to(device, non_blocking=True)` at the top of each iteration (from a data loader's pinned
// memory, on the current stream), and what the executor's back-to-back steps do
// (exec/interpreter.cpp): the copy waits for the previous iteration's compute, the next batch never
// lands on top of the previous step's activations, and the copy engines stay free for the next
// iteration's prefetched swap-ins.
//
// Wrapped (μ-TWO's steady state, Purandare et al., MLSys 2023, §3.2: the step wraps around so the
// last sub-array's backward has a partner): the last sub-array's backward and optimizer work of
// iteration k (the *tail*: the one step's instructions from the first compute of such an op to the
// end) runs merged with the first sub-array's forward of iteration k+1 (the *head*: the
// instructions before the first compute of any other op), by progress (merge_by_progress.hpp) over
// the ops' estimated durations, copies and frees kept next to the compute they precede. A head
// instruction that touches a tensor the tail still touches later is deferred until the tail's last
// toucher, and so are the head instructions after it on its stream or waiting on it: per tensor the
// iterations stay in order and every wait points backwards (no stream can deadlock). Each batch
// tensor is then uploaded just before its first use in the iteration (a sub-array's batch before
// its forward), not all at the top: the last sub-array still reads its own batch in the tail. The
// last iteration's tail is merged too, with the head of one more iteration (numbered N, after the
// N unrolled): every iteration then ends as the steady state does, so the last one's time is the
// period.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/schedule.hpp"

namespace mutwo::ir {

// How one iteration boundary is merged, computed once from the one step's schedule and its ops'
// estimated durations, so that both back ends run the same order.
struct BoundaryMerge {
  InstrId head_end = 0;    // head: the one step's instructions [0, head_end)
  InstrId tail_begin = 0;  // tail: [tail_begin, size); head_end <= tail_begin
  // The merged order: (false, i) the tail's instruction i of iteration k, (true, i) the head's
  // instruction i of iteration k+1; each of the two in increasing i.
  std::vector<std::pair<bool, InstrId>> order;
};

// The boundary merge of a multiplexed schedule (two or more sub-arrays), from per-op durations
// (op_ns[op id], e.g. the cost model's). Throws mutwo::Error when the schedule has fewer than two
// sub-arrays, op_ns does not match the graph, or the first sub-array's forward does not all come
// before the last one's backward.
BoundaryMerge boundary_merge(const Schedule& schedule, const std::vector<int64_t>& op_ns);

struct UnrolledSchedule {
  Schedule schedule;                  // the iterations' instructions in issue order (not validated)
  int32_t iterations = 1;             // N: iterations 0..N-1 (wrapped: plus the head of iteration N)
  std::vector<int32_t> iteration_of;  // per unrolled instruction: its iteration, 0-based
  // per unrolled instruction: its id in the one step (kNoId: a batch upload)
  std::vector<InstrId> original_of;
  bool wrapped = false;
};

// iterations from 1 to 1000 (1: the schedule as it is); `wrap`: merge each boundary so (from
// boundary_merge of this schedule). Throws mutwo::Error naming the value otherwise.
UnrolledSchedule unroll_iterations(const Schedule& schedule, int32_t iterations,
                                   const BoundaryMerge* wrap = nullptr);

}  // namespace mutwo::ir
