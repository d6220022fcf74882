// Vision zoo (ResNet, MobileNet) and the kinds it needs: batchnorm2d, max_pool2d,
// adaptive_avg_pool2d, flatten. Reference figures are torchvision's weights tables
// (torchvision/models/{resnet,mobilenetv2,mobilenetv3}.py, Weights.IMAGENET1K_V1.meta:
// "num_params" and "_ops", the latter in GFLOPS = 1e9 multiply-accumulates).
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::zoo;
using mutwo::GraphError;
using mutwo::UnknownNameError;

namespace {

using Shape = std::vector<int64_t>;

const std::vector<std::string> kVisionModels{"resnet18", "resnet50", "resnet101", "mobilenet-v2",
                                             "mobilenet-v3-large"};

Graph build(const std::string& name, int64_t batch, int32_t width = 1, DType dtype = DType::f32) {
  ModelConfig cfg;
  cfg.batch_size = batch;
  cfg.width = width;
  cfg.dtype = dtype;
  return build_model(name, cfg);
}

// fvcore-style multiply-accumulates of conv and linear layers, as torchvision's "_ops": every
// conv2d / linear op's FLOPs are 2 * MACs + one add per output when it has a bias; the bias adds
// are taken out (fvcore counts only the products' accumulation).
int64_t conv_linear_macs(const Graph& g) {
  int64_t flops = 0;
  for (const Op& op : g.ops) {
    if (op.kind != OpKind::conv2d && op.kind != OpKind::linear) continue;
    flops += op.flops;
    if (op.inputs.size() == 3) flops -= element_count(g.tensor(op.outputs[0]).shape);
  }
  return flops / 2;
}

int count_kind(const Graph& g, OpKind kind) {
  return static_cast<int>(
      std::count_if(g.ops.begin(), g.ops.end(), [kind](const Op& op) { return op.kind == kind; }));
}

const Tensor& output_of(const Graph& g, const std::string& op_name, size_t index = 0) {
  for (const Op& op : g.ops) {
    if (op.name == op_name) return g.tensor(op.outputs.at(index));
  }
  FAIL("no op named " << op_name);
  return g.tensors.front();
}

}  // namespace

// ---- kinds ------------------------------------------------------------------------------------

TEST_CASE("batchnorm2d keeps x's shape and saves fp32 per-channel statistics") {
  for (int32_t width : {1, 2}) {
    CAPTURE(width);
    GraphBuilder b("bn", DType::bf16, width, 8);
    TensorId x = b.add_input("x", {8, 64, 56, 56}, TensorRole::input, FuseAxis::dim1);
    TensorId gamma = b.add_weight("bn.weight", {64}, FuseAxis::dim0);
    TensorId beta = b.add_weight("bn.bias", {64}, FuseAxis::dim0);
    auto outs = b.add_op(OpKind::batchnorm2d, "bn", {x, gamma, beta}, {{"eps", 1e-5}});
    REQUIRE(outs.size() == 3);
    // Channel layout: width k concatenates channels, [8, 64k, 56, 56]; statistics [64k].
    CHECK(b.tensor(outs[0]).shape == Shape{8, 64 * width, 56, 56});
    CHECK(b.tensor(outs[0]).dtype == DType::bf16);
    CHECK(b.tensor(outs[1]).name == "bn.mean");
    CHECK(b.tensor(outs[1]).shape == Shape{64 * width});
    CHECK(b.tensor(outs[1]).dtype == DType::f32);  // accumulation type for half inputs
    CHECK(b.tensor(outs[2]).name == "bn.invstd");
    CHECK(b.tensor(outs[2]).dtype == DType::f32);
    // 8 FLOPs per element (as layer norm): 8 * 8*64*56*56 = 12,845,056 per model.
    CHECK(b.graph().ops[0].flops == int64_t{12845056} * width);
  }
  const KindRules* rules = kind_rules(OpKind::batchnorm2d);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::batchnorm2d_backward);
  // derivatives.yaml native_batch_norm: input, weight, save_mean (result1), save_invstd (result2).
  REQUIRE(rules->saved.size() == 4);
  CHECK(rules->saved[0].from == SavedRef::From::input);
  CHECK(rules->saved[1].index == 1);
  CHECK(rules->saved[2].from == SavedRef::From::output);
  CHECK(rules->saved[2].index == 1);
  CHECK(rules->saved[3].index == 2);
}

