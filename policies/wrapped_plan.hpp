#pragma once
// Planning for the wrapped steady state (ir/unrolled_schedule.hpp): policies plan one step, in
// which the first sub-array's forward runs alone; wrapped, it runs beside the last sub-array's
// backward of the iteration before, and the steady state can need more memory than the plan's
// step. This plans the array as plan_sub_arrays does, simulates the wrapped steady state (3
// iterations) at the limit, and while it does not fit, plans again at the limit lowered by the
// overshoot (at most 3 more plans), so the policy leaves room for the merged window.
#include <cstdint>
#include <vector>

#include "policies/array_plan.hpp"

namespace mutwo::policies {

struct WrappedArrayPlan {
  ArrayPlan plan;
  bool fits = false;             // the wrapped steady state stays within memory_limit_bytes
  int64_t planned_at_bytes = 0;  // the limit the kept plan was made at (<= memory_limit_bytes)
  int64_t wrapped_peak_bytes = 0;
};

// Throws as plan_sub_arrays does, and mutwo::Error (ir::boundary_merge) when the plan kept
// has fewer than two sub-arrays.
WrappedArrayPlan plan_sub_arrays_wrapped(const std::vector<ir::Graph>& parts, const MemoryPolicy& policy,
                                         const costmodel::OpCostModel& cost, int64_t memory_limit_bytes,
                                         SubArrayOrder order, bool state_offload = false,
                                         OptimizerPlace optimizer = OptimizerPlace::best,
                                         sim::HostMode host_mode = sim::HostMode::none);

}  // namespace mutwo::policies
