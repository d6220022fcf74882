#pragma once
// A zoo model's training step (Adam, the zoo's defaults) and its ops by name, for the suites that
// check how the cost sources count an op's kernels.
#include <cstdint>
#include <string>

#include <doctest/doctest.h>

#include "ir/graph.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::test {

inline ir::Graph zoo_step(const std::string& model, int64_t batch, int32_t width = 1, int64_t seq_len = 0) {
  zoo::ModelConfig config;
  config.batch_size = batch;
  config.width = width;
  config.seq_len = seq_len;
  return transforms::build_training_step(zoo::build_model(model, config), transforms::OptimizerConfig{});
}

// The op of that name; fails the test case when there is none.
inline const ir::Op& op_named(const ir::Graph& g, const std::string& name) {
  for (const ir::Op& op : g.ops) {
    if (op.name == name) return op;
  }
  FAIL("no op " << name);
  return g.ops.front();
}

}  // namespace mutwo::test
