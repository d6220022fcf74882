// Autodiff, continued: optimizer steps (state, hyper-parameters, FLOPs, bytes), errors naming the
// graph or field, weights no loss depends on, optimizer names, and the training step of every zoo
// model. Backward ops on hand-built graphs are tests/test_autodiff.cpp.
#include "tests/support/test_autodiff_fixtures.hpp"

TEST_CASE("optimizer steps: state tensors, per-model hyper-parameters, FLOPs and bytes") {
  const Graph fwd =
      mlp(2);  // weights: fc1.weight [2,16,8], fc1.bias [2,16], fc2.weight [2,3,16], fc2.bias [2,3]
  const int64_t params = 2 * (16 * 8 + 16 + 3 * 16 + 3);  // 390
  REQUIRE(parameter_count(fwd) == params);

  SUBCASE("sgd with momentum: one momentum buffer per weight") {
    OptimizerConfig c;
    c.kind = OptimizerKind::sgd;
    c.lr = {0.1, 0.01};
    const Graph g = build_training_step(fwd, c);
    check_training_step(fwd, g);
    CHECK(count_kind(g, OpKind::sgd_step) == 4);
    CHECK(count_role(g, TensorRole::optimizer_state) == 4);
    const Op& op = *find_op(g, "fc1.weight.sgd_step");
    CHECK(op.phase == Phase::optimizer);
    CHECK(op.outputs.empty());
    CHECK(op.width == 2);
    const Tensor& buf = g.tensor(op.inputs[2]);
    CHECK(buf.name == "fc1.weight.momentum_buffer");
    CHECK(buf.shape == Shape{2, 16, 8});
    CHECK(attr_doubles(op.attrs, "lr", "") == std::vector<double>{0.1, 0.01});
    CHECK(attr_doubles(op.attrs, "momentum", "") == std::vector<double>{0.9, 0.9});  // broadcast
    CHECK(attr_doubles(op.attrs, "weight_decay", "") == std::vector<double>{0.0, 0.0});
    // 256 elements x (update 2 + momentum 2) = 1024; read p, g, buf = 3 x 1024 B; write p, buf.
    CHECK(op.flops == 256 * 4);
    CHECK(op.bytes_read == 3 * 256 * 4);
    CHECK(op.bytes_written == 2 * 256 * 4);
    CHECK(flops_in_phase(g, Phase::optimizer) == params * 4);
  }
  SUBCASE("sgd with weight decay adds 2 FLOPs per element") {
    OptimizerConfig c;
    c.kind = OptimizerKind::sgd;
    c.weight_decay = {0.0, 1e-4};
    const Graph g = build_training_step(fwd, c);
    CHECK(flops_in_phase(g, Phase::optimizer) == params * 6);
  }
  SUBCASE("adam: exp_avg and exp_avg_sq per weight") {
    OptimizerConfig c;
    c.kind = OptimizerKind::adam;
    c.lr = {1e-3, 3e-4};
    c.beta2 = {0.98};
    const Graph g = build_training_step(fwd, c);
    check_training_step(fwd, g);
    CHECK(count_kind(g, OpKind::adam_step) == 4);
    CHECK(count_role(g, TensorRole::optimizer_state) == 8);
    const Op& op = *find_op(g, "fc2.bias.adam_step");
    CHECK(g.tensor(op.inputs[2]).name == "fc2.bias.exp_avg");
    CHECK(g.tensor(op.inputs[3]).name == "fc2.bias.exp_avg_sq");
    CHECK(g.tensor(op.inputs[3]).shape == Shape{2, 3});
    CHECK(attr_doubles(op.attrs, "lr", "") == std::vector<double>{1e-3, 3e-4});
    CHECK(attr_doubles(op.attrs, "beta1", "") == std::vector<double>{0.9, 0.9});
    CHECK(attr_doubles(op.attrs, "beta2", "") == std::vector<double>{0.98, 0.98});
    CHECK(attr_doubles(op.attrs, "eps", "") == std::vector<double>{1e-8, 1e-8});
    CHECK_FALSE(op.attrs.contains("momentum"));
    CHECK(op.flops == 6 * 12);  // 6 elements x 12
    CHECK(op.bytes_read == 4 * 6 * 4);
    CHECK(op.bytes_written == 3 * 6 * 4);
    CHECK(flops_in_phase(g, Phase::optimizer) == params * 12);
  }
  SUBCASE("adamw with decoupled weight decay") {
    OptimizerConfig c;
    c.kind = OptimizerKind::adamw;
    c.weight_decay = {0.01};
    const Graph g = build_training_step(fwd, c);
    check_training_step(fwd, g);
    CHECK(count_kind(g, OpKind::adamw_step) == 4);
    CHECK(count_role(g, TensorRole::optimizer_state) == 8);
    CHECK(attr_doubles(find_op(g, "fc1.bias.adamw_step")->attrs, "weight_decay", "") ==
          std::vector<double>{0.01, 0.01});
    CHECK(flops_in_phase(g, Phase::optimizer) == params * 13);
  }
  SUBCASE("backward of a width-2 graph costs twice the width-1 backward") {
    const Graph one = build_training_step(mlp(1), OptimizerConfig{});
    const Graph two = build_training_step(fwd, OptimizerConfig{});
    CHECK(flops_in_phase(two, Phase::backward) == 2 * flops_in_phase(one, Phase::backward));
  }
}

