#pragma once
// ReplayPlan: a Schedule flattened for the event loop (kinds, streams, durations, dependency graph).
#include <cstdint>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"

namespace mutwo::sim {

// Everything the event loop reads per instruction, laid out flat and computed once per run.
struct ReplayPlan {
  int32_t num_streams = 3;
  int32_t host_stream = ir::kNoStream;    // Schedule::host_stream: its ops run on the host CPU
  std::vector<int32_t> engine_of_stream;  // half duplex maps both copy streams to one engine
  std::vector<ir::InstrKind> kind;
  std::vector<int32_t> stream;
  std::vector<int32_t> target;  // op id (compute, recompute) or tensor id
  std::vector<int64_t> duration_ns;
  std::vector<int64_t> op_ns;  // per op: its price (priced once); -1: no device instruction runs it
  std::vector<int32_t> pending;               // unfinished dependencies (the replay counts them down)
  std::vector<int32_t> dependents_begin;      // CSR: dependents of i are dependents[begin[i], begin[i+1])
  std::vector<ir::InstrId> dependents;        // ascending per instruction
};

// Throws ir::ScheduleError naming the instruction and field when an id, stream, op, tensor or
// wait is out of range or a wait does not point backwards.
void check_references(const ir::Schedule& schedule);

// Builds the plan: durations from the cost model (device ops), costmodel::host_optimizer_ns (ops
// on the schedule's host stream) and costmodel::transfer_duration_ns (swaps); dependencies: for each
// instruction the previous instruction of its stream, its waits, and for free(t) the last instruction of
// every stream that touched t since t's previous free (earlier touchers on a stream finish before the last
// one, streams being FIFO). Expects check_references to have passed. Each op is priced once (op_ns): a
// recomputed op is the op again.
ReplayPlan make_replay_plan(const ir::Schedule& schedule, const costmodel::OpCostModel& cost_model,
                            bool half_duplex);

}  // namespace mutwo::sim