TEST_CASE("batchnorm2d with gamma of the wrong size names the op and the input") {
  GraphBuilder b("bn", DType::f32, 2, 8);
  TensorId x = b.add_input("x", {8, 64, 7, 7}, TensorRole::input, FuseAxis::dim1);
  TensorId gamma = b.add_weight("g", {64}, FuseAxis::stack);  // [2,64]: wrong layout for batch norm
  TensorId beta = b.add_weight("bt", {64}, FuseAxis::dim0);
  CHECK_THROWS_WITH_AS(b.add_op(OpKind::batchnorm2d, "bn", {x, gamma, beta}),
                       doctest::Contains("op 'bn': input 1 'g' has shape [2,64], expected [128]"),
                       GraphError);
}

TEST_CASE("max_pool2d follows nn.MaxPool2d's output size and returns int64 indices") {
  for (int32_t width : {1, 3}) {
    CAPTURE(width);
    GraphBuilder b("pool", DType::f32, width, 2);
    TensorId x = b.add_input("x", {2, 64, 112, 112}, TensorRole::input, FuseAxis::dim1);
    auto outs = b.add_op(OpKind::max_pool2d, "maxpool", {x},
                         {{"kernel", Shape{3, 3}}, {"stride", Shape{2, 2}}, {"padding", Shape{1, 1}}});
    REQUIRE(outs.size() == 2);
    // ResNet stem: (112 + 2 - 3) / 2 + 1 = 56.
    CHECK(b.tensor(outs[0]).shape == Shape{2, 64 * width, 56, 56});
    CHECK(b.tensor(outs[1]).shape == Shape{2, 64 * width, 56, 56});
    CHECK(b.tensor(outs[1]).dtype == DType::i64);
    CHECK(b.tensor(outs[1]).name == "maxpool.indices");
    // one comparison per window element: 2*64*56*56 outputs * 9 = 3,612,672 per model.
    CHECK(b.graph().ops[0].flops == int64_t{3612672} * width);
  }
  const KindRules* rules = kind_rules(OpKind::max_pool2d);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::max_pool2d_backward);
  // derivatives.yaml max_pool2d_with_indices: self and result1 (indices).
  REQUIRE(rules->saved.size() == 2);
  CHECK(rules->saved[0].from == SavedRef::From::input);
  CHECK(rules->saved[1].from == SavedRef::From::output);
  CHECK(rules->saved[1].index == 1);
}

TEST_CASE("max_pool2d without a kernel attribute is an error naming the op and the key") {
  GraphBuilder b("pool", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 4, 8, 8}, TensorRole::input, FuseAxis::dim1);
  CHECK_THROWS_WITH_AS(b.add_op(OpKind::max_pool2d, "mp", {x}), doctest::Contains("kernel"), GraphError);
  CHECK_THROWS_WITH_AS(b.add_op(OpKind::max_pool2d, "mp", {x}), doctest::Contains("op 'mp'"), GraphError);
}

TEST_CASE("adaptive_avg_pool2d reduces to 1x1 per channel and saves its input") {
  GraphBuilder b("gap", DType::f32, 2, 4);
  TensorId x = b.add_input("x", {4, 2048, 7, 7}, TensorRole::input, FuseAxis::dim1);
  TensorId y = b.op(OpKind::adaptive_avg_pool2d, "avgpool", {x});
  CHECK(b.tensor(y).shape == Shape{4, 2 * 2048, 1, 1});
  // sum of 4*4096*49 elements + one divide per 4*4096 outputs = 802,816 + 16,384.
  CHECK(b.graph().ops[0].flops == 802816 + 16384);
  const KindRules* rules = kind_rules(OpKind::adaptive_avg_pool2d);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::adaptive_avg_pool2d_backward);
  REQUIRE(rules->saved.size() == 1);
  CHECK(rules->saved[0].from == SavedRef::From::input);
}

