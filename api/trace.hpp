#pragma once
// One training step's graph of a model (k copies fused), with autodiff and the optimizer: what
// `mutwo trace` writes and `mutwo.trace()` returns.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace mutwo::api {

struct TraceRequest {
  std::string model;       // zoo name or exported model file
  int32_t models = 1;      // copies fused horizontally
  int64_t batch_size = 0;  // 0: the model's default
  int64_t seq_len = 0;
  int64_t image_size = 0;
  std::string dtype = "fp32";
  std::string precision = "fp32";
  std::string optimizer = "adam";
  std::vector<double> lr;  // one, or one per model; empty: the optimizer's default
};

// Throws Error for models outside 1..policies::kMaxArrayModels, UnknownNameError naming an unknown model, dtype, precision or
// optimizer, what the model's build throws for sizes it refuses.
ir::Graph training_step(const TraceRequest& request);

}  // namespace mutwo::api
