#pragma once
// The swap/recompute policy interface: turns a base schedule (every op once, in the order the
// sub-arrays run, each tensor freed after its last reader) into one that fits a memory limit by
// adding swap_out / swap_in / free / recompute instructions.
#include <cstdint>
#include <string>
#include <string_view>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "sim/host_mode.hpp"
#include "sim/prediction.hpp"

namespace mutwo::policies {

struct PolicyInput {
  // Validated schedule with one compute per op on the compute stream(s), in run order (plain or
  // multiplexed), each non-persistent tensor freed after its last reader in that order.
  const ir::Schedule* base = nullptr;
  const costmodel::OpCostModel* cost = nullptr;  // op and transfer durations; its device's link
  int64_t memory_limit_bytes = 0;                // > 0; the simulator's limit for the result
  sim::HostMode host_mode = sim::HostMode::none;   // how the result is simulated (sim/host_mode.hpp)
};

struct PolicyResult {
  ir::Schedule schedule;  // validates (ir::validate_schedule); policy = the policy's name
  // True when sim::simulate(schedule, cost, {memory_limit_bytes}) runs without OOM.
  bool feasible = false;
  // Peak bytes of the returned schedule in simulation. When infeasible, the schedule is the
  // policy's most memory-saving plan and this is the smallest limit the policy could meet.
  int64_t peak_bytes = 0;
  int64_t step_time_ns = 0;  // simulated step time of the returned schedule (0 when infeasible)
  std::string note;          // one line for reports, e.g. "12 swapped (1.2 GB), 30 recomputed"
  // The simulator's figures of `schedule` at the input's limit (when infeasible: oom set, and the
  // figures of the run continued past the limit), so nobody simulates it again.
  sim::Prediction prediction;
};

// One policy; stateless, so one instance can plan many inputs (the search runs them side by side).
class MemoryPolicy {
 public:
  virtual ~MemoryPolicy() = default;
  virtual std::string_view name() const = 0;
  // Never throws for "does not fit": returns feasible = false with its best plan. Throws
  // mutwo::Error only on bad input (null pointers, a base schedule that is not a base schedule).
  virtual PolicyResult plan(const PolicyInput& input) const = 0;
};

}  // namespace mutwo::policies