TEST_CASE("flatten turns the channel layout into the stack layout at width k") {
  SUBCASE("width 1: [B,C,1,1] -> [B,C]") {
    GraphBuilder b("flat", DType::f32, 1, 4);
    TensorId x = b.add_input("x", {4, 512, 1, 1}, TensorRole::input, FuseAxis::dim1);
    CHECK(b.tensor(b.op(OpKind::flatten, "flatten", {x})).shape == Shape{4, 512});
  }
  SUBCASE("width 3: [B,3C,1,1] -> [3,B,C], what a stacked linear reads") {
    GraphBuilder b("flat", DType::f32, 3, 4);
    TensorId x = b.add_input("x", {4, 512, 1, 1}, TensorRole::input, FuseAxis::dim1);
    TensorId f = b.op(OpKind::flatten, "flatten", {x});
    CHECK(b.tensor(f).shape == Shape{3, 4, 512});
    TensorId w = b.add_weight("fc.weight", {10, 512}, FuseAxis::stack);
    CHECK(b.tensor(b.op(OpKind::linear, "fc", {f, w})).shape == Shape{3, 4, 10});
  }
  SUBCASE("VGG's 7x7 map at width 2: [B,2*512,7,7] -> [2,B,25088]") {
    GraphBuilder b("flat", DType::f32, 2, 4);
    TensorId x = b.add_input("x", {4, 512, 7, 7}, TensorRole::input, FuseAxis::dim1);
    CHECK(b.tensor(b.op(OpKind::flatten, "flatten", {x})).shape == Shape{2, 4, 25088});
  }
  SUBCASE("a flat input is refused") {
    GraphBuilder b("flat", DType::f32, 1, 4);
    TensorId x = b.add_input("x", {4, 512}, TensorRole::input, FuseAxis::stack);
    CHECK_THROWS_WITH_AS(b.op(OpKind::flatten, "flatten", {x}), doctest::Contains("op 'flatten'"),
                         GraphError);
  }
  const KindRules* rules = kind_rules(OpKind::flatten);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::flatten_backward);
  CHECK(rules->saved.empty());
}

TEST_CASE(
    "ceil_mode pooling follows ATen's pooling_output_shape, the last window kept only inside the padding") {
  struct Case {
    int64_t in, kernel, stride, padding, ceil_mode, out;
  };
  // GoogLeNet's stem pool: 112 -> 56 either way; 8 with 3/2: floor 3, ceil 4; 5 with 2/2 pad 1: ceil
  // gives 4, but the 4th window would start at 6 >= 5 + 1, inside no input, so 3 (PyTorch 1.13 agrees).
  for (const Case c : {Case{112, 3, 2, 0, 1, 56}, Case{8, 3, 2, 0, 0, 3}, Case{8, 3, 2, 0, 1, 4},
                       Case{5, 2, 2, 1, 1, 3}, Case{6, 3, 2, 1, 1, 4}}) {
    CAPTURE(c.in);
    CAPTURE(c.ceil_mode);
    for (OpKind kind : {OpKind::max_pool2d, OpKind::avg_pool2d}) {
      GraphBuilder b("pool", DType::f32, 2, 1);
      TensorId x = b.add_input("x", {1, 4, c.in, c.in}, TensorRole::input, FuseAxis::dim1);
      TensorId y = b.op(kind, "pool", {x},
                        {{"kernel", Shape{c.kernel, c.kernel}},
                         {"stride", Shape{c.stride, c.stride}},
                         {"padding", Shape{c.padding, c.padding}},
                         {"ceil_mode", c.ceil_mode}});
      CHECK(b.tensor(y).shape == Shape{1, 8, c.out, c.out});
    }
  }
  GraphBuilder b("pool", DType::f32, 1, 1);
  TensorId x = b.add_input("x", {1, 4, 8, 8}, TensorRole::input, FuseAxis::dim1);
  CHECK_THROWS_WITH_AS(
      b.op(OpKind::avg_pool2d, "p", {x}, {{"kernel", Shape{2, 2}}, {"ceil_mode", int64_t{2}}}),
      doctest::Contains("op 'p': attribute 'ceil_mode' = 2, expected 0 or 1"), GraphError);
  // A padding a file may hold whose padded size overflows int64: an error naming the op, no wrap.
  const int64_t huge = std::numeric_limits<int64_t>::max();
  CHECK_THROWS_WITH_AS(
      b.op(OpKind::max_pool2d, "p", {x}, {{"kernel", Shape{huge, huge}}, {"padding", Shape{huge / 2, 1}}}),
      doctest::Contains("overflows"), GraphError);
}

TEST_CASE("avg_pool2d: one add per window element and a divide per output; saves its input") {
  GraphBuilder b("avg", DType::f32, 2, 4);
  TensorId x = b.add_input("x", {4, 128, 56, 56}, TensorRole::input, FuseAxis::dim1);
  TensorId y = b.op(OpKind::avg_pool2d, "transition.pool", {x}, {{"kernel", Shape{2, 2}}});
  CHECK(b.tensor(y).shape == Shape{4, 256, 28, 28});
  // 4*256*28*28 = 802,816 outputs, times 4 window adds + 1 divide.
  CHECK(b.graph().ops[0].flops == int64_t{802816} * 5);
  const KindRules* rules = kind_rules(OpKind::avg_pool2d);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::avg_pool2d_backward);
  REQUIRE(rules->saved.size() == 1);
  CHECK(rules->saved[0].from == SavedRef::From::input);
}

