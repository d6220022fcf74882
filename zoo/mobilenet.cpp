// MobileNetV2 (Sandler et al., CVPR 2018) and MobileNetV3-Large (Howard et al., ICCV 2019), layer for
// layer as torchvision.models.mobilenetv2 / mobilenetv3 at width_mult 1.0. Tensor names follow
// torchvision's state_dict keys. The builders take torchvision's constructor arguments
// (family_builders.hpp), so a narrower setting builds the same structure at test scale.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "zoo/family_builders.hpp"
#include "zoo/layers.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::zoo {
namespace {

constexpr int64_t kNumClasses = 1000;
constexpr double kDropoutP = 0.2;         // both classifiers
constexpr double kV2BatchNormEps = 1e-5;  // nn.BatchNorm2d default
constexpr double kV3BatchNormEps = 1e-3;  // partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)

// torchvision.models._utils._make_divisible: round to the nearest multiple of `divisor`, at least
// `divisor`, and never more than 10 % below v.
int64_t make_divisible(double v, int64_t divisor) {
  int64_t new_v =
      std::max(divisor, static_cast<int64_t>(v + static_cast<double>(divisor) / 2.0) / divisor * divisor);
  if (static_cast<double>(new_v) < 0.9 * v) new_v += divisor;
  return new_v;
}

std::vector<int64_t> pair(int64_t v) {
  return {v, v};
}

int64_t channels(const ir::GraphBuilder& b, ir::TensorId x) {
  return b.tensor(x).shape[1] / b.width();
}

// Conv2dNormActivation: conv (no bias, padding (kernel-1)/2) named prefix.0, batchnorm prefix.1,
// then the activation (if any) prefix.2.
ir::TensorId conv_bn_act(ir::GraphBuilder& b, ir::TensorId x, const std::string& prefix, int64_t out_channels,
                         int64_t kernel, int64_t stride, int64_t groups, std::optional<ir::OpKind> activation,
                         double eps) {
  const int64_t in_channels = channels(b, x);
  const ir::TensorId w = b.add_weight(
      prefix + ".0.weight", {out_channels, in_channels / groups, kernel, kernel}, ir::FuseAxis::dim0);
  ir::Attributes conv_attrs{
      {"stride", pair(stride)}, {"padding", pair((kernel - 1) / 2)}, {"groups", groups}};
  ir::TensorId y = b.op(ir::OpKind::conv2d, prefix + ".0", {x, w}, std::move(conv_attrs));
  const ir::TensorId gamma = b.add_weight(prefix + ".1.weight", {out_channels}, ir::FuseAxis::dim0);
  const ir::TensorId beta = b.add_weight(prefix + ".1.bias", {out_channels}, ir::FuseAxis::dim0);
  y = b.op(ir::OpKind::batchnorm2d, prefix + ".1", {y, gamma, beta}, {{"eps", eps}});
  if (activation) y = b.op(*activation, prefix + ".2", {y});
  return y;
}

// Conv2d 1x1 with bias (the squeeze-excitation "fc" layers).
ir::TensorId conv1x1_bias(ir::GraphBuilder& b, ir::TensorId x, const std::string& name,
                          int64_t out_channels) {
  const ir::TensorId w =
      b.add_weight(name + ".weight", {out_channels, channels(b, x), 1, 1}, ir::FuseAxis::dim0);
  const ir::TensorId bias = b.add_weight(name + ".bias", {out_channels}, ir::FuseAxis::dim0);
  return b.op(ir::OpKind::conv2d, name, {x, w, bias});
}

struct Inputs {
  ir::TensorId images = ir::kNoId;
  ir::TensorId labels = ir::kNoId;
};

Inputs image_inputs(ir::GraphBuilder& b, const ModelConfig& cfg) {
  Inputs in;
  in.images = b.add_input("images", {cfg.batch_size, 3, cfg.image_size, cfg.image_size},
                          ir::TensorRole::input, ir::FuseAxis::dim1);
  in.labels =
      b.add_input("labels", {cfg.batch_size}, ir::TensorRole::label, ir::FuseAxis::stack, ir::DType::i64);
  return in;
}

// ---- MobileNetV2 ---------------------------------------------------------------------------

// InvertedResidual(inp, oup, stride, expand_ratio): [pw expand relu6] dw3x3 relu6, pw-linear, bn,
// + input when stride 1 and inp == oup.
ir::TensorId inverted_residual_v2(ir::GraphBuilder& b, ir::TensorId x, const std::string& block,
                                  int64_t out_channels, int64_t stride, int64_t expand_ratio) {
  const int64_t in_channels = channels(b, x);
  const int64_t hidden = in_channels * expand_ratio;  // int(round(inp * expand_ratio)), integral here
  int layer = 0;
  ir::TensorId y = x;
  if (expand_ratio != 1) {
    y = conv_bn_act(b, y, fmt::format("{}.conv.{}", block, layer++), hidden, 1, 1, 1, ir::OpKind::relu6,
                    kV2BatchNormEps);
  }
  y = conv_bn_act(b, y, fmt::format("{}.conv.{}", block, layer++), hidden, 3, stride, hidden,
                  ir::OpKind::relu6, kV2BatchNormEps);
  const std::string project = fmt::format("{}.conv.{}", block, layer++);
  const ir::TensorId w = b.add_weight(project + ".weight", {out_channels, hidden, 1, 1}, ir::FuseAxis::dim0);
  y = b.op(ir::OpKind::conv2d, project, {y, w});
  const std::string bn = fmt::format("{}.conv.{}", block, layer);
  const ir::TensorId gamma = b.add_weight(bn + ".weight", {out_channels}, ir::FuseAxis::dim0);
  const ir::TensorId beta = b.add_weight(bn + ".bias", {out_channels}, ir::FuseAxis::dim0);
  y = b.op(ir::OpKind::batchnorm2d, bn, {y, gamma, beta}, {{"eps", kV2BatchNormEps}});
  if (stride == 1 && in_channels == out_channels) y = b.op(ir::OpKind::add, block + ".add", {y, x});
  return y;
}

}  // namespace

