#pragma once
// Model-state offload: weights, gradients and optimizer state live in pinned host memory between
// the uses of their sub-array (ZeRO-Offload, Ren et al., ATC 2021; μ-TWO, Purandare et al., MLSys
// 2023, §3.3: an idle sub-array's state need not hold the device), so an array whose state alone
// exceeds the GPU can still run in one multiplexed step.
//
// The pass works on a finished plan (any static policy's schedule, or a base schedule) and moves
// every persistent tensor of the chosen sub-arrays to Schedule::host_state:
// - weight / optimizer state: swap_in on the host->device stream as late as the estimated
//   timeline allows (copies queued first-use first, each finishing before the compute that first
//   reads the tensor, which waits on it); after its last access (the optimizer's in-place update)
//   swap_out on the device->host stream, and free on the compute stream at the first point the
//   estimated copy is done (waiting on it);
// - gradient: written by its backward op, freed right after its last reader (the optimizer).
// The estimated timeline is the plan's compute instructions back to back at the cost model's op
// durations, each copy engine a FIFO queue at the device's host-link rate (transfer_duration_ns);
// the simulator then gives the real figures.
//
// plan_with_state_offload wraps any policy: the policy plans activations at a limit raised by the
// state the pass will move off the device, the pass offloads, the simulator checks the result at
// the real limit, and the raise shrinks by the overshoot until it fits (at most 3 rounds).
#include <cstdint>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "policies/memory_policy.hpp"
#include "profiles/schedule.hpp"

namespace mutwo::policies {

// The persistent tensors of the chosen sub-arrays (indices into planned.sub_arrays; empty: every
// sub-array, or the whole graph when it has none) that the pass would move: read or written by one
// of their ops. Ascending.
std::vector<profiles::TensorId> offloadable_state(const profiles::Schedule& planned,
                                                  const std::vector<int32_t>& sub_arrays = {});

// The planned schedule with that state kept on the host (see above). The result validates.
// Throws mutwo::Error when the plan already moves or frees one of those tensors, or when a
// sub-array index is out of range.
profiles::Schedule offload_model_state(const profiles::Schedule& planned, const costmodel::OpCostModel& cost,
                                       const std::vector<int32_t>& sub_arrays = {});

// policy's plan of input.base with every sub-array's state offloaded, checked at
// input.memory_limit_bytes. The note says what moved: "...; model state on the host (2.0 GB in,
// 1.5 GB out)". Never throws for "does not fit"; infeasible results carry the smallest peak seen.
PolicyResult plan_with_state_offload(const MemoryPolicy& policy, const PolicyInput& input);

}  // namespace mutwo::policies