TEST_CASE("concat_channels adds the channels of maps of one size, at width k per model") {
  GraphBuilder b("cat", DType::f32, 3, 2);
  TensorId x1 = b.add_input("x1", {2, 64, 56, 56}, TensorRole::input, FuseAxis::dim1);
  TensorId x2 = b.add_input("x2", {2, 32, 56, 56}, TensorRole::input, FuseAxis::dim1);
  TensorId y = b.op(OpKind::concat_channels, "block.cat", {x1, x2});
  CHECK(b.tensor(y).shape == Shape{2, 3 * 96, 56, 56});
  TensorId small = b.add_input("x3", {2, 32, 28, 28}, TensorRole::input, FuseAxis::dim1);
  CHECK_THROWS_WITH_AS(
      b.op(OpKind::concat_channels, "bad", {x1, small}),
      doctest::Contains("op 'bad': input 1 'x3' is [2,96,28,28] fp32, expected fp32 [2,3*C,56,56]"),
      GraphError);
  const KindRules* rules = kind_rules(OpKind::concat_channels);
  REQUIRE(rules);
  CHECK(rules->saved.empty());  // derivatives.yaml (cat): sizes only
}

TEST_CASE("slice_channels and channel_shuffle keep each model's channels, and refuse what does not fit") {
  GraphBuilder b("shuffle", DType::f32, 2, 4);
  TensorId x = b.add_input("x", {4, 116, 28, 28}, TensorRole::input, FuseAxis::dim1);
  TensorId half = b.op(OpKind::slice_channels, "x2", {x}, {{"start", int64_t{58}}, {"length", int64_t{58}}});
  CHECK(b.tensor(half).shape == Shape{4, 116, 28, 28});  // 2 models x 58 channels
  CHECK(b.tensor(b.op(OpKind::channel_shuffle, "shuffle", {x}, {{"groups", int64_t{2}}})).shape ==
        Shape{4, 232, 28, 28});
  CHECK_THROWS_WITH_AS(
      b.op(OpKind::slice_channels, "bad", {x}, {{"start", int64_t{100}}, {"length", int64_t{58}}}),
      doctest::Contains("op 'bad': attributes 'start' = 100 and 'length' = 58 do not fit the 116 "
                        "channels per model"),
      GraphError);
  CHECK_THROWS_WITH_AS(b.op(OpKind::channel_shuffle, "bad", {x}, {{"groups", int64_t{3}}}),
                       doctest::Contains("op 'bad': attribute 'groups' = 3 does not divide the 116 channels"),
                       GraphError);
  for (OpKind kind : {OpKind::slice_channels, OpKind::channel_shuffle}) {
    const KindRules* rules = kind_rules(kind);
    REQUIRE(rules);
    CHECK(rules->saved.empty());
  }
}

TEST_CASE("permute between NCHW and NHWC: at width k from the channel layout to the stack layout and back") {
  for (int32_t width : {1, 2}) {
    CAPTURE(width);
    GraphBuilder b("perm", DType::f32, width, 2);
    TensorId x = b.add_input("x", {2, 96, 56, 56}, TensorRole::input, FuseAxis::dim1);
    TensorId nhwc = b.op(OpKind::permute, "to_nhwc", {x}, {{"dims", Shape{0, 2, 3, 1}}});
    Shape expected{2, 56, 56, 96};
    if (width > 1) expected.insert(expected.begin(), width);
    CHECK(b.tensor(nhwc).shape == expected);
    TensorId back = b.op(OpKind::permute, "to_nchw", {nhwc}, {{"dims", Shape{0, 3, 1, 2}}});
    CHECK(b.tensor(back).shape == Shape{2, 96 * width, 56, 56});
    CHECK(b.graph().ops[0].flops == 0);
  }
  GraphBuilder b("perm", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 96, 56, 56}, TensorRole::input, FuseAxis::dim1);
  CHECK_THROWS_WITH_AS(b.op(OpKind::permute, "p", {x}, {{"dims", Shape{0, 1, 3, 2}}}),
                       doctest::Contains("op 'p': attribute 'dims' = [0,1,3,2], expected [0,2,3,1]"),
                       GraphError);
  const KindRules* rules = kind_rules(OpKind::permute);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::permute_backward);
  CHECK(rules->saved.empty());
}