ir::Graph build_mobilenet_v2(const std::string& name, const MobileNetV2Spec& spec, const ModelConfig& cfg) {
  if (spec.setting.empty()) throw Error(fmt::format("model '{}': empty inverted_residual_setting", name));
  for (const MobileNetV2Stage& st : spec.setting) {
    require_positive_dim(name, "expand_ratio", st.expand_ratio);
    require_positive_dim(name, "channels", st.channels);
    require_positive_dim(name, "repeats", st.repeats);
    require_positive_dim(name, "stride", st.stride);
  }
  require_positive_dim(name, "input_channel", spec.input_channel);
  require_positive_dim(name, "last_channel", spec.last_channel);
  require_positive_dim(name, "round_nearest", spec.round_nearest);
  require_positive_dim(name, "num_classes", spec.num_classes);
  if (!(spec.width_mult > 0.0))
    throw Error(fmt::format("model '{}': width_mult {} must be > 0", name, spec.width_mult));
  ir::GraphBuilder b(name, cfg.dtype, cfg.width, cfg.batch_size);
  const Inputs in = image_inputs(b, cfg);
  const double wm = spec.width_mult;
  const int64_t input_channel =
      make_divisible(static_cast<double>(spec.input_channel) * wm, spec.round_nearest);
  const int64_t last_channel =
      make_divisible(static_cast<double>(spec.last_channel) * std::max(1.0, wm), spec.round_nearest);

  int feature = 0;
  ir::TensorId x = conv_bn_act(b, in.images, fmt::format("features.{}", feature++), input_channel, 3, 2, 1,
                               ir::OpKind::relu6, kV2BatchNormEps);
  for (const MobileNetV2Stage& st : spec.setting) {
    const int64_t out = make_divisible(static_cast<double>(st.channels) * wm, spec.round_nearest);
    for (int64_t i = 0; i < st.repeats; ++i) {
      x = inverted_residual_v2(b, x, fmt::format("features.{}", feature++), out, i == 0 ? st.stride : 1,
                               st.expand_ratio);
    }
  }
  x = conv_bn_act(b, x, fmt::format("features.{}", feature), last_channel, 1, 1, 1, ir::OpKind::relu6,
                  kV2BatchNormEps);

  x = b.op(ir::OpKind::adaptive_avg_pool2d, "avgpool", {x});
  x = b.op(ir::OpKind::flatten, "flatten", {x});
  x = dropout_layer(b, x, "classifier.0", kDropoutP);
  const ir::TensorId logits = linear_layer(b, x, "classifier.1", spec.num_classes);
  b.add_op(ir::OpKind::cross_entropy, "loss", {logits, in.labels});
  return std::move(b).finish();
}

