#pragma once
// emit_plan: a base schedule plus a MemoryPlan -> a Schedule with the swaps and recomputations
// placed. Every static policy (checkpoint, vdnn, capuchin, mutwo, checkmate where it can) emits
// through it, so they differ only in what they decide.
//
// Placement (positions as in memory_plan.hpp; "C(k)" is the compute at position k):
// - swap: swap_out on the device->host stream right after the instruction that produced the
//   tensor (waits on it), so the copy overlaps the compute that follows; free on the compute stream
//   after C(evict_after), waiting on the swap_out; swap_in on the host->device stream, waiting on
//   the free and on C(swap_in_after) (or on the free alone when swap_in_after = -1); C(reload_before)
//   waits on the swap_in.
// - recompute: free after C(evict_after); right before C(reload_before) a recompute of the tensor's
//   producer, preceded by the recomputation of any of that op's inputs that are not resident then
//   (recursively, back to resident tensors); inputs rebuilt only for this are freed right after the
//   recompute that needed them, and extra outputs of a recomputed op that were not wanted are
//   freed at once.
// - the base schedule's final free of each tensor (after its last reader) stays.
// Several instructions at one point go in ascending tensor id. The result validates.
#include <string>
#include <vector>

#include "ir/schedule.hpp"
#include "policies/memory_plan.hpp"

namespace mutwo::policies {

// Throws mutwo::Error naming the tensor and field when a decision is out of range (positions,
// order, a tensor that is not evictable, or an access of the tensor inside its window).
// reload_before need not read the tensor itself (a policy may reload early, e.g. a whole
// checkpoint segment at once), but some op at or after it must.
ir::Schedule emit_plan(const ir::Schedule& base, const ComputeOrder& order, const MemoryPlan& plan,
                       std::string policy_name);

// The instructions emit_plan puts in its Schedule, without copying the graph (which costs more than
// the emission on large graphs): a policy that tries many plans keeps one Schedule and replaces its
// instructions. Same checks and errors as emit_plan.
std::vector<ir::Instruction> emit_instructions(const ir::Schedule& base, const ComputeOrder& order,
                                               const MemoryPlan& plan);

}  // namespace mutwo::policies
