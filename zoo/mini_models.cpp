// Test-scale variants of every zoo family: the same family builders (family_builders.hpp) as the
// published models, so the same op kinds, structure and tensor names, with dimensions small enough
// that one fp64 training step runs on a CPU core in milliseconds (the executor's numerics tests
// compare it with PyTorch autograd). Parameter counts are derived by hand in tests/test_mini_models.cpp.
#include <string>
#include <utility>

#include "zoo/family_builders.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::zoo {
namespace {

constexpr int64_t kBatch = 2;
constexpr int64_t kSeqLen = 8;         // BERT, GPT-2
constexpr int64_t kImageSize = 32;     // CNNs: 32 -> 16 after the stem, 1x1 or 4x4 at the last stage
constexpr int64_t kVitImageSize = 16;  // patch 4: 4x4 patches + the class token = 17 tokens
constexpr int64_t kClasses = 10;

struct MiniInfo {
  std::string name;
  std::string family;     // the published family it belongs to
  std::string published;  // the zoo model it shrinks
  std::string description;
  int64_t seq_len = 0;
  int64_t image_size = 0;
};

template <typename Spec>
void add_mini(ModelRegistry& registry, MiniInfo mini,
              ir::Graph (*build)(const std::string&, const Spec&, const ModelConfig&), Spec spec) {
  ModelInfo info;
  info.name = std::move(mini.name);
  info.family = std::move(mini.family);
  info.description = std::move(mini.description);
  info.reference = "test-scale variant of " + mini.published;
  info.default_batch_size = kBatch;
  info.default_seq_len = mini.seq_len;
  info.default_image_size = mini.image_size;
  info.build = [name = info.name, build, spec = std::move(spec)](const ModelConfig& cfg) {
    return build(name, spec, cfg);
  };
  registry.add(std::move(info));
}

// torchvision's V2 structure: a t = 1 stage, repeated stages with residuals, stride-1 and -2 stages.
MobileNetV2Spec mobilenet_v2_mini() {
  MobileNetV2Spec spec;
  spec.setting = {{1, 8, 1, 1}, {6, 16, 2, 2}, {6, 24, 2, 2}, {6, 32, 1, 1}};  // t, c, n, s
  spec.input_channel = 8;
  spec.last_channel = 64;
  spec.width_mult = 1.0;
  spec.round_nearest = 8;
  spec.num_classes = kClasses;
  return spec;
}

// One block of each V3-Large kind: no expansion (residual), RE, RE + SE (kernel 5, residual),
// HS (stride 2), HS + SE (kernel 5, residual).
MobileNetV3Spec mobilenet_v3_mini() {
  MobileNetV3Spec spec;
  spec.setting = {
      {8, 3, 8, 8, false, false, 1},   {8, 3, 32, 16, false, false, 2}, {16, 5, 48, 16, true, false, 1},
      {16, 3, 64, 24, false, true, 2}, {24, 5, 72, 24, true, true, 1},
  };
  spec.last_channel = 64;
  spec.num_classes = kClasses;
  return spec;
}

DlrmSpec dlrm_mini() {
  DlrmSpec spec;
  spec.table_rows = {64, 48, 32};
  spec.sparse_feature_size = 16;
  spec.bottom_mlp = {13, 64, 32, 16};
  spec.top_mlp = {64, 32, 1};  // after the interaction width 16 + 4*3/2 = 22
  return spec;
}

}  // namespace

void register_mini_models(ModelRegistry& registry) {
  add_mini(registry,
           {"bert-mini", "bert", "bert-base",
            "BERT-Base at test scale (MLM + NSP): 2 layers, H 32, 2 heads, vocab 96, 16 positions, 2 token "
            "types, 31,458 parameters",
            kSeqLen, 0},
           build_bert, BertSpec{2, 32, 2, 96, 16, 2});
  add_mini(registry,
           {"gpt2-mini", "gpt2", "gpt2",
            "GPT-2 small at test scale: 2 layers, H 32, 2 heads, vocab 96, 16 positions, 29,056 parameters",
            kSeqLen, 0},
           build_gpt2, Gpt2Spec{2, 32, 2, 96, 16});
  add_mini(registry,
           {"vit-mini", "vit", "vit-b16",
            "ViT-B/16 at test scale: 2 layers, H 32, 2 heads, MLP 64, patch 4, 10 classes, 19,626 parameters",
            0, kVitImageSize},
           build_vit, VitSpec{2, 32, 2, 64, 4, kClasses});
  add_mini(
      registry,
      {"resnet-mini", "resnet", "resnet18",
       "ResNet-18 at test scale: basic blocks [2,2,2,2], widths 4-8-16-32, 10 classes, 45,102 parameters", 0,
       kImageSize},
      build_resnet, ResNetSpec{false, {2, 2, 2, 2}, {4, 8, 16, 32}, 4, kClasses});
  add_mini(registry,
           {"resnet-bottleneck-mini", "resnet", "resnet50",
            "ResNet-50 at test scale: bottlenecks [3,4,6,3], widths 4-8-16-32 (x4 out), 10 classes, 96,782 "
            "parameters",
            0, kImageSize},
           build_resnet, ResNetSpec{true, {3, 4, 6, 3}, {4, 8, 16, 32}, 4, kClasses});
  add_mini(
      registry,
      {"mobilenetv2-mini", "mobilenet", "mobilenet-v2",
       "MobileNetV2 at test scale: inverted residuals 8-16-24-32 (t 1,6,6,6), last 64, 10 classes, 33,354 "
       "parameters",
       0, kImageSize},
      build_mobilenet_v2, mobilenet_v2_mini());
  add_mini(registry,
           {"mobilenetv3-mini", "mobilenet", "mobilenet-v3-large",
            "MobileNetV3-Large at test scale: 5 bnecks (RE, RE+SE, HS, HS+SE) 8-16-24, last 64, 10 classes, "
            "32,434 parameters",
            0, kImageSize},
           build_mobilenet_v3, mobilenet_v3_mini());
  add_mini(
      registry,
      {"dlrm-mini", "dlrm", "dlrm",
       "DLRM at test scale: 3 tables (64, 48, 32 rows) x 16, bottom MLP 13-64-32-16, top 22-64-32-1, 9,393 "
       "parameters",
       0, 0},
      build_dlrm, dlrm_mini());
}

}  // namespace mutwo::zoo
