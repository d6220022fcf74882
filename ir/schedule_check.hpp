#pragma once
// Validation of a Schedule against its graph: the residency, ordering and stream rules both back
// ends rely on.
#include "ir/schedule.hpp"

namespace mutwo::ir {

// Checks the Schedule against its graph: ids, streams (compute, recompute, free on a compute stream,
// swap_out on kDeviceToHostStream, swap_in on kHostToDeviceStream), waits point backwards, every
// tensor an instruction reads is resident on the device and made resident by an instruction that
// happens before it (same stream earlier, or reached through waits), swap_in only of a tensor
// swapped out and freed, nothing freed twice or freed while not resident, every op computed once.
// Throws mutwo::Error naming the first offending instruction ("instruction 17 (compute op 5
// 'fc1'): reads tensor 3 'x' which is not resident").
//
// Residency model (the back ends rely on it):
// - weight, gradient, optimizer_state, input and label tensors are resident at the start; every
//   other tensor becomes resident when an instruction computing its producer, or a swap_in, runs.
// - Schedule::host_state (ascending persistent tensors) are not resident at the start: its weights
//   and optimizer state have a host copy (swap_in may load it), its gradients nothing (their
//   producer writes them). At the end each must be off the device, and each weight and optimizer
//   state must have a host copy made after its last update.
// - compute of an optimizer-phase op updates its weight and optimizer-state inputs in place: a
//   host copy of them becomes stale.
// - compute(op): each op exactly once; its inputs must be resident. It writes its outputs (a
//   resident gradient is overwritten in place; any host copy of an output becomes stale).
// - recompute(op): only after compute(op), only of a forward op marked recomputable; its inputs
//   must be resident. Outputs not resident are rebuilt; outputs still resident stay untouched (the
//   recomputed copy is discarded, so they allocate nothing) and a host copy stays valid.
// - swap_out(t): t resident; leaves it resident and creates a host copy.
// - free(t): t resident; releases the device copy. It must happen after the instruction that made
//   t resident and after every instruction that read t since (readers on other streams included),
//   so a back end may release the memory as soon as the free runs.
// - swap_in(t): t has a host copy and is not resident; it must happen after the swap_out that made
//   the host copy and after the free that released the previous device copy.
// - a recompute that rebuilds a freed tensor must happen after that free.
// "A happens before B": A is earlier on B's stream, or B waits (transitively) on an instruction
// that A happens before or is. Whether a freed tensor is needed again is a policy concern and is
// not checked here (a later read of it fails as "not resident").
// Sub-array op ranges, when listed, must be in order, disjoint, within the graph and not empty; each
// sub-array's width is its widest op's, and no op of it reads a tensor another sub-array's op made.
// Throws ScheduleError (ids, references, streams and residency rules).
void validate_schedule(const Schedule& schedule);

}  // namespace mutwo::ir
