// Horizontal fusion (HFTA): a width-1 forward graph replayed at width k equals the model built at width k.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>

#include "io/graph_json.hpp"
#include "ir/conv_lowering.hpp"
#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "transforms/fusion.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::transforms;
using namespace mutwo::zoo;
using mutwo::GraphError;

namespace {
using Shape = std::vector<int64_t>;

// Two convs with bias, a residual add and a relu: image [2,3,8,8] (dim1), conv weights (dim0).
Graph conv_block(int32_t width) {
  GraphBuilder b("conv-block", DType::f32, width, 2);
  TensorId x = b.add_input("image", {2, 3, 8, 8}, TensorRole::input, FuseAxis::dim1);
  TensorId w1 = b.add_weight("conv1.weight", {4, 3, 3, 3}, FuseAxis::dim0);
  TensorId b1 = b.add_weight("conv1.bias", {4}, FuseAxis::dim0);
  TensorId w2 = b.add_weight("conv2.weight", {4, 4, 3, 3}, FuseAxis::dim0);
  const Attributes pad1{{"padding", std::vector<int64_t>{1, 1}}};
  TensorId h = b.op(OpKind::conv2d, "conv1", {x, w1, b1}, pad1);
  TensorId a = b.op(OpKind::relu, "relu1", {h});
  TensorId y = b.op(OpKind::conv2d, "conv2", {a, w2}, pad1);
  TensorId r = b.op(OpKind::add, "residual", {y, h});
  b.op(OpKind::relu, "relu2", {r});
  return std::move(b).finish();
}

// A transformer-style MLP block with a classification loss: tokens [4,6,8] -> layernorm -> linear ->
// relu -> dropout -> linear -> add a [1,6,5] position bias -> cross entropy against int64 labels [4,6].
Graph mlp_block(int32_t width) {
  GraphBuilder b("mlp-block", DType::f32, width, 4);
  TensorId x = b.add_input("x", {4, 6, 8}, TensorRole::input, FuseAxis::stack);
  TensorId gamma = b.add_weight("ln.weight", {8}, FuseAxis::stack);
  TensorId beta = b.add_weight("ln.bias", {8}, FuseAxis::stack);
  TensorId w1 = b.add_weight("fc1.weight", {32, 8}, FuseAxis::stack);
  TensorId b1 = b.add_weight("fc1.bias", {32}, FuseAxis::stack);
  TensorId w2 = b.add_weight("fc2.weight", {5, 32}, FuseAxis::stack);
  TensorId pos = b.add_weight("pos", {1, 6, 5}, FuseAxis::stack);  // [1,T,C], as torchvision ViT's
  TensorId n = b.op(OpKind::layernorm, "ln", {x, gamma, beta}, {{"eps", 1e-5}});
  TensorId h = b.op(OpKind::linear, "fc1", {n, w1, b1});
  TensorId a = b.op(OpKind::relu, "act", {h});
  TensorId d = b.op(OpKind::dropout, "drop", {a}, {{"p", 0.1}});
  TensorId z = b.op(OpKind::linear, "fc2", {d, w2});
  TensorId logits = b.op(OpKind::add, "add_pos", {z, pos});
  TensorId labels = b.add_input("labels", {4, 6}, TensorRole::label, FuseAxis::stack, DType::i64);
  b.add_op(OpKind::cross_entropy, "loss", {logits, labels});
  return std::move(b).finish();
}

// The HFTA contract: the fused graph is the natively built width-k graph, with k x parameters
// and FLOPs, the same ops, names, roles and dtypes, and the native build's attributes (those the
// kinds derive at width k included: a fused 1x1 convolution's lowering).
void check_fusion_matches_native(const Graph& one, const Graph& native_k, int32_t k) {
  const Graph fused = horizontal_fuse(one, k);
  CHECK_NOTHROW(validate(fused));
  CHECK(fused.width == k);
  CHECK(fused.name == one.name + " x" + std::to_string(k));
  CHECK(fused.batch_size == one.batch_size);
  CHECK(parameter_count(fused) == k * parameter_count(one));
  CHECK(flops_in_phase(fused, Phase::forward) == k * flops_in_phase(one, Phase::forward));
  REQUIRE(fused.ops.size() == one.ops.size());
  REQUIRE(fused.tensors.size() == native_k.tensors.size());
  int mismatches = 0;
  for (size_t i = 0; i < fused.tensors.size(); ++i) {
    const Tensor& f = fused.tensors[i];
    const Tensor& n = native_k.tensors[i];
    if (f.shape != n.shape || f.dtype != n.dtype || f.role != n.role || f.name != n.name || f.width != k) {
      if (++mismatches <= 3) {
        FAIL_CHECK("tensor " << i << " '" << f.name << "' " << shape_string(f.shape) << " vs native '"
                             << n.name << "' " << shape_string(n.shape));
      }
    }
  }
  CHECK(mismatches == 0);
  int op_mismatches = 0;
  for (size_t i = 0; i < fused.ops.size(); ++i) {
    const Op& f = fused.ops[i];
    if (f.kind != one.ops[i].kind || f.name != one.ops[i].name || f.attrs != native_k.ops[i].attrs ||
        f.flops != native_k.ops[i].flops || f.width != k) {
      if (++op_mismatches <= 3) FAIL_CHECK("op " << i << " '" << f.name << "' differs from the native build");
    }
  }
  CHECK(op_mismatches == 0);
}
}  // namespace

