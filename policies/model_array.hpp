#pragma once
// A model array (k copies of one zoo architecture) and its split into fused sub-arrays: the
// training-step graphs a schedule builder takes, one per sub-array, run one after another.
#include <cstdint>
#include <string>
#include <vector>

#include "profiles/autodiff.hpp"
#include "profiles/graph.hpp"
#include "profiles/models/model_registry.hpp"

namespace mutwo::policies {

struct ModelArray {
  std::string model;              // zoo name, "bert-base"
  int32_t count = 1;              // models in the array
  profiles::ModelConfig config;   // per-model batch, sequence length, image size, dtype (width ignored)
  profiles::OptimizerConfig optimizer;
};

// Checks that the sub-array sizes are >= 1 and add up to array.count; throws mutwo::Error naming
// the partition and what is wrong ("partition 2,1 covers 3 models, the array has 4").
void validate_partition(const ModelArray& array, const std::vector<int32_t>& partition);

// "2,2"
std::string partition_text(const std::vector<int32_t>& partition);

// One fused training-step graph per sub-array (width = its size), named "bert-base x2". The
// optimizer's per-model lists must have one value or array.count values; with count values each
// sub-array gets its models' slice.
std::vector<profiles::Graph> sub_array_steps(const ModelArray& array, const std::vector<int32_t>& partition);

}  // namespace mutwo::policies
