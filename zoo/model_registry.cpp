#include "zoo/model_registry.hpp"

#include <fmt/format.h>

#include "support/error.hpp"
#include "transforms/autocast.hpp"
#include "zoo/exported_model.hpp"
#include "zoo/family_builders.hpp"

namespace mutwo::zoo {

void register_builtin_models(ModelRegistry& registry) {
  register_bert_models(registry);
  register_gpt2_models(registry);
  register_vit_models(registry);
  register_resnet_models(registry);
  register_mobilenet_models(registry);
  register_dlrm_models(registry);
}

const ModelRegistry& builtin_models() {
  static const ModelRegistry registry = [] {
    ModelRegistry r;
    register_builtin_models(r);
    return r;
  }();
  return registry;
}

const ModelRegistry& mini_models() {
  static const ModelRegistry registry = [] {
    ModelRegistry r;
    register_mini_models(r);
    for (const ModelInfo& m : r.models()) {
      if (builtin_models().contains(m.name))
        throw Error("test-scale model '" + m.name + "' shadows a zoo model");
    }
    return r;
  }();
  return registry;
}

const ModelInfo& find_model(std::string_view name) {
  if (is_model_file(name)) return exported_model(name);
  for (const ModelRegistry* registry : {&builtin_models(), &mini_models()}) {
    if (const ModelInfo* m = registry->lookup(name)) return *m;
  }
  throw UnknownNameError(fmt::format("unknown model '{}'; valid: {}; test-scale: {}", name,
                                     builtin_models().valid_names(), mini_models().valid_names()));
}

void require_positive_dim(const std::string& model, std::string_view field, int64_t value) {
  if (value < 1)
    throw Error(fmt::format("model '{}': spec field '{}' = {} must be >= 1", model, field, value));
}

bool takes_seq_len(const ModelInfo& info) {
  return info.default_seq_len > 0 || info.family == kExportedModelFamily;
}

bool takes_image_size(const ModelInfo& info) {
  return info.default_image_size > 0 || info.family == kExportedModelFamily;
}

ir::Graph build_model(std::string_view name, ModelConfig config) {
  const ModelInfo& info = find_model(name);
  // A dimension the model has none of is refused, not ignored (a vision model's --seq-len).
  if (config.seq_len != 0 && !takes_seq_len(info)) {
    throw Error(fmt::format("model '{}' takes no sequence length (seq_len = {}): it is not a sequence model",
                            name, config.seq_len));
  }
  if (config.image_size != 0 && !takes_image_size(info)) {
    throw Error(fmt::format("model '{}' takes no image size (image_size = {}): it is not a vision model",
                            name, config.image_size));
  }
  // Integer and bool dtypes are tensors' (indices, masks), not a model's parameters and activations.
  if (!ir::is_floating(config.dtype)) {
    throw Error(
        fmt::format("model '{}': dtype {} is not a floating-point type a model trains in (fp32, bf16, "
                    "fp16, fp64)",
                    name, ir::dtype_name(config.dtype)));
  }
  if (config.batch_size == 0) config.batch_size = info.default_batch_size;
  if (config.seq_len == 0) config.seq_len = info.default_seq_len;
  if (config.image_size == 0) config.image_size = info.default_image_size;
  if (config.batch_size < 1)
    throw Error(fmt::format("model '{}': batch size {} must be >= 1", name, config.batch_size));
  if (config.width < 1) throw Error(fmt::format("model '{}': width {} must be >= 1", name, config.width));
  if (config.seq_len < 0 || config.image_size < 0) {
    throw Error(fmt::format("model '{}': sequence length {} and image size {} must be positive", name,
                            config.seq_len, config.image_size));
  }
  // One naming rule for every family: "resnet18", or "resnet18 x4" when k models are fused.
  ir::Graph graph = transforms::apply_lean_ops(info.build(config), config.lean_ops);
  graph.name = config.width == 1 ? info.name : fmt::format("{} x{}", info.name, config.width);
  if (config.precision == ir::Precision::fp32) return graph;
  if (config.dtype != ir::DType::f32) {
    throw Error(fmt::format("model '{}': precision {} trains an fp32 model; dtype is {} (keep dtype fp32)",
                            name, ir::precision_name(config.precision), ir::dtype_name(config.dtype)));
  }
  return transforms::apply_precision(graph, config.precision);
}

}  // namespace mutwo::zoo
