// Graph IR: builder, shape inference of the core kinds, validation errors naming op/tensor and field.
#include <doctest/doctest.h>

#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"

using namespace mutwo::ir;
using mutwo::GraphError;

namespace {
// x[4,8] -> linear(8->16, bias) -> relu -> linear(16->2) ; 2 models when width 2.
Graph tiny_mlp(int32_t width) {
  GraphBuilder b("mlp", DType::f32, width, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId w1 = b.add_weight("fc1.weight", {16, 8}, FuseAxis::stack);
  TensorId b1 = b.add_weight("fc1.bias", {16}, FuseAxis::stack);
  TensorId w2 = b.add_weight("fc2.weight", {2, 16}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc1", {x, w1, b1});
  TensorId a = b.op(OpKind::relu, "relu", {h});
  b.op(OpKind::linear, "fc2", {a, w2});
  return std::move(b).finish();
}
}  // namespace

TEST_CASE("builder infers linear shapes and FLOPs and links producers and consumers") {
  Graph g = tiny_mlp(1);
  REQUIRE(g.ops.size() == 3);
  // fc1: 2 * 4 rows * 8 in * 16 out = 1024 MACs*2, + bias 4*16 = 64 -> 1088.
  CHECK(g.ops[0].flops == 1088);
  CHECK(g.tensor(g.ops[0].outputs[0]).shape == std::vector<int64_t>{4, 16});
  CHECK(g.tensor(g.ops[0].outputs[0]).bytes == 4 * 16 * 4);
  CHECK(g.ops[0].bytes_read == (4 * 8 + 16 * 8 + 16) * 4);
  const Tensor& h = g.tensor(g.ops[0].outputs[0]);
  CHECK(h.producer == 0);
  CHECK(h.consumers == std::vector<OpId>{1});
  CHECK(parameter_count(g) == 16 * 8 + 16 + 2 * 16);
}

TEST_CASE("fused width-2 linear stacks models and doubles FLOPs and parameters") {
  Graph one = tiny_mlp(1);
  Graph two = tiny_mlp(2);
  CHECK(two.tensor(two.ops[0].outputs[0]).shape == std::vector<int64_t>{2, 4, 16});
  CHECK(parameter_count(two) == 2 * parameter_count(one));
  CHECK(flops_in_phase(two, Phase::forward) == 2 * flops_in_phase(one, Phase::forward));
}

TEST_CASE("conv2d output size and MACs follow nn.Conv2d") {
  GraphBuilder b("conv", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 3, 224, 224}, TensorRole::input, FuseAxis::dim1);
  TensorId w = b.add_weight("conv1.weight", {64, 3, 7, 7}, FuseAxis::dim0);
  TensorId y = b.op(OpKind::conv2d, "conv1", {x, w},
                    {{"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{3, 3}}});
  // (224 + 6 - 7) / 2 + 1 = 112; MACs = 2*64*112*112 outputs * 3*7*7 = 236,027,904.
  CHECK(b.tensor(y).shape == std::vector<int64_t>{2, 64, 112, 112});
  CHECK(b.graph().ops[0].flops == 2 * int64_t{236027904});
}

TEST_CASE("a mismatched shape is an error naming the op and the input") {
  GraphBuilder b("bad", DType::f32);
  TensorId x = b.add_input("x", {4, 7}, TensorRole::input, FuseAxis::stack);
  TensorId w = b.add_weight("w", {16, 8}, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(
      b.op(OpKind::linear, "fc", {x, w}),
      doctest::Contains("op 'fc': input 0 'x' shape [4,7] does not end in the weight's in_features 8"),
      GraphError);
}

TEST_CASE("validation names the first offending tensor or op and the field") {
  SUBCASE("bytes inconsistent with shape") {
    Graph g = tiny_mlp(1);
    g.tensors[1].bytes += 4;
    CHECK_THROWS_WITH_AS(validate(g), doctest::Contains("tensor 1 'fc1.weight': field 'bytes' = 516"),
                         GraphError);
  }
  SUBCASE("negative dimension") {
    Graph g = tiny_mlp(1);
    g.tensors[0].shape[0] = -4;
    CHECK_THROWS_WITH_AS(
        validate(g), doctest::Contains("tensor 0 'x': field 'shape' has negative dimension -4"), GraphError);
  }
  SUBCASE("input produced later in program order is a cycle") {
    Graph g = tiny_mlp(1);
    std::swap(g.ops[0].inputs[0], g.ops[0].inputs[0]);
    g.ops[0].inputs[0] = g.ops[2].outputs[0];  // fc1 reads fc2's output
    link(g);
    CHECK_THROWS_WITH_AS(validate(g), doctest::Contains("op 0 'fc1': input"), GraphError);
    CHECK_THROWS_WITH_AS(validate(g), doctest::Contains("cycle"), GraphError);
  }
  SUBCASE("dangling tensor id") {
    Graph g = tiny_mlp(1);
    g.ops[1].inputs[0] = 99;
    CHECK_THROWS_WITH_AS(validate(g), doctest::Contains("op 1 'relu': field 'inputs' refers to tensor 99"),
                         GraphError);
  }
  SUBCASE("output shape disagrees with the kind's inference") {
    Graph g = tiny_mlp(1);
    Tensor& h = g.tensors[static_cast<size_t>(g.ops[0].outputs[0])];
    h.shape = {4, 15};
    h.bytes = 4 * 15 * 4;
    CHECK_THROWS_WITH_AS(validate(g), doctest::Contains("op 0 'fc1': output 0"), GraphError);
  }
  SUBCASE("stale consumer list") {
    Graph g = tiny_mlp(1);
    g.tensors[0].consumers.push_back(2);
    CHECK_THROWS_WITH_AS(validate(g), doctest::Contains("tensor 0 'x': field 'consumers'"), GraphError);
  }
}