TEST_CASE("autodiff errors name the graph or the field") {
  SUBCASE("a graph without a loss") {
    GraphBuilder b("noloss", DType::f32, 1, 4);
    TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
    TensorId w = b.add_weight("w", {2, 8}, FuseAxis::stack);
    b.op(OpKind::linear, "fc", {x, w});
    const Graph fwd = std::move(b).finish();
    CHECK_THROWS_WITH_AS(build_training_step(fwd, OptimizerConfig{}),
                         doctest::Contains("graph 'noloss' has no loss tensor"), GraphError);
  }
  SUBCASE("an lr list neither 1 nor the width long") {
    OptimizerConfig c;
    c.lr = {0.1, 0.2, 0.3};
    CHECK_THROWS_WITH_AS(
        build_training_step(mlp(2), c),
        doctest::Contains("optimizer field 'lr' has 3 values; expected 1 or the graph's width 2"),
        mutwo::Error);
  }
  SUBCASE("a beta of 1") {
    OptimizerConfig c;
    c.beta2 = {1.0};
    CHECK_THROWS_WITH_AS(build_training_step(mlp(1), c), doctest::Contains("'beta2' has value 1"),
                         mutwo::Error);
  }
  SUBCASE("a per-model list on a width-1 graph") {
    OptimizerConfig c;
    c.momentum = {0.9, 0.8};
    CHECK_THROWS_WITH_AS(build_training_step(mlp(1), c), doctest::Contains("'momentum' has 2 values"),
                         mutwo::Error);
  }
  SUBCASE("a backward graph given again") {
    const Graph step = build_training_step(mlp(1), OptimizerConfig{});
    CHECK_THROWS_WITH_AS(build_training_step(step, OptimizerConfig{}), doctest::Contains("forward-only"),
                         GraphError);
  }
}

