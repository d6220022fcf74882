#pragma once
// Shared by the server suites: a model array spread over Harmony's server (4x-gtx1080ti) whose
// GPUs' plans swap and recompute.
#include <cstdint>

#include "costmodel/op_cost_model.hpp"
#include "costmodel/server_catalog.hpp"
#include "policies/server_search.hpp"

namespace mutwo::test {

// `models` gpt2-mini (Adam) over Harmony's server at 1 MiB per GPU: two fused models swap and
// recompute there, one alone fits plainly.
inline policies::ServerSearchConfig gpt2_mini_array(int32_t models, const costmodel::OpCostModel& cost) {
  policies::ServerSearchConfig c;
  policies::ArchitectureCount a;
  a.model = "gpt2-mini";
  a.count = models;
  c.array.architectures = {a};
  c.array.optimizer.kind = transforms::OptimizerKind::adam;
  c.array.cost = &cost;
  c.server = costmodel::find_server("4x-gtx1080ti");
  c.array.memory_limit_bytes = 1 << 20;
  return c;
}

}  // namespace mutwo::test
