#pragma once
// What a static swap/recompute policy decides, per tensor, over a base schedule's compute order,
// and the facts about that order every policy needs (access positions, inactive windows,
// estimated compute start times, memory per position). plan_emitter.hpp turns a plan into a Schedule.
//
// Positions: the base schedule's compute instructions in list order are positions 0..n-1
// (ComputeOrder::op_at[k] is the op computed at position k).
#include <cstdint>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"

namespace mutwo::policies {

struct ComputeOrder {
  std::vector<ir::OpId> op_at;        // position -> op
  std::vector<int32_t> position_of;   // op id -> position
  std::vector<int64_t> start_ns;      // position -> estimated start (ops back to back, no stalls)
  std::vector<int64_t> duration_ns;   // position -> the cost model's op duration
  int64_t total_ns = 0;               // sum of durations
};

// Reads the compute instructions of a base schedule and prices them with the cost model.
// Throws mutwo::Error when an op is computed twice or not at all, or the schedule already holds
// swap or recompute instructions (it is not a base schedule).
ComputeOrder compute_order(const ir::Schedule& base, const costmodel::OpCostModel& cost);

// The longest stretch of the compute order during which a tensor is not accessed: it could be off
// the device from right after position evict_after to right before position reload_before.
struct InactiveWindow {
  ir::TensorId tensor = ir::kNoId;
  int64_t bytes = 0;
  int32_t evict_after = -1;    // the access before the gap (the producer or a reader)
  int32_t reload_before = -1;  // the access after the gap (a reader)
  int64_t inactive_ns = 0;     // start_ns[reload_before] - (start_ns[evict_after] + duration_ns[evict_after])
};

// One window per evictable tensor (role activation or temporary, produced by an op, read at least
// twice with a gap, i.e. accessed at two positions that are not adjacent), in tensor id order.
// Ties between equal gaps go to the earliest. Tensors with no gap of >= 1 position are left out.
std::vector<InactiveWindow> inactive_windows(const ir::Schedule& base, const ComputeOrder& order);

enum class TensorAction : uint8_t { keep, swap, recompute };

struct TensorDecision {
  ir::TensorId tensor = ir::kNoId;
  TensorAction action = TensorAction::keep;
  int32_t evict_after = -1;    // position after which the device copy is released
  int32_t reload_before = -1;  // position that needs it back (evict_after < reload_before)
  // swap only: the position after whose compute starts the swap_in is issued (the prefetch
  // trigger, evict_after <= swap_in_after < reload_before); -1: right after the free.
  int32_t swap_in_after = -1;
};

// Tensors without a decision (or with keep) stay as the base schedule has them. At most one
// decision per tensor.
struct MemoryPlan {
  std::vector<TensorDecision> decisions;
};

}  // namespace mutwo::policies
