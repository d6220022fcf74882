#pragma once
// Plans one partition of a model array with one policy: the sub-arrays in multiplex order
// (multiplex.hpp), their base schedule multiplexed or back to back, and the policy's plan of it at
// a memory limit. What `mutwo run` executes for --model/--partition/--policy, and the choice the
// search makes per partition and policy.
#include <cstdint>
#include <string_view>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/graph.hpp"
#include "policies/memory_policy.hpp"
#include "policies/state_offload.hpp"

namespace mutwo::policies {

enum class SubArrayOrder : uint8_t {
  multiplexed,   // FW_1, [BW_1 || FW_2], ..., BW_n (μ-TWO multiplexing)
  back_to_back,  // each sub-array's whole step, one after another
  best,          // plan both; keep the feasible one with the shorter step (multiplexed on a tie)
};
std::string_view order_name(SubArrayOrder order);  // "multiplexed", "back-to-back", "best"
SubArrayOrder parse_order(std::string_view name);  // throws UnknownNameError listing the names

struct ArrayPlan {
  PolicyResult result;       // the plan kept
  bool multiplexed = false;  // whether its base was the multiplexed schedule
};

// Orders the parts by multiplex_order (estimated step time from `cost`; ties keep the given order),
// builds the base schedule(s) and plans with `policy` at `memory_limit_bytes` (> 0). One part:
// the plain schedule. Never throws for "does not fit" (result.feasible tells); throws as the
// policy does on bad input and GraphError on no parts.
// With state_offload the policy plans through plan_with_state_offload (state_offload.hpp): every
// sub-array's weights, gradients and optimizer state live on the host between uses, the optimizer
// step where `optimizer` says. `host_mode` is the host timeline the plan is judged (and `best` chooses
// its order) under, as the prediction that follows simulates it.
ArrayPlan plan_sub_arrays(std::vector<ir::Graph> parts, const MemoryPolicy& policy,
                          const costmodel::OpCostModel& cost, int64_t memory_limit_bytes, SubArrayOrder order,
                          bool state_offload = false, OptimizerPlace optimizer = OptimizerPlace::best,
                          sim::HostMode host_mode = sim::HostMode::none);

}  // namespace mutwo::policies
