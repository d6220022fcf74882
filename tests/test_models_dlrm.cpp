// DLRM kinds (embedding_bag, concat, dot_interaction, bce_with_logits) and the `dlrm` zoo model.
#include <doctest/doctest.h>

#include <array>
#include <numeric>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"
#include "ir/kind_rules.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::zoo;
using mutwo::GraphError;

namespace {
using Shape = std::vector<int64_t>;

const Op* find_op(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// Criteo Kaggle category counts (facebookresearch/dlrm's Kaggle preprocessing).
constexpr std::array<int64_t, 26> kRows = {1460,  583,  10131227, 2202608, 305, 24,     12517,   633,   3,
                                           93145, 5683, 8351593,  3194,    27,  14992,  5461306, 10,    5652,
                                           2173,  4,    7046547,  18,      15,  286181, 105,     142572};
}  // namespace

TEST_CASE("embedding_bag sums L rows of W[V,D] per bag: [B,L] -> [B,D], stacked at width k") {
  for (int32_t k : {1, 3}) {
    GraphBuilder b("bag", DType::f32, k, 8);
    TensorId idx = b.add_input("idx", {8, 5}, TensorRole::input, FuseAxis::stack, DType::i64);
    TensorId w = b.add_weight("w", {1000, 16}, FuseAxis::stack);
    TensorId y = b.op(OpKind::embedding_bag, "bag", {idx, w});
    // width 1: [8,16]; width 3: [3,8,16].
    CHECK(b.tensor(y).shape == (k == 1 ? Shape{8, 16} : Shape{3, 8, 16}));
    CHECK(b.tensor(y).dtype == DType::f32);
    // k * 8 bags * 5 indices * 16 adds = 640 k.
    CHECK(b.graph().ops[0].flops == 640 * k);
  }
  const KindRules* rules = kind_rules(OpKind::embedding_bag);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::embedding_bag_backward);
  REQUIRE(rules->saved.size() == 1);  // indices only
  CHECK(rules->saved[0].from == SavedRef::From::input);
  CHECK(rules->saved[0].index == 0);
}

