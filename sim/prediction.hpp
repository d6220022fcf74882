#pragma once
// Prediction: what one simulated training step of a Schedule costs in time and memory.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/schedule.hpp"

namespace mutwo::sim {

// The stream id of the host track in a timeline: the host issuing instructions.
inline constexpr int32_t kHostTrack = -1;

// One instruction as it ran (timeline record; only when SimOptions::record_timeline).
struct TimelineEvent {
  ir::InstrId instruction = ir::kNoId;
  ir::InstrKind kind = ir::InstrKind::compute;
  int32_t stream = ir::kComputeStream;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::string name;  // op name (compute, recompute) or tensor name (swap_out, swap_in, free)
  ir::Phase phase = ir::Phase::forward;  // the op's phase; for tensors their producer's
  ir::OpId op = ir::kNoId;
  ir::TensorId tensor = ir::kNoId;

  bool operator==(const TimelineEvent&) const = default;
};

// Device memory in use right after a change at time_ns (every change is one sample, in order).
struct MemorySample {
  int64_t time_ns = 0;
  int64_t bytes = 0;

  bool operator==(const MemorySample&) const = default;
};

struct Timeline {
  std::vector<TimelineEvent> events;  // in instruction id order
  std::vector<MemorySample> memory;   // in simulation order; first sample: resident state at t=0

  bool operator==(const Timeline&) const = default;
};

struct Prediction {
  int64_t step_time_ns = 0;       // end of the last instruction (at OOM: time the simulation stopped)
  std::vector<int64_t> busy_ns;   // per stream id: sum of instruction durations on it
  std::vector<int64_t> stall_ns;  // per stream id: idle time before each instruction, waiting on
                                  // its waits (or on the shared copy engine in half duplex)
  int64_t compute_stall_ns = 0;   // stall_ns summed over the compute streams
  int64_t host_busy_ns = 0;        // the host issuing instructions (host timeline on)
  int64_t host_optimizer_ns = 0;   // optimizer updates run on the host CPU (Schedule::host_stream)
  int32_t host_stream = ir::kNoStream;  // the schedule's host stream (its busy_ns, its track)
  // Compute-stream idle time spent waiting for the host to issue the next instruction (its stream
  // free and its other dependencies met): the GPU waiting for the CPU.
  int64_t host_bound_idle_ns = 0;
  int64_t recompute_ns = 0;       // sum of recompute durations
  int64_t bytes_swapped_out = 0;  // tensor bytes (unrounded) moved device -> host
  int64_t bytes_swapped_in = 0;   // tensor bytes (unrounded) moved host -> device
  // Of those, model state (weights, gradients, optimizer state; Schedule::host_state).
  int64_t state_bytes_swapped_out = 0;
  int64_t state_bytes_swapped_in = 0;

  int64_t resident_bytes = 0;  // allocated at t=0 (weights, gradients, optimizer state not on the host, inputs, labels)
  int64_t peak_bytes = 0;      // highest device memory in use (allocator-rounded)
  ir::InstrId peak_instruction = ir::kNoId;  // the allocation reaching the peak; kNoId: t=0
  int64_t peak_time_ns = 0;
  int64_t memory_limit_bytes = 0;  // the limit applied; 0 when none

  bool oom = false;
  ir::InstrId oom_instruction = ir::kNoId;              // kNoId when the resident state alone exceeds it
  int64_t oom_requested_bytes = 0;                      // rounded bytes the failing instruction asked for
  int64_t oom_in_use_bytes = 0;                         // bytes in use when it asked
  std::string oom_message;

  int64_t instructions_simulated = 0;  // instructions that ran (all of them unless OOM)

  // With SimOptions::iterations > 1: how many, when each ended (from the first's start), and the
  // first step's time (step_time_ns is then the last one's, the steady state).
  int32_t iterations = 1;
  std::vector<int64_t> iteration_end_ns;
  int64_t first_step_ns = 0;
  bool wrapped = false;  // the iterations' boundaries were merged (SimOptions::wrap_iterations)

  // With dynamic eviction (SimOptions::eviction): tensors the heuristic evicted, recompute
  // instructions inserted.
  int32_t evictions = 0;
  int32_t recomputes = 0;

  // With SimOptions::record_executed: the instructions as they ran, in start order, ids renumbered
  // 0..n-1 (with dynamic eviction: recomputes and evictions inserted, frees moved where they ran, no
  // waits; a valid Schedule of the same graph).
  std::vector<ir::Instruction> executed;

  bool has_timeline = false;
  Timeline timeline;

  bool operator==(const Prediction&) const = default;
};

}  // namespace mutwo::sim
