#include "policies/wrapped_plan.hpp"

#include "sim/simulator.hpp"

namespace mutwo::policies {

WrappedArrayPlan plan_sub_arrays_wrapped(const std::vector<ir::Graph>& parts, const MemoryPolicy& policy,
                                         const costmodel::OpCostModel& cost, int64_t memory_limit_bytes,
                                         SubArrayOrder order, bool state_offload, OptimizerPlace optimizer,
                                         sim::HostMode host_mode) {
  sim::SimOptions options;
  options.host_mode = host_mode;
  options.memory_limit_bytes = memory_limit_bytes;
  options.continue_past_limit = true;  // the peak the wrapped steady state needs
  options.iterations = 3;
  options.wrap_iterations = true;
  WrappedArrayPlan out;
  int64_t target = memory_limit_bytes;
  for (int attempt = 0; attempt < 4 && target > 0; ++attempt) {
    WrappedArrayPlan w;
    w.plan = plan_sub_arrays(parts, policy, cost, target, order, state_offload, optimizer, host_mode);
    w.planned_at_bytes = target;
    // Nothing fits one step at this limit: keep the plan before (or this one, the first).
    if (!w.plan.result.feasible) {
      if (attempt == 0) out = std::move(w);
      break;
    }
    const sim::Prediction steady = sim::simulate(w.plan.result.schedule, cost, options);
    w.wrapped_peak_bytes = steady.peak_bytes;
    w.fits = !steady.oom;
    out = std::move(w);
    if (out.fits) break;
    target -= out.wrapped_peak_bytes - memory_limit_bytes;
  }
  return out;
}

}  // namespace mutwo::policies