TEST_CASE("embedding_bag refuses float indices, naming the op and the input") {
  GraphBuilder b("bag", DType::f32);
  TensorId idx = b.add_input("idx", {8, 1}, TensorRole::input, FuseAxis::stack);
  TensorId w = b.add_weight("w", {10, 4}, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(b.op(OpKind::embedding_bag, "bag", {idx, w}),
                       doctest::Contains("op 'bag': input 0 'idx' (indices) has dtype fp32, expected int64"),
                       GraphError);
}

TEST_CASE("concat joins the last dim of any number of inputs and saves nothing") {
  for (int32_t k : {1, 2}) {
    GraphBuilder b("cat", DType::f32, k, 4);
    TensorId a = b.add_input("a", {4, 3}, TensorRole::input, FuseAxis::stack);
    TensorId c = b.add_input("c", {4, 5}, TensorRole::input, FuseAxis::stack);
    TensorId e = b.add_input("e", {4, 7}, TensorRole::input, FuseAxis::stack);
    TensorId y = b.op(OpKind::concat, "cat", {a, c, e});
    // 3 + 5 + 7 = 15 on the last dim.
    CHECK(b.tensor(y).shape == (k == 1 ? Shape{4, 15} : Shape{2, 4, 15}));
  }
  CHECK(kind_rules(OpKind::concat)->saved.empty());
  CHECK(kind_rules(OpKind::concat)->backward_kind == OpKind::concat_backward);

  GraphBuilder b("cat", DType::f32);
  TensorId a = b.add_input("a", {4, 3}, TensorRole::input, FuseAxis::stack);
  TensorId c = b.add_input("c", {5, 3}, TensorRole::input, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(b.op(OpKind::concat, "cat", {a, c}),
                       doctest::Contains("op 'cat': input 1 'c' is [5,3]"), GraphError);
}

TEST_CASE("dot_interaction gives dense ++ n(n-1)/2 pairwise dots, FLOPs of the bmm") {
  for (int32_t k : {1, 4}) {
    GraphBuilder b("dot", DType::f32, k, 128);
    std::vector<TensorId> in;
    for (int i = 0; i < 27; ++i) {
      std::string name = "feature";
      name += std::to_string(i);
      in.push_back(b.add_input(name, {128, 16}, TensorRole::input, FuseAxis::stack));
    }
    TensorId y = b.op(OpKind::dot_interaction, "interact", in);
    // n = 27: 16 + 27*26/2 = 16 + 351 = 367 (DLRM's top MLP input on Criteo).
    CHECK(b.tensor(y).shape == (k == 1 ? Shape{128, 367} : Shape{4, 128, 367}));
    // 2 * B * n * n * d = 2 * 128 * 729 * 16 = 2,985,984 per model.
    CHECK(b.graph().ops[0].flops == int64_t{2985984} * k);
  }
  {  // smallest case: dense + 1 sparse -> d + 1.
    GraphBuilder b("dot", DType::f32, 1, 2);
    TensorId x = b.add_input("x", {2, 4}, TensorRole::input, FuseAxis::stack);
    TensorId s = b.add_input("s", {2, 4}, TensorRole::input, FuseAxis::stack);
    CHECK(b.tensor(b.op(OpKind::dot_interaction, "dot", {x, s})).shape == Shape{2, 5});
  }
  const KindRules* rules = kind_rules(OpKind::dot_interaction);
  REQUIRE(rules);
  CHECK(rules->backward_kind == OpKind::dot_interaction_backward);
  // Saves every input: positions 0, 1, ... are all listed (variadic; 27 for DLRM).
  REQUIRE(rules->saved.size() >= 27);
  for (size_t i = 0; i < 27; ++i) CHECK(rules->saved[i].index == static_cast<int>(i));

  GraphBuilder b("dot", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 4}, TensorRole::input, FuseAxis::stack);
  TensorId s = b.add_input("s", {2, 8}, TensorRole::input, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(b.op(OpKind::dot_interaction, "dot", {x, s}),
                       doctest::Contains("op 'dot': input 1 's' is [2,8] fp32, expected [2,4] fp32"),
                       GraphError);
}

TEST_CASE("bce_with_logits gives a scalar loss per model and starts backward") {
  for (int32_t k : {1, 2}) {
    GraphBuilder b("bce", DType::f32, k, 128);
    TensorId z = b.add_input("z", {128, 1}, TensorRole::input, FuseAxis::stack);
    TensorId y = b.add_input("y", {128, 1}, TensorRole::label, FuseAxis::stack);
    TensorId loss = b.op(OpKind::bce_with_logits, "loss", {z, y});
    // loss []; [k] when fused.
    CHECK(b.tensor(loss).shape == (k == 1 ? Shape{} : Shape{2}));
    CHECK(b.tensor(loss).role == TensorRole::loss);
  }
  const KindRules* rules = kind_rules(OpKind::bce_with_logits);
  REQUIRE(rules);
  CHECK(rules->is_loss);
  CHECK(rules->saved.size() == 2);

  GraphBuilder b("bce", DType::f32, 1, 4);
  TensorId z = b.add_input("z", {4, 1}, TensorRole::input, FuseAxis::stack);
  TensorId y = b.add_input("y", {4, 1}, TensorRole::label, FuseAxis::stack, DType::i64);
  CHECK_THROWS_WITH_AS(b.op(OpKind::bce_with_logits, "loss", {z, y}),
                       doctest::Contains("op 'loss': input 1 'y' (labels) is [4,1] int64"), GraphError);
}

TEST_CASE("dlrm parameter count: 26 tables x 16 + bottom 13-512-256-64-16 + top 367-512-256-1") {
  const Graph g = build_model("dlrm", {});
  const int64_t rows = std::accumulate(kRows.begin(), kRows.end(), int64_t{0});
  CHECK(rows == 33762577);  // sum of the Criteo Kaggle category counts
  // bottom: 13*512+512 + 512*256+256 + 256*64+64 + 64*16+16 = 7168 + 131328 + 16448 + 1040 = 155,984.
  const int64_t bottom = 155984;
  // top: 367*512+512 + 512*256+256 + 256*1+1 = 188416 + 131328 + 257 = 320,001.
  const int64_t top = 320001;
  // 33,762,577 * 16 + 155,984 + 320,001 = 540,677,217.
  CHECK(rows * 16 + bottom + top == 540677217);
  CHECK(parameter_count(g) == 540677217);
  CHECK(g.batch_size == 128);
}

TEST_CASE("dlrm follows DLRM's forward: bottom MLP, 26 bags, interaction, top MLP, BCE") {
  const Graph g = build_model("dlrm", {});
  // 4 bottom linears + 4 relus, 26 bags, 1 interaction, 3 top linears + 2 relus, 1 loss = 41 ops.
  CHECK(g.ops.size() == 41);
  const Op* bottom_last = find_op(g, "bot_l.7");  // ReLU after the 4th bottom linear
  REQUIRE(bottom_last);
  CHECK(bottom_last->kind == OpKind::relu);
  CHECK(g.tensor(bottom_last->outputs[0]).shape == Shape{128, 16});
  const Op* interact = find_op(g, "interact");
  REQUIRE(interact);
  CHECK(interact->inputs.size() == 27);  // dense + 26 sparse
  CHECK(g.tensor(interact->outputs[0]).shape == Shape{128, 367});
  const Op* top_last = find_op(g, "top_l.4");
  REQUIRE(top_last);
  CHECK(top_last->kind == OpKind::linear);
  CHECK(g.tensor(top_last->outputs[0]).shape == Shape{128, 1});
  CHECK(find_op(g, "top_l.5") == nullptr);  // no activation after the last top layer (sigmoid is in the loss)
  const Op* loss = find_op(g, "loss");
  REQUIRE(loss);
  CHECK(loss->kind == OpKind::bce_with_logits);
  CHECK(g.tensor(loss->inputs[1]).dtype == DType::f32);
  CHECK(g.tensor(loss->inputs[1]).role == TensorRole::label);
  const Op* bag = find_op(g, "emb_l.2");
  REQUIRE(bag);
  CHECK(g.tensor(bag->inputs[0]).shape == Shape{128, 1});  // one index per bag
  CHECK(g.tensor(bag->inputs[0]).dtype == DType::i64);
  CHECK(g.tensor(bag->inputs[1]).shape == Shape{10131227, 16});
  // Forward FLOPs: linears 2*B*(sum in*out) + B*(sum out), bags B*16*26, interaction 2*B*27*27*16,
  // relus B*(512+256+64+16+512+256), BCE 8*B.
  const int64_t B = 128;
  const int64_t macs = 13 * 512 + 512 * 256 + 256 * 64 + 64 * 16 + 367 * 512 + 512 * 256 + 256 * 1;
  const int64_t bias = 512 + 256 + 64 + 16 + 512 + 256 + 1;
  const int64_t expected = 2 * B * macs + B * bias + B * 16 * 26 + 2 * B * 27 * 27 * 16 +
                           B * (512 + 256 + 64 + 16 + 512 + 256) + 8 * B;
  CHECK(flops_in_phase(g, Phase::forward) == expected);
}

TEST_CASE("dlrm at width k stacks every leaf and multiplies parameters by k") {
  ModelConfig cfg;
  cfg.width = 4;
  cfg.batch_size = 32;
  const Graph g = build_model("dlrm", cfg);
  CHECK(g.width == 4);
  CHECK(parameter_count(g) == 4 * int64_t{540677217});
  const Op* interact = find_op(g, "interact");
  REQUIRE(interact);
  CHECK(g.tensor(interact->outputs[0]).shape == Shape{4, 32, 367});
  const Op* loss = find_op(g, "loss");
  REQUIRE(loss);
  CHECK(g.tensor(loss->outputs[0]).shape == Shape{4});
  CHECK(g.tensor(find_op(g, "emb_l.0")->inputs[1]).shape == Shape{4, 1460, 16});
}
