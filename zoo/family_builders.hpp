#pragma once
// The zoo's family builders, each parameterised by a spec of every size-determining dimension, so
// that the published models (model_registry.cpp's zoo) and their test-scale variants
// (mini_models.cpp) are built by the same code: same op kinds, same structure, same tensor names.
// Dimensions that do not change the size (dropout p, norm eps, activation kinds) stay family
// constants. Each builder takes the model name (for error messages) and a config with its defaults
// already filled in (build_model does that); specs are checked and a bad one throws Error.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::zoo {

// Throws Error "model 'x': spec field 'hidden' = 0 must be >= 1"; the builders check their specs.
void require_positive_dim(const std::string& model, std::string_view field, int64_t value);

// BertForPreTraining (bert.cpp): BertConfig's sizes; the intermediate size is 4 * hidden.
struct BertSpec {
  int64_t layers = 0;           // num_hidden_layers
  int64_t hidden = 0;           // hidden_size
  int64_t heads = 0;            // num_attention_heads, divides hidden
  int64_t vocab_size = 0;       // word embeddings = tied MLM decoder
  int64_t max_positions = 0;    // max_position_embeddings, bounds the sequence length
  int64_t type_vocab_size = 0;  // token types (segments)
};
ir::Graph build_bert(const std::string& name, const BertSpec& spec, const ModelConfig& config);

// GPT2LMHeadModel (gpt2.cpp): GPT2Config's sizes; the MLP is 4 * hidden wide.
struct Gpt2Spec {
  int64_t layers = 0;         // n_layer
  int64_t hidden = 0;         // n_embd
  int64_t heads = 0;          // n_head, divides hidden
  int64_t vocab_size = 0;     // wte = tied lm_head
  int64_t max_positions = 0;  // n_positions, bounds the sequence length
};
ir::Graph build_gpt2(const std::string& name, const Gpt2Spec& spec, const ModelConfig& config);

// torchvision VisionTransformer (vit.cpp).
struct VitSpec {
  int64_t layers = 0;
  int64_t hidden = 0;  // hidden_dim
  int64_t heads = 0;   // num_heads, divides hidden
  int64_t mlp = 0;     // mlp_dim
  int64_t patch_size = 0;
  int64_t num_classes = 0;
};
ir::Graph build_vit(const std::string& name, const VitSpec& spec, const ModelConfig& config);

// torchvision ResNet (resnet.cpp): block type, blocks per stage and stage widths.
struct ResNetSpec {
  bool bottleneck = false;          // Bottleneck (expansion 4), else BasicBlock (expansion 1)
  std::array<int, 4> blocks{};      // per stage (layer1..layer4)
  std::array<int64_t, 4> planes{};  // per stage; a stage outputs planes * expansion channels
  int64_t stem_channels = 0;        // conv1's output (torchvision's inplanes, 64)
  int64_t num_classes = 0;
};
ir::Graph build_resnet(const std::string& name, const ResNetSpec& spec, const ModelConfig& config);

// torchvision MobileNetV2 (mobilenet.cpp): MobileNetV2(num_classes, width_mult,
// inverted_residual_setting, round_nearest), with the stem and last widths before width_mult.
struct MobileNetV2Stage {
  int64_t expand_ratio = 0;  // t
  int64_t channels = 0;      // c, before width_mult
  int64_t repeats = 0;       // n
  int64_t stride = 0;        // s, of the first block
};
struct MobileNetV2Spec {
  std::vector<MobileNetV2Stage> setting;
  int64_t input_channel = 0;  // 32 in torchvision, before width_mult
  int64_t last_channel = 0;   // 1280 in torchvision, before max(1, width_mult)
  double width_mult = 1.0;
  int64_t round_nearest = 8;
  int64_t num_classes = 0;
};
ir::Graph build_mobilenet_v2(const std::string& name, const MobileNetV2Spec& spec, const ModelConfig& config);

// torchvision MobileNetV3 (mobilenet.cpp): its InvertedResidualConfig list (channels already
// adjusted by width_mult), last_channel and classes; the last conv is 6 x the last block's output.
struct MobileNetV3Block {
  int64_t input_channels = 0;
  int64_t kernel = 0;
  int64_t expanded_channels = 0;
  int64_t out_channels = 0;
  bool use_se = false;     // squeeze-excitation with hardsigmoid
  bool hardswish = false;  // "HS", else "RE"
  int64_t stride = 0;
};
struct MobileNetV3Spec {
  std::vector<MobileNetV3Block> setting;
  int64_t last_channel = 0;  // classifier hidden width (1280 for large)
  int64_t num_classes = 0;
};
ir::Graph build_mobilenet_v3(const std::string& name, const MobileNetV3Spec& spec, const ModelConfig& config);

// facebookresearch/dlrm DLRM_Net (dlrm.cpp): dot interaction without self-interaction; the top MLP
// is given after the interaction width, which dlrm_s_pytorch.py prepends.
struct DlrmSpec {
  std::vector<int64_t> table_rows;  // one embedding table per sparse feature
  int64_t sparse_feature_size = 0;  // embedding dim = the bottom MLP's output
  std::vector<int64_t> bottom_mlp;  // dense features first, e.g. 13-512-256-64-16
  std::vector<int64_t> top_mlp;     // after the interaction width, e.g. 512-256-1
};
ir::Graph build_dlrm(const std::string& name, const DlrmSpec& spec, const ModelConfig& config);

}  // namespace mutwo::zoo
