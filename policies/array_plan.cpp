#include "policies/array_plan.hpp"

#include <fmt/format.h>

#include "policies/multiplex.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_result.hpp"
#include "policies/state_offload.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

std::string_view order_name(SubArrayOrder order) {
  switch (order) {
    case SubArrayOrder::multiplexed:
      return "multiplexed";
    case SubArrayOrder::back_to_back:
      return "back-to-back";
    case SubArrayOrder::best:
      return "best";
  }
  return "?";
}

SubArrayOrder parse_order(std::string_view name) {
  for (SubArrayOrder o : {SubArrayOrder::multiplexed, SubArrayOrder::back_to_back, SubArrayOrder::best}) {
    if (order_name(o) == name) return o;
  }
  throw UnknownNameError(
      fmt::format("unknown sub-array order '{}'; valid: multiplexed, back-to-back, best", name));
}

ArrayPlan plan_sub_arrays(std::vector<ir::Graph> parts, const MemoryPolicy& policy,
                          const costmodel::OpCostModel& cost, int64_t memory_limit_bytes, SubArrayOrder order,
                          bool state_offload, OptimizerPlace optimizer) {
  if (parts.empty()) throw GraphError("plan_sub_arrays: no sub-arrays to plan");
  std::vector<int64_t> step_ns;
  step_ns.reserve(parts.size());
  for (const ir::Graph& g : parts) step_ns.push_back(estimated_step_ns(g, cost));
  std::vector<ir::Graph> ordered;
  ordered.reserve(parts.size());
  for (int32_t i : multiplex_order(step_ns)) ordered.push_back(std::move(parts[static_cast<size_t>(i)]));

  const auto plan = [&](bool interleave) {
    const ir::Schedule base = interleave && ordered.size() > 1 ? build_multiplexed_schedule(ordered, cost)
                                                               : build_plain_schedule(ordered);
    PolicyInput input;
    input.base = &base;
    input.cost = &cost;
    input.memory_limit_bytes = memory_limit_bytes;
    return ArrayPlan{state_offload ? plan_with_state_offload(policy, input, optimizer) : policy.plan(input),
                     interleave && ordered.size() > 1};
  };
  if (order == SubArrayOrder::multiplexed || ordered.size() == 1) return plan(true);
  if (order == SubArrayOrder::back_to_back) return plan(false);
  ArrayPlan multiplexed = plan(true);
  ArrayPlan back_to_back = plan(false);
  return better_result(back_to_back.result, multiplexed.result) ? back_to_back : multiplexed;
}

}  // namespace mutwo::policies
