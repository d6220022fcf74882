#pragma once
// simulate(): discrete-event replay of a Schedule on one device, giving a Prediction.
//
// Engine (docs/ARCHITECTURE.md "Simulation", "Units and determinism"):
// - The event core (sim/event_core.hpp) owns the clock (int64 ns); its queue is keyed on (time,
//   creation order), so equal times resolve in the order events were made and runs are bit-for-bit
//   deterministic. Components (the memory simulator) take `now` and keep no clock.
// - Streams: 0 compute, 1 device->host copy, 2 host->device copy, 3.. extra compute streams. Each
//   stream is an engine with a busy flag and runs its instructions in list order. In half duplex
//   the two copy streams share one engine: a ready transfer waits while the other direction is
//   busy; the engine takes the transfer ready first, ties by instruction id.
// - An instruction starts when the previous instruction of its stream has finished, its engine is
//   free and every instruction it waits on has finished.
// - Durations: compute/recompute = the cost model's op_duration_ns; swap_out/swap_in =
//   costmodel::transfer_duration_ns of the tensor's bytes in that direction; free = 0 ns.
// - free(t) runs once every earlier instruction (list order) that touched t since t's previous
//   free has finished (readers on other streams included), and after the previous instruction of
//   its stream. It never waits for an engine.
// - At one instant: finishes first (workspace released), then frees that became ready, then
//   engines start ready instructions in stream order (so memory released at t is reusable at t).
// - Memory: see MemorySimulator. With a limit, the first allocation crossing it stops the run and
//   the Prediction reports it (oom = true); instructions not yet started are not simulated.
#include <cstdint>
#include <optional>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "sim/eviction_heuristic.hpp"
#include "sim/host_mode.hpp"
#include "sim/prediction.hpp"

namespace mutwo::sim {

struct SimOptions {
  // The host timeline (sim/host_mode.hpp): with eager or cuda_graph, the host issues the schedule's
  // instructions in list order at the cost model's host cost each (op_host_ns; swaps:
  // device().host.copy_issue_ns; CUDA graph: host.graph_kernel_ns per instruction); an instruction
  // starts on the GPU no earlier than its issue; the host runs at most host.launch_queue_depth issued
  // instructions ahead of the GPU; after an op with the attribute host_sync it waits for the op to
  // finish; the step ends when both are done. Off with dynamic eviction (DTR's runtime has no host).
  HostMode host_mode = HostMode::none;
  int64_t memory_limit_bytes = 0;   // 0: the device's memory_bytes (none if that is 0); < 0: no limit
  bool record_timeline = false;     // fill Prediction::timeline (instruction spans, memory samples)
  std::optional<bool> half_duplex;  // unset: !device().full_duplex
  // At the first allocation over the limit, note the OOM (oom, oom_instruction, ...) and go on as if
  // there were no limit: peak_bytes is then the peak the schedule needs, the smallest limit it meets
  // (one run instead of a second one without a limit).
  bool continue_past_limit = false;
  // Fill Prediction::executed with the instructions as they ran (inserted ones included).
  bool record_executed = false;
  // Dynamic eviction (sim/dynamic_eviction.hpp): with a heuristic, the limit is a budget that the
  // engine meets by evicting the resident tensor of smallest score and rematerialising evicted
  // tensors when they are read again; the schedule must be a base schedule (compute and free on the
  // compute stream). Not meeting the budget is reported as OOM with the reason, after a complete run.
  const EvictionHeuristic* eviction = nullptr;
  // With eviction: the run fails once recomputation passes (limit - 1) x the schedule's compute time
  // (DTR's thrashing limit, 2.0 in the paper); 0: none.
  double remat_overhead_limit = 0;
  // Training steps simulated back to back (ir/unrolled_schedule.hpp), 1 to 1000. With more than one the
  // Prediction's step_time_ns is the last step's (end of the last iteration - end of the one
  // before: the steady state), first_step_ns the first's; busy, stall, swap and recompute figures
  // and the timeline cover every iteration (batch uploads busy the host->device stream but are not
  // counted as bytes swapped), the peak is the highest of any. Not with eviction.
  int32_t iterations = 1;
  // With iterations > 1: wrap each iteration boundary (ir/unrolled_schedule.hpp): the last
  // sub-array's backward merged with the first one's next forward, as μ-TWO's steady state runs.
  // Needs two or more sub-arrays (ir::boundary_merge throws mutwo::Error otherwise); the merge
  // weighs ops by this simulation's cost model.
  bool wrap_iterations = false;
};

// Replays the schedule. Expects a schedule that passed ir::validate_schedule (residency is
// not re-checked); references are checked and a bad one throws ir::ScheduleError naming the
// instruction and field. A negative op duration from the cost model throws mutwo::Error.
Prediction simulate(const ir::Schedule& schedule, const costmodel::OpCostModel& cost_model,
                    const SimOptions& options = {});

// How reports name an instruction (ir/schedule.hpp, shared with exec/).
using ir::describe_instruction;

}  // namespace mutwo::sim
