// Vision Transformer (Dosovitskiy et al., "An Image is Worth 16x16 Words: Transformers for Image
// Recognition at Scale", ICLR 2021), layer for layer as torchvision.models.vit_b_16 / vit_l_16:
// conv patch embedding, class token, learned position embedding, pre-LN encoder, head on the class
// token. Tensor names follow torchvision's state_dict keys ("encoder.layers.encoder_layer_0.ln_1.weight").
// nn.MultiheadAttention's in_proj ([3H,H] weight, [3H] bias) is written as three linears q/k/v with
// the same parameters, named "...self_attention.in_proj.q" etc. Dropout (p = 0 in torchvision's
// defaults) is omitted.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "zoo/family_builders.hpp"
#include "zoo/layers.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::zoo {
namespace {

constexpr int64_t kPatchSize = 16;
constexpr int64_t kNumClasses = 1000;
constexpr double kLayerNormEps = 1e-6;  // torchvision: partial(nn.LayerNorm, eps=1e-6)
constexpr int64_t kGeluErf = 0;         // nn.GELU()

// EncoderBlock: x + self_attention(ln_1(x)), then + mlp(ln_2(.)).
ir::TensorId encoder_block(ir::GraphBuilder& b, ir::TensorId x, const std::string& block,
                           const VitSpec& spec) {
  const int64_t h = spec.hidden;
  const ir::TensorId a = layer_norm_layer(b, x, block + ".ln_1", kLayerNormEps);
  const std::string attn = block + ".self_attention";
  const ir::TensorId q = linear_layer(b, a, attn + ".in_proj.q", h);
  const ir::TensorId k = linear_layer(b, a, attn + ".in_proj.k", h);
  const ir::TensorId v = linear_layer(b, a, attn + ".in_proj.v", h);
  const double scale = 1.0 / std::sqrt(static_cast<double>(h / spec.heads));
  ir::TensorId p = b.op(ir::OpKind::attn_scores, attn + ".scores", {q, k},
                        {{"heads", spec.heads}, {"causal", int64_t{0}}, {"scale", scale}});
  p = b.op(ir::OpKind::softmax, attn + ".softmax", {p});
  ir::TensorId y = b.op(ir::OpKind::attn_context, attn + ".context", {p, v});
  y = linear_layer(b, y, attn + ".out_proj", h);
  const ir::TensorId mid = b.op(ir::OpKind::add, block + ".attn_residual", {y, x});

  ir::TensorId m = layer_norm_layer(b, mid, block + ".ln_2", kLayerNormEps);
  m = linear_layer(b, m, block + ".mlp.0", spec.mlp);
  m = b.op(ir::OpKind::gelu, block + ".mlp.1", {m}, {{"approximate", kGeluErf}});
  m = linear_layer(b, m, block + ".mlp.3", h);
  return b.op(ir::OpKind::add, block + ".mlp_residual", {m, mid});
}

}  // namespace

ir::Graph build_vit(const std::string& name, const VitSpec& spec, const ModelConfig& cfg) {
  require_positive_dim(name, "layers", spec.layers);
  require_positive_dim(name, "hidden", spec.hidden);
  require_positive_dim(name, "heads", spec.heads);
  require_positive_dim(name, "mlp", spec.mlp);
  require_positive_dim(name, "patch_size", spec.patch_size);
  require_positive_dim(name, "num_classes", spec.num_classes);
  if (spec.hidden % spec.heads != 0)
    throw Error(fmt::format("model '{}': {} heads do not divide hidden {}", name, spec.heads, spec.hidden));
  const int64_t image = cfg.image_size;
  const int64_t patch = spec.patch_size;
  if (image < patch || image % patch != 0) {
    throw Error(fmt::format("model '{}': image size {} must be a positive multiple of the patch size {}",
                            name, image, patch));
  }
  ir::GraphBuilder b(name, cfg.dtype, cfg.width, cfg.batch_size);
  const int64_t h = spec.hidden;
  const int64_t grid = image / patch;
  const int64_t tokens = 1 + grid * grid;
  const ir::TensorId images =
      b.add_input("images", {cfg.batch_size, 3, image, image}, ir::TensorRole::input, ir::FuseAxis::dim1);
  const ir::TensorId labels =
      b.add_input("labels", {cfg.batch_size}, ir::TensorRole::label, ir::FuseAxis::stack, ir::DType::i64);

  // conv_proj: Conv2d(3, H, kernel patch, stride patch) -> [B,H,grid,grid] (channel layout when fused).
  const ir::TensorId conv_w = b.add_weight("conv_proj.weight", {h, 3, patch, patch}, ir::FuseAxis::dim0);
  const ir::TensorId conv_b = b.add_weight("conv_proj.bias", {h}, ir::FuseAxis::dim0);
  ir::TensorId x = b.op(ir::OpKind::conv2d, "conv_proj", {images, conv_w, conv_b},
                        {{"stride", std::vector<int64_t>{patch, patch}}});
  const ir::TensorId class_token = b.add_weight("class_token", {1, 1, h}, ir::FuseAxis::stack);
  x = b.op(ir::OpKind::class_token_concat, "class_token_concat", {x, class_token});
  const ir::TensorId pos = b.add_weight("encoder.pos_embedding", {1, tokens, h}, ir::FuseAxis::stack);
  x = b.op(ir::OpKind::add, "encoder.add_pos_embedding", {x, pos});

  for (int64_t i = 0; i < spec.layers; ++i) {
    x = encoder_block(b, x, fmt::format("encoder.layers.encoder_layer_{}", i), spec);
  }
  x = layer_norm_layer(b, x, "encoder.ln", kLayerNormEps);
  x = b.op(ir::OpKind::select_token, "class_token_select", {x}, {{"index", int64_t{0}}});
  const ir::TensorId logits = linear_layer(b, x, "heads.head", spec.num_classes);
  b.add_op(ir::OpKind::cross_entropy, "loss", {logits, labels});
  return std::move(b).finish();
}

namespace {

void add_vit(ModelRegistry& registry, const std::string& name, const std::string& description,
             const std::string& reference, VitSpec spec) {
  ModelInfo info;
  info.name = name;
  info.family = "vit";
  info.description = description;
  info.reference = reference;
  info.default_batch_size = 64;
  info.default_image_size = 224;
  info.build = [name, spec](const ModelConfig& cfg) { return build_vit(name, spec, cfg); };
  registry.add(std::move(info));
}

}  // namespace

void register_vit_models(ModelRegistry& registry) {
  add_vit(registry, "vit-b16",
          "ViT-B/16: 12 layers, H 768, 12 heads, MLP 3072, 86.6M parameters, ImageNet 1000",
          "torchvision.models.vit_b_16 (ViT_B_16_Weights.IMAGENET1K_V1)",
          {12, 768, 12, 3072, kPatchSize, kNumClasses});
  add_vit(registry, "vit-l16",
          "ViT-L/16: 24 layers, H 1024, 16 heads, MLP 4096, 304.3M parameters, ImageNet 1000",
          "torchvision.models.vit_l_16 (ViT_L_16_Weights.IMAGENET1K_V1)",
          {24, 1024, 16, 4096, kPatchSize, kNumClasses});
}

}  // namespace mutwo::zoo
