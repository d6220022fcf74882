// ResNet-18/50/101 (He et al., "Deep Residual Learning for Image Recognition", CVPR 2016), layer for
// layer as torchvision.models.resnet (v1.5: the stride of a bottleneck sits on its 3x3 conv).
// Tensor names follow torchvision's state_dict keys.
#include <fmt/format.h>

#include <array>
#include <string>

#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "zoo/family_builders.hpp"
#include "zoo/layers.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::zoo {
namespace {

constexpr int64_t kNumClasses = 1000;
constexpr int64_t kInplanes = 64;                             // torchvision ResNet's stem width
constexpr std::array<int64_t, 4> kPlanes{64, 128, 256, 512};  // layer1..layer4
constexpr double kBatchNormEps = 1e-5;                        // nn.BatchNorm2d default

std::vector<int64_t> pair(int64_t v) {
  return {v, v};
}

// conv (no bias, padding (kernel-1)/2) -> batchnorm2d, the unit every ResNet layer is made of,
// e.g. conv "layer1.0.conv1" with bn "layer1.0.bn1", or "layer1.0.downsample.0" with ".1".
ir::TensorId conv_bn(ir::GraphBuilder& b, ir::TensorId x, const std::string& conv_name,
                     const std::string& bn_name, int64_t out_channels, int64_t kernel, int64_t stride) {
  const int64_t in_channels = b.tensor(x).shape[1] / b.width();
  const ir::TensorId w =
      b.add_weight(conv_name + ".weight", {out_channels, in_channels, kernel, kernel}, ir::FuseAxis::dim0);
  ir::Attributes conv_attrs{{"stride", pair(stride)}, {"padding", pair((kernel - 1) / 2)}};
  const ir::TensorId y = b.op(ir::OpKind::conv2d, conv_name, {x, w}, std::move(conv_attrs));
  const ir::TensorId gamma = b.add_weight(bn_name + ".weight", {out_channels}, ir::FuseAxis::dim0);
  const ir::TensorId beta = b.add_weight(bn_name + ".bias", {out_channels}, ir::FuseAxis::dim0);
  return b.op(ir::OpKind::batchnorm2d, bn_name, {y, gamma, beta}, {{"eps", kBatchNormEps}});
}

// The shortcut: identity, or conv1x1(stride) -> bn when the shape changes.
ir::TensorId shortcut(ir::GraphBuilder& b, ir::TensorId x, const std::string& block, int64_t out_channels,
                      int64_t stride) {
  const int64_t in_channels = b.tensor(x).shape[1] / b.width();
  if (stride == 1 && in_channels == out_channels) return x;
  return conv_bn(b, x, block + ".downsample.0", block + ".downsample.1", out_channels, 1, stride);
}

// BasicBlock (expansion 1): conv3x3(stride) bn relu conv3x3 bn, + shortcut, relu.
ir::TensorId basic_block(ir::GraphBuilder& b, ir::TensorId x, const std::string& block, int64_t planes,
                         int64_t stride) {
  ir::TensorId y = conv_bn(b, x, block + ".conv1", block + ".bn1", planes, 3, stride);
  y = b.op(ir::OpKind::relu, block + ".relu1", {y});
  y = conv_bn(b, y, block + ".conv2", block + ".bn2", planes, 3, 1);
  const ir::TensorId identity = shortcut(b, x, block, planes, stride);
  y = b.op(ir::OpKind::add, block + ".add", {y, identity});
  return b.op(ir::OpKind::relu, block + ".relu2", {y});
}

// Bottleneck (expansion 4): conv1x1 bn relu conv3x3(stride) bn relu conv1x1 bn, + shortcut, relu.
ir::TensorId bottleneck(ir::GraphBuilder& b, ir::TensorId x, const std::string& block, int64_t planes,
                        int64_t stride) {
  ir::TensorId y = conv_bn(b, x, block + ".conv1", block + ".bn1", planes, 1, 1);
  y = b.op(ir::OpKind::relu, block + ".relu1", {y});
  y = conv_bn(b, y, block + ".conv2", block + ".bn2", planes, 3, stride);
  y = b.op(ir::OpKind::relu, block + ".relu2", {y});
  y = conv_bn(b, y, block + ".conv3", block + ".bn3", planes * 4, 1, 1);
  const ir::TensorId identity = shortcut(b, x, block, planes * 4, stride);
  y = b.op(ir::OpKind::add, block + ".add", {y, identity});
  return b.op(ir::OpKind::relu, block + ".relu3", {y});
}

}  // namespace

