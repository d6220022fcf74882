#pragma once
// The model zoo listed with each model's size, forward cost and activation memory: what `mutwo
// models` prints and `mutwo.models()` returns (one computation, one set of fields).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "zoo/model_registry.hpp"

namespace mutwo::api {

struct ModelsRequest {
  bool mini = false;       // the test-scale variants (zoo::mini_models()) instead of the published zoo
  int64_t batch_size = 0;  // 0: each model's default
  std::string dtype = "fp32";
};

struct ModelRow {
  const zoo::ModelInfo* info = nullptr;
  zoo::ModelConfig config;
  int64_t parameters = 0;
  int64_t parameter_bytes = 0;
  int64_t forward_flops = 0;  // the whole batch
  int64_t activation_bytes = 0;
};

// Builds each model once at its default config (batch and dtype as asked). Throws Error naming a
// model that does not build, UnknownNameError for an unknown dtype.
std::vector<ModelRow> list_models(const ModelsRequest& request);

// One object per model: name, family, description, reference, dtype, batch_size,
// default_batch_size, seq_len, image_size, parameters, parameter_bytes, forward_flops,
// activation_bytes (exact integers).
nlohmann::ordered_json models_json(const std::vector<ModelRow>& rows, const ModelsRequest& request);

}  // namespace mutwo::api