TEST_CASE("a weight no loss depends on gets no gradient and no update") {
  GraphBuilder b("unused", DType::f32, 1, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w = b.add_weight("head.weight", {3, 8}, FuseAxis::stack);
  TensorId spare = b.add_weight("spare.weight", {3, 8}, FuseAxis::stack);
  TensorId side = b.add_weight("side.weight", {5, 8}, FuseAxis::stack);
  b.op(OpKind::linear, "side", {x, side});  // computed, but no loss reads it
  b.add_op(OpKind::cross_entropy, "loss", {b.op(OpKind::linear, "head", {x, w}), labels});
  const Graph g = build_training_step(std::move(b).finish(), OptimizerConfig{});
  // Only head.weight: its backward and its step; no backward for "side" (its output has no gradient).
  CHECK(count_kind(g, OpKind::adam_step) == 1);
  CHECK(find_op(g, "side.backward") == nullptr);
  CHECK(find_tensor(g, "spare.weight.grad") == kNoId);
  CHECK(find_tensor(g, "side.weight.exp_avg") == kNoId);
  CHECK(count_role(g, TensorRole::gradient) == 1);
  (void)spare;
}

TEST_CASE("optimizer names parse and print; unknown names list the valid ones") {
  CHECK(parse_optimizer("sgd") == OptimizerKind::sgd);
  CHECK(parse_optimizer("adamw") == OptimizerKind::adamw);
  CHECK(optimizer_name(OptimizerKind::adam) == "adam");
  CHECK(parse_optimizer("adamw-fused") == OptimizerKind::adamw_fused);
  CHECK(optimizer_name(OptimizerKind::adam_fused) == "adam-fused");
  CHECK(unfused(OptimizerKind::adamw_fused) == OptimizerKind::adamw);
  CHECK(is_fused(OptimizerKind::adam_fused));
  CHECK_FALSE(is_fused(OptimizerKind::adam));
  CHECK_THROWS_WITH_AS(
      parse_optimizer("lamb"),
      "unknown optimizer 'lamb'; valid: sgd, adam, adamw, adam-fused, adamw-fused, bert-adam, bert-adam-hf",
      mutwo::UnknownNameError);
}

TEST_CASE("every zoo model's training step validates, updates each weight once, costs ~2x forward, fuses") {
  int built = 0;
  for (const ModelInfo& info : builtin_models().models()) {
    ModelConfig config;
    config.batch_size = 2;
    config.seq_len = info.default_seq_len ? 16 : 0;
    config.image_size = info.default_image_size ? (info.family == "vit" ? 32 : 64) : 0;
    Graph fwd;
    try {
      fwd = build_model(info.name, config);
    } catch (const mutwo::Error& e) {
      MESSAGE("skipping " << info.name << ": its forward graph does not build yet (" << e.what() << ")");
      continue;
    }
    INFO("model " << info.name);
    ++built;
    OptimizerConfig c;
    c.kind = OptimizerKind::adamw;
    const Graph step = build_training_step(fwd, c);
    check_training_step(fwd, step);
    const auto forward_flops = static_cast<double>(flops_in_phase(step, Phase::forward));
    const auto backward_flops = static_cast<double>(flops_in_phase(step, Phase::backward));
    const double ratio = backward_flops / forward_flops;
    MESSAGE(info.name << ": " << fwd.ops.size() << " forward ops -> " << step.ops.size()
                      << " ops; backward/forward FLOPs " << ratio);
    CHECK(ratio >= 1.5);
    CHECK(ratio <= 2.5);
    int weights = 0;
    for (const Tensor& t : fwd.tensors) weights += t.role == TensorRole::weight ? 1 : 0;
    CHECK(count_role(step, TensorRole::optimizer_state) == 2 * weights);

    // Fused width 2 with per-model learning rates: twice the backward FLOPs, one update per weight.
    config.width = 2;
    const Graph fused = build_model(info.name, config);
    c.lr = {1e-3, 1e-4};
    const Graph fused_step = build_training_step(fused, c);
    check_training_step(fused, fused_step);
    CHECK(flops_in_phase(fused_step, Phase::backward) == 2 * flops_in_phase(step, Phase::backward));
    CHECK(flops_in_phase(fused_step, Phase::optimizer) == 2 * flops_in_phase(step, Phase::optimizer));
  }
  MESSAGE(built << " of " << builtin_models().models().size() << " zoo models built");
}

// The < 50 ms build target is measured by bench/bench_graph.cpp, not asserted here.
TEST_CASE("bert-large at batch 32 differentiates into more than twice its forward ops") {
  ModelConfig config;
  config.batch_size = 32;
  const Graph fwd = build_model("bert-large", config);
  const Graph step = build_training_step(fwd, OptimizerConfig{});
  CHECK(step.ops.size() > 2 * fwd.ops.size());
}