ir::Graph build_resnet(const std::string& name, const ResNetSpec& spec, const ModelConfig& cfg) {
  for (size_t stage = 0; stage < spec.blocks.size(); ++stage) {
    require_positive_dim(name, fmt::format("blocks[{}]", stage), spec.blocks[stage]);
    require_positive_dim(name, fmt::format("planes[{}]", stage), spec.planes[stage]);
  }
  require_positive_dim(name, "stem_channels", spec.stem_channels);
  require_positive_dim(name, "num_classes", spec.num_classes);
  ir::GraphBuilder b(name, cfg.dtype, cfg.width, cfg.batch_size);
  const int64_t batch = cfg.batch_size;
  const ir::TensorId images = b.add_input("images", {batch, 3, cfg.image_size, cfg.image_size},
                                          ir::TensorRole::input, ir::FuseAxis::dim1);
  const ir::TensorId labels =
      b.add_input("labels", {batch}, ir::TensorRole::label, ir::FuseAxis::stack, ir::DType::i64);

  // Stem: conv7x7/2 (padding 3) bn relu, maxpool3x3/2 (padding 1).
  ir::TensorId x = conv_bn(b, images, "conv1", "bn1", spec.stem_channels, 7, 2);
  x = b.op(ir::OpKind::relu, "relu", {x});
  x = b.op(ir::OpKind::max_pool2d, "maxpool", {x},
           {{"kernel", pair(3)}, {"stride", pair(2)}, {"padding", pair(1)}});

  for (size_t stage = 0; stage < spec.planes.size(); ++stage) {
    for (int i = 0; i < spec.blocks[stage]; ++i) {
      const int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      const std::string block = fmt::format("layer{}.{}", stage + 1, i);
      x = spec.bottleneck ? bottleneck(b, x, block, spec.planes[stage], stride)
                          : basic_block(b, x, block, spec.planes[stage], stride);
    }
  }

  x = b.op(ir::OpKind::adaptive_avg_pool2d, "avgpool", {x});
  x = b.op(ir::OpKind::flatten, "flatten", {x});
  const ir::TensorId logits = linear_layer(b, x, "fc", spec.num_classes);
  b.add_op(ir::OpKind::cross_entropy, "loss", {logits, labels});
  return std::move(b).finish();
}

namespace {

void add_resnet(ModelRegistry& registry, const std::string& name, const std::string& description,
                const std::string& reference, ResNetSpec spec) {
  ModelInfo info;
  info.name = name;
  info.family = "resnet";
  info.description = description;
  info.reference = reference;
  info.default_batch_size = 64;
  info.default_image_size = 224;
  info.build = [name, spec](const ModelConfig& cfg) { return build_resnet(name, spec, cfg); };
  registry.add(std::move(info));
}

}  // namespace

void register_resnet_models(ModelRegistry& registry) {
  add_resnet(registry, "resnet18",
             "ResNet-18: basic blocks [2,2,2,2], 11.7M parameters, ImageNet 1000 classes",
             "torchvision.models.resnet18 (ResNet18_Weights.IMAGENET1K_V1)",
             {false, {2, 2, 2, 2}, kPlanes, kInplanes, kNumClasses});
  add_resnet(registry, "resnet50",
             "ResNet-50: bottlenecks [3,4,6,3], 25.6M parameters, ImageNet 1000 classes",
             "torchvision.models.resnet50 (ResNet50_Weights.IMAGENET1K_V1)",
             {true, {3, 4, 6, 3}, kPlanes, kInplanes, kNumClasses});
  add_resnet(registry, "resnet101",
             "ResNet-101: bottlenecks [3,4,23,3], 44.5M parameters, ImageNet 1000 classes",
             "torchvision.models.resnet101 (ResNet101_Weights.IMAGENET1K_V1)",
             {true, {3, 4, 23, 3}, kPlanes, kInplanes, kNumClasses});
}

}  // namespace mutwo::zoo