// ---- models -----------------------------------------------------------------------------------

TEST_CASE("parameter counts equal torchvision's num_params") {
  // torchvision weights tables, IMAGENET1K_V1 meta "num_params".
  CHECK(parameter_count(build("resnet18", 1)) == 11689512);
  CHECK(parameter_count(build("resnet50", 1)) == 25557032);
  CHECK(parameter_count(build("resnet101", 1)) == 44549160);
  CHECK(parameter_count(build("mobilenet-v2", 1)) == 3504872);
  CHECK(parameter_count(build("mobilenet-v3-large", 1)) == 5483032);
}

TEST_CASE("conv and linear multiply-accumulates per sample are within 2 % of torchvision's GFLOPS") {
  // torchvision meta "_ops" (GFLOPS, i.e. 1e9 MACs of conv and linear layers at 224x224).
  // Ours, bias adds excluded (fvcore counts products only; including them changes no figure by
  // more than 0.002 %): resnet18 1.81407, resnet50 4.08921, resnet101 7.80140, mobilenet-v2 0.30078,
  // mobilenet-v3-large 0.21659 GMACs.
  struct Ref {
    const char* name;
    double gmacs;
  };
  const Ref refs[] = {{"resnet18", 1.814},
                      {"resnet50", 4.089},
                      {"resnet101", 7.801},
                      {"mobilenet-v2", 0.301},
                      {"mobilenet-v3-large", 0.217}};
  for (const Ref& ref : refs) {
    CAPTURE(ref.name);
    const double ours = static_cast<double>(conv_linear_macs(build(ref.name, 1))) / 1e9;
    CHECK(ours == doctest::Approx(ref.gmacs).epsilon(0.02));
  }
  // The count scales with the batch: batch 4 is exactly 4x batch 1 (no per-batch constants).
  CHECK(conv_linear_macs(build("resnet18", 4)) == 4 * conv_linear_macs(build("resnet18", 1)));
}

TEST_CASE("resnet structure follows torchvision layer for layer") {
  // resnet18: stem conv + 8 basic blocks * 2 convs + 3 downsamples (layer2..4) = 20 convs.
  // resnet50: stem + 16 bottlenecks * 3 + 4 downsamples (layer1 changes 64 -> 256) = 53.
  // resnet101: stem + 33 bottlenecks * 3 + 4 = 104. Every conv is followed by a batch norm.
  const Graph r18 = build("resnet18", 2);
  const Graph r50 = build("resnet50", 2);
  const Graph r101 = build("resnet101", 2);
  CHECK(count_kind(r18, OpKind::conv2d) == 20);
  CHECK(count_kind(r18, OpKind::batchnorm2d) == 20);
  CHECK(count_kind(r50, OpKind::conv2d) == 53);
  CHECK(count_kind(r50, OpKind::batchnorm2d) == 53);
  CHECK(count_kind(r101, OpKind::conv2d) == 104);
  CHECK(count_kind(r18, OpKind::add) == 8);  // one residual add per block
  CHECK(count_kind(r101, OpKind::add) == 33);
  // 224 -> conv1/2 112 -> maxpool/2 56 -> layer2..4 28, 14, 7.
  CHECK(output_of(r18, "maxpool").shape == Shape{2, 64, 56, 56});
  CHECK(output_of(r50, "layer4.2.relu3").shape == Shape{2, 2048, 7, 7});
  CHECK(output_of(r50, "fc").shape == Shape{2, 1000});
  CHECK(output_of(r50, "loss").shape == Shape{});
  CHECK(output_of(r50, "loss").role == TensorRole::loss);
}

