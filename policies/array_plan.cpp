#include "policies/array_plan.hpp"

#include <algorithm>

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
                          bool state_offload, OptimizerPlace optimizer, sim::HostMode host_mode) {
  if (parts.empty()) throw GraphError("plan_sub_arrays: no sub-arrays to plan");
  std::vector<int64_t> step_ns;
  step_ns.reserve(parts.size());
  for (const ir::Graph& g : parts) step_ns.push_back(estimated_step_ns(g, cost));
  // Each part's first model in the array, in the given order: the plan may run them in another.
  std::vector<int32_t> first_model;
  int32_t models = 0;
  for (const ir::Graph& g : parts) {
    first_model.push_back(models);
    models += g.width;
  }
  const std::vector<int32_t> order_of_parts = multiplex_order(step_ns);
  std::vector<ir::Graph> ordered;
  ordered.reserve(parts.size());
  for (int32_t i : order_of_parts) ordered.push_back(std::move(parts[static_cast<size_t>(i)]));
  // Learning rates and the other per-model settings were built into each part in the given order; the
  // executor numbered models in schedule order, so a reordered partition trained model i with another
  // model's settings and reported its loss at another index.
  const auto number_models = [&](ArrayPlan planned) {
    std::vector<ir::SubArray>& subs = planned.result.schedule.sub_arrays;
    const bool reordered = !std::is_sorted(order_of_parts.begin(), order_of_parts.end());
    if (reordered && subs.size() == order_of_parts.size()) {
      for (size_t k = 0; k < subs.size(); ++k) {
        subs[k].first_model = first_model[static_cast<size_t>(order_of_parts[k])];
      }
    }
    return planned;
  };

  const auto plan = [&](bool interleave) {
    const ir::Schedule base = interleave && ordered.size() > 1 ? build_multiplexed_schedule(ordered, cost)
                                                               : build_plain_schedule(ordered);
    PolicyInput input;
    input.base = &base;
    input.cost = &cost;
    input.memory_limit_bytes = memory_limit_bytes;
    input.host_mode = host_mode;
    return ArrayPlan{state_offload ? plan_with_state_offload(policy, input, optimizer) : policy.plan(input),
                     interleave && ordered.size() > 1};
  };
  if (order == SubArrayOrder::multiplexed || ordered.size() == 1) return number_models(plan(true));
  if (order == SubArrayOrder::back_to_back) return number_models(plan(false));
  ArrayPlan multiplexed = plan(true);
  ArrayPlan back_to_back = plan(false);
  return number_models(better_result(back_to_back.result, multiplexed.result) ? std::move(back_to_back)
                                                                              : std::move(multiplexed));
}

}  // namespace mutwo::policies
