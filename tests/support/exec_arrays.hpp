#pragma once
// Shared by the executor suites: the training-step graphs of a small model array split into
// sub-arrays, and simulator options at a memory limit.
#include <cstdint>
#include <string>
#include <vector>

#include "policies/model_array.hpp"
#include "sim/simulator.hpp"

namespace mutwo::test {

// `model` x (sum of partition) models, one fused training-step graph per sub-array.
inline std::vector<ir::Graph> array_steps(
    const std::string& model, const std::vector<int32_t>& partition,
    transforms::OptimizerKind optimizer = transforms::OptimizerKind::adam, ir::DType dtype = ir::DType::f32,
    int64_t batch = 0, int64_t image_size = 0) {
  policies::ModelArray array;
  array.model = model;
  array.count = 0;
  for (int32_t w : partition) array.count += w;
  array.optimizer.kind = optimizer;
  array.config.dtype = dtype;
  array.config.batch_size = batch;
  array.config.image_size = image_size;
  return policies::sub_array_steps(array, partition);
}

// limit < 0: no limit (the peak a plan needs).
inline sim::SimOptions sim_options(int64_t limit_bytes) {
  sim::SimOptions o;
  o.memory_limit_bytes = limit_bytes;
  return o;
}

}  // namespace mutwo::test