TEST_CASE("mobilenet structure follows torchvision layer for layer") {
  const Graph v2 = build("mobilenet-v2", 2);
  const Graph v3 = build("mobilenet-v3-large", 2);
  // V2: stem + first block (no expansion: dw, project) 2 + 16 blocks * 3 + last conv = 52 convs;
  // residual adds where stride 1 and in == out: repeats beyond the first of each stage,
  // 1 + 2 + 3 + 2 + 2 = 10.
  CHECK(count_kind(v2, OpKind::conv2d) == 52);
  CHECK(count_kind(v2, OpKind::add) == 10);
  CHECK(count_kind(v2, OpKind::relu6) == 35);  // stem + 17 dw + 16 expansions + last conv
  CHECK(output_of(v2, "features.18.2").shape == Shape{2, 1280, 7, 7});
  // V3-Large: 8 bnecks use squeeze-excitation (one mul each, 2 convs with bias each).
  CHECK(count_kind(v3, OpKind::mul) == 8);
  CHECK(count_kind(v3, OpKind::hardsigmoid) == 8);
  // SE squeeze = _make_divisible(72 // 4, 8): int(18 + 4) // 8 * 8 = 16 < 0.9 * 18, so 24.
  CHECK(output_of(v3, "features.4.block.2.fc1").shape == Shape{2, 24, 1, 1});
  // _make_divisible(960 // 4, 8) = 240.
  CHECK(output_of(v3, "features.15.block.2.fc1").shape == Shape{2, 240, 1, 1});
  CHECK(output_of(v3, "features.16.2").shape == Shape{2, 960, 7, 7});
  CHECK(output_of(v3, "classifier.0").shape == Shape{2, 1280});
  CHECK(count_kind(v2, OpKind::dropout) == 1);
  CHECK(count_kind(v3, OpKind::dropout) == 1);
}

TEST_CASE("defaults: batch 64 for resnets, 128 for mobilenets, 224x224 images, int64 labels") {
  const ModelInfo& r50 = builtin_models().find("resnet50");
  CHECK(r50.default_batch_size == 64);
  CHECK(r50.default_image_size == 224);
  CHECK(r50.reference.find("ResNet50_Weights") != std::string::npos);
  CHECK(builtin_models().find("mobilenet-v2").default_batch_size == 128);
  CHECK(builtin_models().find("mobilenet-v3-large").reference.find("MobileNet_V3_Large_Weights") !=
        std::string::npos);
  const Graph g = build_model("mobilenet-v3-large", ModelConfig{});
  CHECK(g.batch_size == 128);
  CHECK(g.tensors[0].shape == Shape{128, 3, 224, 224});
  CHECK(g.tensors[1].shape == Shape{128});
  CHECK(g.tensors[1].dtype == DType::i64);
  CHECK(g.tensors[1].role == TensorRole::label);
}

TEST_CASE("a smaller image size shrinks every feature map") {
  ModelConfig cfg;
  cfg.batch_size = 2;
  cfg.image_size = 128;
  const Graph g = build_model("resnet50", cfg);
  // 128 -> 64 -> 32 -> 16, 8, 4.
  CHECK(output_of(g, "layer4.2.relu3").shape == Shape{2, 2048, 4, 4});
  CHECK(parameter_count(g) == 25557032);  // parameters do not depend on the image size
}

TEST_CASE("at width 2 a model has 2x parameters and forward FLOPs and the same ops") {
  for (const std::string& name : kVisionModels) {
    CAPTURE(name);
    const Graph one = build(name, 4, 1);
    const Graph two = build(name, 4, 2);
    CHECK(two.width == 2);
    CHECK(two.ops.size() == one.ops.size());
    CHECK(parameter_count(two) == 2 * parameter_count(one));
    CHECK(flops_in_phase(two, Phase::forward) == 2 * flops_in_phase(one, Phase::forward));
    // Channel layout for images, stack layout for labels, logits and the per-model loss.
    CHECK(two.tensors[0].shape == Shape{4, 6, 224, 224});
    CHECK(two.tensors[1].shape == Shape{2, 4});
    CHECK(output_of(two, "loss").shape == Shape{2});
    CHECK(output_of(two, "flatten").shape.at(0) == 2);
  }
}

TEST_CASE("vision graphs validate at fp32 and bf16") {
  for (const std::string& name : kVisionModels) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      CAPTURE(name);
      CAPTURE(dtype_name(dtype));
      const Graph g = build(name, 2, 2, dtype);
      CHECK_NOTHROW(validate(g));
      CHECK(g.tensors[0].dtype == dtype);
      CHECK(output_of(g, "avgpool").dtype == dtype);
    }
  }
  // bf16 weights take 2 bytes each: resnet18's 11,689,512 parameters in 23,379,024 bytes.
  CHECK(parameter_bytes(build("resnet18", 1, 1, DType::bf16)) == 2 * int64_t{11689512});
}

TEST_CASE("an unknown model name lists the valid names") {
  CHECK_THROWS_WITH_AS(builtin_models().find("resnet-50"), doctest::Contains("unknown model 'resnet-50'"),
                       UnknownNameError);
  CHECK_THROWS_WITH_AS(builtin_models().find("resnet-50"),
                       doctest::Contains("resnet18, resnet50, resnet101, mobilenet-v2, mobilenet-v3-large"),
                       UnknownNameError);
}