// ---- MobileNetV3 ---------------------------------------------------------------------------

namespace {

// torchvision.ops.SqueezeExcitation(input, squeeze, scale_activation=Hardsigmoid):
// avgpool -> fc1 (1x1 conv + bias) -> relu -> fc2 -> hardsigmoid -> scale * input.
ir::TensorId squeeze_excitation(ir::GraphBuilder& b, ir::TensorId x, const std::string& prefix,
                                int64_t squeeze) {
  const int64_t c = channels(b, x);
  ir::TensorId s = b.op(ir::OpKind::adaptive_avg_pool2d, prefix + ".avgpool", {x});
  s = conv1x1_bias(b, s, prefix + ".fc1", squeeze);
  s = b.op(ir::OpKind::relu, prefix + ".activation", {s});
  s = conv1x1_bias(b, s, prefix + ".fc2", c);
  s = b.op(ir::OpKind::hardsigmoid, prefix + ".scale_activation", {s});
  return b.op(ir::OpKind::mul, prefix + ".mul", {x, s});
}

// InvertedResidual(cnf): [expand 1x1 act] dw kxk act [SE] project 1x1 bn, + input when stride 1 and
// in == out.
ir::TensorId inverted_residual_v3(ir::GraphBuilder& b, ir::TensorId x, const std::string& block,
                                  const MobileNetV3Block& cnf) {
  const ir::OpKind act = cnf.hardswish ? ir::OpKind::hardswish : ir::OpKind::relu;
  int layer = 0;
  ir::TensorId y = x;
  if (cnf.expanded_channels != cnf.input_channels) {
    y = conv_bn_act(b, y, fmt::format("{}.block.{}", block, layer++), cnf.expanded_channels, 1, 1, 1, act,
                    kV3BatchNormEps);
  }
  y = conv_bn_act(b, y, fmt::format("{}.block.{}", block, layer++), cnf.expanded_channels, cnf.kernel,
                  cnf.stride, cnf.expanded_channels, act, kV3BatchNormEps);
  if (cnf.use_se) {
    const int64_t squeeze = make_divisible(static_cast<double>(cnf.expanded_channels / 4), 8);
    y = squeeze_excitation(b, y, fmt::format("{}.block.{}", block, layer++), squeeze);
  }
  y = conv_bn_act(b, y, fmt::format("{}.block.{}", block, layer), cnf.out_channels, 1, 1, 1, std::nullopt,
                  kV3BatchNormEps);
  if (cnf.stride == 1 && cnf.input_channels == cnf.out_channels)
    y = b.op(ir::OpKind::add, block + ".add", {y, x});
  return y;
}

}  // namespace

ir::Graph build_mobilenet_v3(const std::string& name, const MobileNetV3Spec& spec, const ModelConfig& cfg) {
  if (spec.setting.empty()) throw Error(fmt::format("model '{}': empty inverted_residual_setting", name));
  for (const MobileNetV3Block& cnf : spec.setting) {
    require_positive_dim(name, "input_channels", cnf.input_channels);
    require_positive_dim(name, "kernel", cnf.kernel);
    require_positive_dim(name, "expanded_channels", cnf.expanded_channels);
    require_positive_dim(name, "out_channels", cnf.out_channels);
    require_positive_dim(name, "stride", cnf.stride);
  }
  require_positive_dim(name, "last_channel", spec.last_channel);
  require_positive_dim(name, "num_classes", spec.num_classes);
  ir::GraphBuilder b(name, cfg.dtype, cfg.width, cfg.batch_size);
  const Inputs in = image_inputs(b, cfg);

  int feature = 0;
  ir::TensorId x =
      conv_bn_act(b, in.images, fmt::format("features.{}", feature++), spec.setting[0].input_channels, 3, 2,
                  1, ir::OpKind::hardswish, kV3BatchNormEps);
  for (const MobileNetV3Block& cnf : spec.setting) {
    if (cnf.input_channels != channels(b, x)) {
      throw Error(fmt::format("model '{}': block features.{} expects {} input channels, gets {}", name,
                              feature, cnf.input_channels, channels(b, x)));
    }
    x = inverted_residual_v3(b, x, fmt::format("features.{}", feature++), cnf);
  }
  const int64_t lastconv_output_channels = 6 * spec.setting.back().out_channels;
  x = conv_bn_act(b, x, fmt::format("features.{}", feature), lastconv_output_channels, 1, 1, 1,
                  ir::OpKind::hardswish, kV3BatchNormEps);

  x = b.op(ir::OpKind::adaptive_avg_pool2d, "avgpool", {x});
  x = b.op(ir::OpKind::flatten, "flatten", {x});
  x = linear_layer(b, x, "classifier.0", spec.last_channel);
  x = b.op(ir::OpKind::hardswish, "classifier.1", {x});
  x = dropout_layer(b, x, "classifier.2", kDropoutP);
  const ir::TensorId logits = linear_layer(b, x, "classifier.3", spec.num_classes);
  b.add_op(ir::OpKind::cross_entropy, "loss", {logits, in.labels});
  return std::move(b).finish();
}