TEST_CASE("fused conv block: images on dim 1, conv weights and bias on dim 0 (grouped conv)") {
  const Graph one = conv_block(1);
  check_fusion_matches_native(one, conv_block(3), 3);
  const Graph fused = horizontal_fuse(one, 3);
  // image [2,3,8,8] -> [2,9,8,8]; conv1.weight [4,3,3,3] -> [12,3,3,3]; conv1.bias [4] -> [12].
  CHECK(fused.tensors[0].shape == Shape{2, 9, 8, 8});
  CHECK(fused.tensors[1].shape == Shape{12, 3, 3, 3});
  CHECK(fused.tensors[2].shape == Shape{12});
  // conv1 output [2,4,8,8] per model -> [2,12,8,8] with groups 3.
  CHECK(fused.tensor(fused.ops[0].outputs[0]).shape == Shape{2, 12, 8, 8});
}

TEST_CASE("a fused 1x1 convolution is recorded to run as a batched GEMM; a 3x3 or an ungrouped one is not") {
  // A 3x3 conv, a 1x1 stride-2 projection with padding 0, and a 1x1 one with padding 1.
  GraphBuilder b("lowering", DType::f32, 1, 2);
  const TensorId x = b.add_input("image", {2, 4, 6, 6}, TensorRole::input, FuseAxis::dim1);
  const TensorId w3 = b.add_weight("conv.weight", {4, 4, 3, 3}, FuseAxis::dim0);
  const TensorId w1 = b.add_weight("proj.weight", {8, 4, 1, 1}, FuseAxis::dim0);
  const TensorId w1p = b.add_weight("padded.weight", {4, 8, 1, 1}, FuseAxis::dim0);
  const TensorId h = b.op(OpKind::conv2d, "conv", {x, w3}, {{"padding", Shape{1, 1}}});
  const TensorId p = b.op(OpKind::conv2d, "proj", {h, w1}, {{"stride", Shape{2, 2}}});
  b.op(OpKind::conv2d, "padded", {p, w1p}, {{"padding", Shape{1, 1}}});
  const Graph one = std::move(b).finish();
  const auto gemm = [](const Graph& g) {
    std::vector<bool> out;
    for (const Op& op : g.ops) out.push_back(conv_runs_as_batched_gemm(op));
    return out;
  };
  CHECK(gemm(one) == std::vector<bool>{false, false, false});  // groups 1: cuDNN runs these well
  const Graph fused = horizontal_fuse(one, 4);
  CHECK(gemm(fused) == std::vector<bool>{false, true, false});
  CHECK(std::get<std::string>(fused.ops[1].attrs.at("lowering")) == "batched-gemm");
  // Its temporaries: x [2, 16, 6, 6], weight [32, 4, 1, 1], y [2, 32, 3, 3]: the weight over 2 images
  // (2 * 32 * 4 = 256 elements) and the stride-2 sample of x (2 * 16 * 3 * 3 = 288), 4 bytes each.
  CHECK(fused.ops[1].workspace_bytes == (256 + 288) * 4);
  CHECK(fused.ops[0].workspace_bytes == 0);
  // A deep 1x1 layer at small images stays cuDNN's: 4 models' weights over 2 images (2 * 1024 * 64 =
  // 131,072 elements) would outweigh x (2 * 256 * 2 * 2 = 2,048) and y (8,192).
  GraphBuilder deep("deep", DType::f32, 4, 2);
  const TensorId dx = deep.add_input("image", {2, 64, 2, 2}, TensorRole::input, FuseAxis::dim1);
  const TensorId dw = deep.add_weight("proj.weight", {256, 64, 1, 1}, FuseAxis::dim0);
  deep.op(OpKind::conv2d, "proj", {dx, dw});
  const Graph deep_graph = std::move(deep).finish();
  CHECK_FALSE(conv_runs_as_batched_gemm(deep_graph.ops[0]));
  CHECK(deep_graph.ops[0].workspace_bytes == 0);
  // A graph read from a file keeps what it was built with: without the attribute (a schedule of an
  // earlier lease) the op runs through cuDNN.
  Graph old = fused;
  old.ops[1].attrs.erase("lowering");
  const nlohmann::json text = nlohmann::json::parse(mutwo::io::graph_to_json(old).dump());
  CHECK(gemm(mutwo::io::graph_from_json(text)) == std::vector<bool>{false, false, false});
  // The attribute on a convolution that cannot run so, or of another value, is refused by name.
  Graph bad = fused;
  bad.ops[0].attrs["lowering"] = std::string("batched-gemm");
  CHECK_THROWS_WITH_AS(
      validate(bad),
      doctest::Contains(
          "attribute 'lowering' = 'batched-gemm' needs a 1x1 kernel, padding 0, "
          "dilation 1, more than one group and a weight no larger than its activations over the "
          "images; weight [16,4,3,3] with 4 groups"),
      GraphError);
  bad = fused;
  bad.ops[1].attrs["lowering"] = std::string("cudnn");
  CHECK_THROWS_WITH_AS(validate(bad), "op 'proj': attribute 'lowering' must be the string 'batched-gemm'",
                       GraphError);
}

