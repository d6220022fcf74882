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
// With the optimizer on the host (ZeRO-Offload, ATC 2021, §4: gradients streamed to the host
// during backward, CPU Adam, updated weights back before the next forward), the chosen sub-arrays'
// optimizer updates move to a host stream (Schedule::host_stream) and read host copies:
// - gradient: swap_out after its last device access (as soon as backward writes it), free once
//   the copy is estimated done; the host update waits on the copies of its gradients;
// - weight: swap_in as above, freed after its last device reader, never copied back (the host
//   update writes the host copy);
// - optimizer state: never on the device.
// The estimated timeline is the plan's compute instructions back to back at the cost model's op
// durations, each copy engine a FIFO queue at the device's host-link rate (transfer_duration_ns);
// the simulator then gives the real figures.
//
// plan_with_state_offload wraps any policy: the policy plans activations at a limit raised by the
// state the pass will move off the device, the pass offloads, the simulator checks the result at
// the real limit, and the raise shrinks by the overshoot until it fits (at most 3 rounds).
#include <cstdint>
#include <string_view>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "policies/memory_policy.hpp"

namespace mutwo::policies {

// The persistent tensors of the chosen sub-arrays (indices into planned.sub_arrays; empty: every
// sub-array, or the whole graph when it has none) that the pass would move: read or written by one
// of their ops. Ascending.
std::vector<ir::TensorId> offloadable_state(const ir::Schedule& planned,
                                            const std::vector<int32_t>& sub_arrays = {});

enum class OptimizerPlace : uint8_t {
  device,  // the optimizer step on the device, its state prefetched and copied back
  host,    // on the host CPU (ZeRO-Offload's CPU Adam)
  best,    // plan_with_state_offload: both, the faster feasible one kept
};
std::string_view optimizer_place_name(OptimizerPlace place);  // "device", "host", "best"
OptimizerPlace parse_optimizer_place(std::string_view name);  // throws UnknownNameError naming the valid

// The planned schedule with that state kept on the host (see above), the optimizer where `place`
// says (device or host). The result validates. Throws mutwo::Error when the plan already moves or
// frees one of those tensors, when a sub-array index is out of range, when `place` is best, or,
// for the host, when a chosen optimizer op is not an update the host runs (amp_unscale).
ir::Schedule offload_model_state(const ir::Schedule& planned, const costmodel::OpCostModel& cost,
                                 const std::vector<int32_t>& sub_arrays = {},
                                 OptimizerPlace place = OptimizerPlace::device);

// policy's plan of input.base with every sub-array's state offloaded, checked at
// input.memory_limit_bytes; with `best`, each round's activation plan is offloaded with the
// optimizer on the device and on the host and the better result kept (feasible, then faster). The
// note says what moved: "...; model state on the host (2.0 GB in, 1.5 GB out), optimizer on the
// host". Never throws for "does not fit"; infeasible results carry the smallest peak seen.
PolicyResult plan_with_state_offload(const MemoryPolicy& policy, const PolicyInput& input,
                                     OptimizerPlace place = OptimizerPlace::best);

}  // namespace mutwo::policies
