#pragma once
// The model zoo: name -> builder of the forward Graph, with the published reference it follows.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/graph.hpp"
#include "ir/precision.hpp"
#include "support/registry.hpp"
#include "transforms/lean_ops.hpp"

namespace mutwo::zoo {

struct ModelConfig {
  int64_t batch_size = 0;  // per model; 0 = the model's default
  int64_t seq_len = 0;     // transformers over tokens; 0 = default
  int64_t image_size = 0;  // vision models; 0 = default
  ir::DType dtype = ir::DType::f32;
  int32_t width = 1;  // models fused horizontally (HFTA); see fusion.hpp
  ir::Precision precision =
      ir::Precision::fp32;       // applied to the built graph (autocast.hpp); needs dtype fp32
  transforms::LeanOps lean_ops;  // Tempo's lean layers, applied to the built graph (lean_ops.hpp)
};

struct ModelInfo {
  std::string name;         // "bert-base"
  std::string family;       // "bert"
  std::string description;  // one line
  std::string reference;    // the published implementation whose parameter count it matches
  int64_t default_batch_size = 0;
  int64_t default_seq_len = 0;     // 0 when not a sequence model
  int64_t default_image_size = 0;  // 0 when not a vision model
  // Builds the forward Graph (ending in the loss) for a config with defaults already filled in.
  std::function<ir::Graph(const ModelConfig&)> build;
};

// add throws Error on a duplicate or missing name; find throws UnknownNameError
// "unknown model 'x'; valid: bert-base, ...".
class ModelRegistry : public Registry<ModelInfo> {
 public:
  ModelRegistry() : Registry("model") {}
  const std::vector<ModelInfo>& models() const { return entries(); }  // in registration order
};

// One call registers every built-in family (one line per family file in zoo/).
void register_builtin_models(ModelRegistry& registry);
// A registry with the built-ins, built once.
const ModelRegistry& builtin_models();

// Test-scale variants of every zoo family ("bert-mini", "resnet-mini", ...), built by the same family
// builders with small dimensions for CPU numerics tests; a registry of their own, so that the zoo
// lists only published models. One registration line per variant in mini_models.cpp.
void register_mini_models(ModelRegistry& registry);
// A registry with the test-scale variants, built once.
const ModelRegistry& mini_models();

// Looks a name up in the zoo, then among the test-scale variants; a name ending in .json or
// .json.gz is an exported model file (exported_model.hpp). Throws UnknownNameError:
// "unknown model 'x'; valid: bert-base, ...; test-scale: bert-mini, ...".
const ModelInfo& find_model(std::string_view name);

// Whether a model takes a sequence length (a sequence model) or an image size (a vision model); an
// exported model file counts as taking both, since it refuses them itself in its own words
// (exported_model.hpp). build_model refuses a dimension the model does not take.
bool takes_seq_len(const ModelInfo& info);
bool takes_image_size(const ModelInfo& info);

// Builds a forward Graph of a zoo model or a test-scale variant (find_model): fills the config's
// defaults from the model, names the graph, applies the config's precision (apply_precision; a mode
// other than fp32 on a model of dtype other than fp32 throws Error naming both).
ir::Graph build_model(std::string_view name, ModelConfig config);

// Family registration functions, one per file.
void register_bert_models(ModelRegistry& registry);
void register_gpt2_models(ModelRegistry& registry);
void register_vit_models(ModelRegistry& registry);
void register_resnet_models(ModelRegistry& registry);
void register_mobilenet_models(ModelRegistry& registry);
void register_dlrm_models(ModelRegistry& registry);

}  // namespace mutwo::zoo