namespace {

// torchvision's mobilenet_v2 arguments: inverted_residual_setting, 32 -> 1280 channels, width 1.0.
MobileNetV2Spec mobilenet_v2_spec() {
  MobileNetV2Spec spec;
  spec.setting = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};  // t, c, n, s
  spec.input_channel = 32;
  spec.last_channel = 1280;
  spec.width_mult = 1.0;
  spec.round_nearest = 8;
  spec.num_classes = kNumClasses;
  return spec;
}

// _mobilenet_v3_conf("mobilenet_v3_large"), width_mult 1.0 (every channel count is already a
// multiple of 8, so adjust_channels leaves it), dilation 1.
MobileNetV3Spec mobilenet_v3_large_spec() {
  MobileNetV3Spec spec;
  spec.setting = {
      {16, 3, 16, 16, false, false, 1},  {16, 3, 64, 24, false, false, 2},  // C1
      {24, 3, 72, 24, false, false, 1},  {24, 5, 72, 40, true, false, 2},   // C2
      {40, 5, 120, 40, true, false, 1},  {40, 5, 120, 40, true, false, 1},
      {40, 3, 240, 80, false, true, 2},  // C3
      {80, 3, 200, 80, false, true, 1},  {80, 3, 184, 80, false, true, 1},
      {80, 3, 184, 80, false, true, 1},  {80, 3, 480, 112, true, true, 1},
      {112, 3, 672, 112, true, true, 1}, {112, 5, 672, 160, true, true, 2},  // C4
      {160, 5, 960, 160, true, true, 1}, {160, 5, 960, 160, true, true, 1},
  };
  spec.last_channel = make_divisible(1280.0, 8);  // adjust_channels(1280)
  spec.num_classes = kNumClasses;
  return spec;
}

ModelInfo mobilenet_info(const std::string& name, const std::string& description,
                         const std::string& reference) {
  ModelInfo info;
  info.name = name;
  info.family = "mobilenet";
  info.description = description;
  info.reference = reference;
  info.default_batch_size = 128;
  info.default_image_size = 224;
  return info;
}

}  // namespace

void register_mobilenet_models(ModelRegistry& registry) {
  ModelInfo v2 = mobilenet_info("mobilenet-v2",
                                "MobileNetV2: inverted residuals with linear bottlenecks, 3.5M parameters, "
                                "ImageNet 1000 classes",
                                "torchvision.models.mobilenet_v2 (MobileNet_V2_Weights.IMAGENET1K_V1)");
  v2.build = [name = v2.name, spec = mobilenet_v2_spec()](const ModelConfig& cfg) {
    return build_mobilenet_v2(name, spec, cfg);
  };
  registry.add(std::move(v2));

  ModelInfo v3 =
      mobilenet_info("mobilenet-v3-large",
                     "MobileNetV3-Large: inverted residuals with squeeze-excitation and hardswish, "
                     "5.5M parameters, ImageNet 1000 classes",
                     "torchvision.models.mobilenet_v3_large (MobileNet_V3_Large_Weights.IMAGENET1K_V1)");
  v3.build = [name = v3.name, spec = mobilenet_v3_large_spec()](const ModelConfig& cfg) {
    return build_mobilenet_v3(name, spec, cfg);
  };
  registry.add(std::move(v3));
}

}  // namespace mutwo::zoo