TEST_CASE("a parameter broadcast onto a channel-layout map is concatenated on its channel dim") {
  // ConvNeXt: permute to NHWC, linear, permute back, times the layer scale gamma [C,1,1]; then a
  // [1,C,1,1] bias, and an image added to the conv output; the layer scale of a stacked [B,H,W,C]
  // map stays stacked.
  GraphBuilder b("scale", DType::f32, 1, 2);
  TensorId x = b.add_input("image", {2, 3, 4, 4}, TensorRole::input, FuseAxis::dim1);
  TensorId w = b.add_weight("conv.weight", {3, 3, 1, 1}, FuseAxis::dim0);
  TensorId y = b.op(OpKind::conv2d, "conv", {x, w});
  TensorId nhwc = b.op(OpKind::permute, "to_nhwc", {y}, {{"dims", Shape{0, 2, 3, 1}}});
  TensorId fc = b.add_weight("fc.weight", {5, 3}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc", {nhwc, fc});
  TensorId hw_scale = b.add_weight("nhwc_scale", {1, 1, 1, 5}, FuseAxis::stack);  // over B, H, W
  h = b.op(OpKind::mul, "nhwc.scaled", {h, hw_scale});
  TensorId nchw =
      b.op(OpKind::relu, "act", {b.op(OpKind::permute, "to_nchw", {h}, {{"dims", Shape{0, 3, 1, 2}}})});
  TensorId gamma = b.add_weight("layer_scale", {5, 1, 1}, FuseAxis::stack);
  TensorId bias = b.add_weight("bias", {1, 5, 1, 1}, FuseAxis::stack);
  TensorId z = b.op(OpKind::add, "shifted", {b.op(OpKind::mul, "scaled", {nchw, gamma}), bias});
  TensorId proj = b.add_weight("proj.weight", {3, 5, 1, 1}, FuseAxis::dim0);
  b.op(OpKind::add, "residual", {b.op(OpKind::conv2d, "proj", {z, proj}), x});
  const Graph fused = horizontal_fuse(std::move(b).finish(), 3);
  auto named = [&](std::string_view name) {
    const auto it = std::find_if(fused.tensors.begin(), fused.tensors.end(),
                                 [&](const mutwo::ir::Tensor& t) { return t.name == name; });
    REQUIRE(it != fused.tensors.end());
    return it->id;
  };
  auto shape_of = [&](std::string_view name) { return fused.tensor(named(name)).shape; };
  CHECK(shape_of("nhwc_scale") == Shape{3, 1, 1, 1, 5});
  CHECK(shape_of("layer_scale") == Shape{15, 1, 1});
  CHECK(shape_of("bias") == Shape{1, 15, 1, 1});
  CHECK(shape_of("image") == Shape{2, 9, 4, 4});
  CHECK(fused.tensor(fused.ops.back().outputs[0]).shape == Shape{2, 9, 4, 4});
  CHECK(fused_layout_of_activation(fused, named("to_nhwc")) == FuseAxis::stack);
  CHECK(fused_layout_of_activation(fused, named("act")) == FuseAxis::dim1);
}

TEST_CASE("fused MLP block: tokens, labels and linear/layernorm weights are stacked") {
  const Graph one = mlp_block(1);
  check_fusion_matches_native(one, mlp_block(4), 4);
  const Graph fused = horizontal_fuse(one, 4);
  CHECK(fused.tensors[0].shape == Shape{4, 4, 6, 8});  // x [4,6,8] -> [k,4,6,8]
  const Op& loss = fused.ops.back();
  CHECK(fused.tensor(loss.outputs[0]).shape == Shape{4});  // one loss per model
  CHECK(fused.tensor(loss.inputs[1]).shape == Shape{4, 4, 6});
  CHECK(fused.tensor(loss.inputs[1]).dtype == DType::i64);
}

TEST_CASE("fused dlrm equals dlrm built at width k") {
  ModelConfig one_cfg;
  one_cfg.batch_size = 64;
  ModelConfig k_cfg = one_cfg;
  k_cfg.width = 3;
  const Graph one = build_model("dlrm", one_cfg);
  const Graph native = build_model("dlrm", k_cfg);
  check_fusion_matches_native(one, native, 3);
  // 3 x 540,677,217 parameters.
  CHECK(parameter_count(horizontal_fuse(one, 3)) == 1622031651);
}

TEST_CASE("fusing at width 1 reproduces the graph") {
  const Graph one = mlp_block(1);
  const Graph same = horizontal_fuse(one, 1);
  CHECK(same.name == one.name);
  REQUIRE(same.tensors.size() == one.tensors.size());
  for (size_t i = 0; i < one.tensors.size(); ++i) {
    CHECK(same.tensors[i].shape == one.tensors[i].shape);
    CHECK(same.tensors[i].name == one.tensors[i].name);
    CHECK(same.tensors[i].role == one.tensors[i].role);
  }
  CHECK(flops_in_phase(same, Phase::forward) == flops_in_phase(one, Phase::forward));
}

TEST_CASE("fusion keeps original tensor names even when they differ from the builder's") {
  Graph one = mlp_block(1);
  one.tensors[static_cast<size_t>(one.ops[1].outputs[0])].name = "hidden";
  const Graph fused = horizontal_fuse(one, 2);
  CHECK(fused.tensor(fused.ops[1].outputs[0]).name == "hidden");
}

TEST_CASE("fusion refuses what it cannot fuse, naming the field") {
  SUBCASE("an already fused graph") {
    const Graph two = mlp_block(2);
    CHECK_THROWS_WITH_AS(horizontal_fuse(two, 2),
                         doctest::Contains("graph 'mlp-block' has field 'width' = 2"), GraphError);
  }
  SUBCASE("a width below 1") {
    CHECK_THROWS_WITH_AS(horizontal_fuse(mlp_block(1), 0), doctest::Contains("width 0 must be >= 1"),
                         GraphError);
  }
  SUBCASE("an opaque op") {
    Graph g = mlp_block(1);
    Op op;
    op.id = static_cast<OpId>(g.ops.size());
    op.name = "imported";
    op.kind = OpKind::opaque;
    op.inputs = {g.ops[2].outputs[0]};
    g.ops.push_back(op);
    link(g);
    CHECK_THROWS_WITH_AS(
        horizontal_fuse(g, 2),
        doctest::Contains("op 7 'imported' of graph 'mlp-block' has field 'kind' = 'opaque'"), GraphError);
  }
  SUBCASE("a backward op") {
    Graph g = mlp_block(1);
    Tensor grad;
    grad.id = static_cast<TensorId>(g.tensors.size());
    grad.name = "act.grad";
    grad.shape = g.tensor(g.ops[2].outputs[0]).shape;
    grad.bytes = element_count(grad.shape) * 4;
    grad.role = TensorRole::temporary;
    g.tensors.push_back(grad);
    Op op;
    op.id = static_cast<OpId>(g.ops.size());
    op.name = "act_backward";
    op.kind = OpKind::relu_backward;
    op.phase = Phase::backward;
    op.forward_of = 2;
    op.inputs = {g.ops[2].outputs[0], g.ops[2].outputs[0]};  // as shaped as the gradient and what relu saves
    op.outputs = {grad.id};
    g.ops.push_back(op);
    link(g);
    CHECK_THROWS_WITH_AS(horizontal_fuse(g, 2),
                         doctest::Contains("op 7 'act_backward' of graph 'mlp-block' has "
                                           "field 'phase' = backward"),
                         GraphError);
  }
  SUBCASE("a leaf read in two layouts") {
    GraphBuilder b("clash", DType::f32, 1, 2);
    TensorId x = b.add_input("image", {2, 3, 4, 4}, TensorRole::input, FuseAxis::dim1);
    TensorId w = b.add_weight("w", {3, 3, 1, 1}, FuseAxis::dim0);
    b.op(OpKind::conv2d, "conv", {x, w});
    TensorId fc = b.add_weight("fc.weight", {5, 4}, FuseAxis::stack);
    b.op(OpKind::linear, "fc", {x, fc});  // an image read as a stacked linear operand
    const Graph g = std::move(b).finish();
    CHECK_THROWS_WITH_AS(horizontal_fuse(g, 2),
                         doctest::Contains("tensor 0 'image' is read in layout 'dim1'"), GraphError);
  }
}

// Every zoo model registered when this runs: skip those whose build still throws (a family whose kinds
// are not written yet), fuse the rest at k = 2 and compare with the zoo's own width-2 build.
TEST_CASE("every buildable zoo model fused at width 2 equals its native width-2 build") {
  int fused_models = 0;
  for (const ModelInfo& info : builtin_models().models()) {
    ModelConfig cfg;
    cfg.batch_size = 2;
    ModelConfig cfg2 = cfg;
    cfg2.width = 2;
    Graph one, two;
    try {
      one = build_model(info.name, cfg);
      two = build_model(info.name, cfg2);
    } catch (const mutwo::Error& e) {
      MESSAGE("skipping '" << info.name << "': " << e.what());
      continue;
    }
    INFO("model " << info.name);
    // A native width-k build may name its graph "<name> x2" or "<name>"; compare the rest.
    check_fusion_matches_native(one, two, 2);
    ++fused_models;
  }
  CHECK(fused_models >= 1);  // dlrm at least
}

// The zoo (docs/ARCHITECTURE.md "The Graph"): bert, gpt2, vit, resnet, mobilenet, dlrm families, 12 models in
// all, so the test above covers every family.
TEST_CASE("the zoo registers at least six families and twelve models") {
  std::set<std::string> families;
  for (const ModelInfo& info : builtin_models().models()) families.insert(info.family);
  CHECK(families.size() >= 6);
  CHECK(builtin_models().models().size() >= 12);
}
