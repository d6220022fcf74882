// Autodiff: forward Graph -> training step, on hand-built graphs: backward ops with PyTorch's saved
// tensors, their FLOPs, gradient accumulation, broadcasting and tied weights. Optimizer steps and
// the zoo's models: tests/test_autodiff_steps.cpp.
#include "tests/support/test_autodiff_fixtures.hpp"

TEST_CASE("backward ops run in reverse program order with the saved tensors of derivatives.yaml") {
  const Graph fwd = mlp(1);
  const Graph g = build_training_step(fwd, OptimizerConfig{});
  check_training_step(fwd, g);
  // 4 forward, 4 backward (loss, fc2, relu, fc1), 4 optimizer steps.
  REQUIRE(g.ops.size() == 12);
  const TensorId x = find_tensor(g, "x"), labels = find_tensor(g, "labels");
  const TensorId w1 = find_tensor(g, "fc1.weight"), w2 = find_tensor(g, "fc2.weight");
  const TensorId a = find_tensor(g, "relu"), log_probs = find_tensor(g, "loss.log_probs");

  const Op& loss_bw = g.ops[4];
  CHECK(loss_bw.name == "loss.backward");
  CHECK(loss_bw.kind == OpKind::cross_entropy_backward);
  CHECK(loss_bw.phase == Phase::backward);
  CHECK(loss_bw.forward_of == 3);
  // Loss kinds take no gradient input: [log_probs, labels] (log_softmax saves result, nll_loss target).
  CHECK(loss_bw.inputs == Ids{log_probs, labels});
  REQUIRE(loss_bw.outputs.size() == 1);
  CHECK(g.tensor(loss_bw.outputs[0]).name == "fc2.grad");
  CHECK(g.tensor(loss_bw.outputs[0]).role == TensorRole::temporary);
  CHECK(g.tensor(loss_bw.outputs[0]).shape == Shape{4, 3});
  // 3 FLOPs per logit element: 3 * 4 * 3 = 36.
  CHECK(loss_bw.flops == 36);
  CHECK(attr_ints(loss_bw.attrs, "needs_grad", "") == std::vector<int64_t>{1, 0});
  // bytes: read log_probs 48 + labels 32; write grad 48.
  CHECK(loss_bw.bytes_read == 4 * 3 * 4 + 4 * 8);
  CHECK(loss_bw.bytes_written == 4 * 3 * 4);

  const Op& fc2_bw = g.ops[5];
  CHECK(fc2_bw.name == "fc2.backward");
  CHECK(fc2_bw.kind == OpKind::linear_backward);
  // [grad of fc2, saved x (relu output), saved W2].
  CHECK(fc2_bw.inputs == Ids{loss_bw.outputs[0], a, w2});
  REQUIRE(fc2_bw.outputs.size() == 3);
  CHECK(g.tensor(fc2_bw.outputs[0]).name == "relu.grad");
  CHECK(g.tensor(fc2_bw.outputs[1]).name == "fc2.weight.grad");
  CHECK(g.tensor(fc2_bw.outputs[1]).role == TensorRole::gradient);
  CHECK(g.tensor(fc2_bw.outputs[2]).name == "fc2.bias.grad");
  // dX 2*4*16*3 = 384, dW 384, db 4*3 = 12 -> 780 = 2 x (forward 396 - bias 12) + 12.
  CHECK(g.ops[2].flops == 396);
  CHECK(fc2_bw.flops == 780);

  const Op& relu_bw = g.ops[6];
  CHECK(relu_bw.kind == OpKind::relu_backward);
  CHECK(relu_bw.inputs == Ids{fc2_bw.outputs[0], a});  // relu saves its result
  CHECK(relu_bw.flops == 64);                          // 1 per element of [4,16]

  const Op& fc1_bw = g.ops[7];
  CHECK(fc1_bw.inputs == Ids{relu_bw.outputs[0], x, w1});
  // x is a model input: no dX. Outputs W1.grad, b1.grad only.
  CHECK(attr_ints(fc1_bw.attrs, "needs_grad", "") == std::vector<int64_t>{0, 1, 1});
  REQUIRE(fc1_bw.outputs.size() == 2);
  CHECK(g.tensor(fc1_bw.outputs[0]).shape == Shape{16, 8});
  // First layer: dW 2*4*8*16 = 1024 + db 64 = 1088, equal to its forward FLOPs.
  CHECK(fc1_bw.flops == 1088);
  CHECK(fc1_bw.flops == g.ops[0].flops);

  // Optimizer: one adam_step per weight in weight order, after every backward op.
  for (size_t i = 8; i < 12; ++i) CHECK(g.ops[i].kind == OpKind::adam_step);
  CHECK(g.ops[8].name == "fc1.weight.adam_step");
  CHECK(g.ops[11].name == "fc2.bias.adam_step");
  CHECK(g.ops[10].inputs.size() == 4);
  CHECK(g.ops[10].inputs[0] == w2);
}

TEST_CASE("backward FLOPs of linear and conv2d are twice the forward's, bias aside; the first layer's once") {
  GraphBuilder b("cnn", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 3, 8, 8}, TensorRole::input, FuseAxis::dim1);
  TensorId labels = b.add_input("labels", {2, 4, 8}, TensorRole::label, FuseAxis::dim1, DType::i64);
  TensorId w1 = b.add_weight("conv1.weight", {4, 3, 3, 3}, FuseAxis::dim0);
  TensorId w2 = b.add_weight("conv2.weight", {4, 4, 3, 3}, FuseAxis::dim0);
  TensorId b2 = b.add_weight("conv2.bias", {4}, FuseAxis::dim0);
  const Attributes pad{{"padding", std::vector<int64_t>{1, 1}}};
  TensorId h = b.op(OpKind::conv2d, "conv1", {x, w1}, pad);
  TensorId a = b.op(OpKind::relu, "relu", {h});
  TensorId y = b.op(OpKind::conv2d, "conv2", {a, w2, b2}, pad);
  b.add_op(OpKind::cross_entropy, "loss", {y, labels});  // logits [2,4,8,8] over the last dim
  const Graph fwd = std::move(b).finish();
  const Graph g = build_training_step(fwd, OptimizerConfig{});
  check_training_step(fwd, g);

  // conv1: 2*4*8*8 = 512 outputs x 3*3*3 = 27 MACs = 13824 MACs -> 27648 FLOPs; backward dW only.
  const Op& conv1_bw = *find_op(g, "conv1.backward");
  CHECK(g.ops[0].flops == 27648);
  CHECK(conv1_bw.flops == 27648);
  CHECK(conv1_bw.outputs.size() == 1);
  CHECK(conv1_bw.attrs.contains("padding"));  // forward attrs travel with the backward
  // conv2: 512 outputs x 4*3*3 = 36 MACs = 18432 MACs -> 36864 + bias 512 = 37376 forward;
  // backward dX 36864 + dW 36864 + db 512 = 74240.
  const Op& conv2_bw = *find_op(g, "conv2.backward");
  CHECK(g.ops[2].flops == 37376);
  CHECK(conv2_bw.flops == 74240);
  CHECK(conv2_bw.inputs == Ids{find_tensor(g, "conv2.grad"), a, w2});
  CHECK(attr_ints(conv2_bw.attrs, "needs_grad", "") == std::vector<int64_t>{1, 1, 1});
}

TEST_CASE("norm, activation, dropout, mul and softmax backwards read what derivatives.yaml saves") {
  GraphBuilder b("block", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {2, 4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w = b.add_weight("fc.weight", {8, 8}, FuseAxis::stack);
  TensorId gamma = b.add_weight("ln.weight", {8}, FuseAxis::stack);
  TensorId beta = b.add_weight("ln.bias", {8}, FuseAxis::stack);
  TensorId wg = b.add_weight("gate.weight", {8, 8}, FuseAxis::stack);
  TensorId wo = b.add_weight("out.weight", {5, 8}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc", {x, w});
  const auto ln = b.add_op(OpKind::layernorm, "ln", {h, gamma, beta}, {{"eps", 1e-5}});
  TensorId act = b.op(OpKind::gelu, "gelu", {ln[0]}, {{"approximate", int64_t{0}}});
  const auto drop = b.add_op(OpKind::dropout, "drop", {act}, {{"p", 0.1}});
  TensorId s = b.op(OpKind::softmax, "softmax", {b.op(OpKind::linear, "gate", {x, wg})});
  TensorId m = b.op(OpKind::mul, "mul", {drop[0], s});
  TensorId logits = b.op(OpKind::linear, "out", {m, wo});
  b.add_op(OpKind::cross_entropy, "loss", {logits, labels});
  const Graph fwd = std::move(b).finish();
  const Graph g = build_training_step(fwd, OptimizerConfig{});
  check_training_step(fwd, g);
  const int64_t n = 2 * 4 * 8;  // elements of every [2,4,8] activation

  const Op& mul_bw = *find_op(g, "mul.backward");
  CHECK(mul_bw.inputs == Ids{find_tensor(g, "mul.grad"), drop[0], s});  // saves self and other
  CHECK(mul_bw.flops == n + 2 * n);                                     // g*b, then g*a summed to b's shape
  const Op& softmax_bw = *find_op(g, "softmax.backward");
  CHECK(softmax_bw.inputs == Ids{find_tensor(g, "softmax.grad"), s});  // saves result
  CHECK(softmax_bw.flops == 4 * n);
  const Op& drop_bw = *find_op(g, "drop.backward");
  CHECK(drop_bw.inputs == Ids{find_tensor(g, "drop.grad"), drop[1]});  // saves the mask
  CHECK(g.tensor(drop[1]).dtype == DType::boolean);
  CHECK(drop_bw.flops == n);
  CHECK(drop_bw.attrs.contains("p"));
  const Op& gelu_bw = *find_op(g, "gelu.backward");
  CHECK(gelu_bw.inputs == Ids{find_tensor(g, "gelu.grad"), ln[0]});  // saves self
  CHECK(gelu_bw.flops == 12 * n);
  const Op& ln_bw = *find_op(g, "ln.backward");
  // native_layer_norm saves input, weight, bias, mean, rstd.
  CHECK(ln_bw.inputs == Ids{find_tensor(g, "ln.grad"), h, gamma, beta, ln[1], ln[2]});
  CHECK(ln_bw.flops == 14 * n);
  REQUIRE(ln_bw.outputs.size() == 3);
  CHECK(g.tensor(ln_bw.outputs[1]).name == "ln.weight.grad");
  CHECK(g.tensor(ln_bw.outputs[2]).name == "ln.bias.grad");
  // Backward order is reverse forward order: mul before softmax (gate branch) before drop, gelu, ln.
  CHECK(mul_bw.id < softmax_bw.id);
  CHECK(softmax_bw.id < drop_bw.id);
  CHECK(drop_bw.id < gelu_bw.id);
  CHECK(gelu_bw.id < ln_bw.id);
  // x feeds fc and gate but is an input: no gradient, so no accumulation.
  CHECK(count_kind(g, OpKind::accumulate_grad) == 0);
}

TEST_CASE("a residual tensor read twice gets its two gradient contributions summed once") {
  // h = fc1(x); y = relu(h) + h; loss = ce(fc2(y)). h is read by relu and add.
  GraphBuilder b("residual", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {2, 4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w1 = b.add_weight("fc1.weight", {8, 8}, FuseAxis::stack);
  TensorId w2 = b.add_weight("fc2.weight", {3, 8}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc1", {x, w1});
  TensorId r = b.op(OpKind::relu, "relu", {h});
  TensorId y = b.op(OpKind::add, "residual", {r, h});
  b.add_op(OpKind::cross_entropy, "loss", {b.op(OpKind::linear, "fc2", {y, w2}), labels});
  const Graph fwd = std::move(b).finish();
  const Graph g = build_training_step(fwd, OptimizerConfig{});
  check_training_step(fwd, g);

  // add is passthrough: no op; both operands get y's gradient tensor itself (same shape).
  const TensorId y_grad = find_tensor(g, "residual.grad");
  REQUIRE(y_grad != kNoId);
  CHECK(find_op(g, "residual.backward") == nullptr);
  const Op& relu_bw = *find_op(g, "relu.backward");
  CHECK(relu_bw.inputs == Ids{y_grad, r});
  REQUIRE(count_kind(g, OpKind::accumulate_grad) == 1);
  const Op& acc = *find_op(g, "fc1.grad.accumulate2");
  // Contributions in arrival order: y's gradient (via add), then relu's backward output.
  CHECK(acc.inputs == Ids{y_grad, relu_bw.outputs[0]});
  CHECK(g.tensor(relu_bw.outputs[0]).name == "fc1.grad.part1");
  CHECK(g.tensor(acc.outputs[0]).name == "fc1.grad");
  CHECK(g.tensor(acc.outputs[0]).role == TensorRole::temporary);
  CHECK(acc.flops == 2 * 4 * 8);
  CHECK(acc.forward_of == find_op(g, "relu")->id);
  // fc1's backward reads the summed gradient.
  CHECK(find_op(g, "fc1.backward")->inputs[0] == acc.outputs[0]);
  CHECK(acc.id < find_op(g, "fc1.backward")->id);
  (void)w1;
}

TEST_CASE("a broadcast add operand gets its gradient through sum_to_shape") {
  // y = fc(x) + pos, pos [4,8] broadcast over the batch of [2,4,8] (position embeddings).
  GraphBuilder b("broadcast", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {2, 4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w1 = b.add_weight("fc.weight", {8, 8}, FuseAxis::stack);
  TensorId pos = b.add_weight("pos", {4, 8}, FuseAxis::stack);
  TensorId w2 = b.add_weight("head.weight", {3, 8}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc", {x, w1});
  TensorId y = b.op(OpKind::add, "add_pos", {h, pos});
  b.add_op(OpKind::cross_entropy, "loss", {b.op(OpKind::linear, "head", {y, w2}), labels});
  const Graph fwd = std::move(b).finish();
  const Graph g = build_training_step(fwd, OptimizerConfig{});
  check_training_step(fwd, g);

  const TensorId y_grad = find_tensor(g, "add_pos.grad");
  REQUIRE(count_kind(g, OpKind::sum_to_shape) == 1);
  const Op& sum = *find_op(g, "add_pos.sum_to_shape1");
  CHECK(sum.inputs == Ids{y_grad});
  const Tensor& pos_grad = g.tensor(sum.outputs[0]);
  CHECK(pos_grad.name == "pos.grad");
  CHECK(pos_grad.role == TensorRole::gradient);
  CHECK(pos_grad.shape == Shape{4, 8});
  CHECK(sum.flops == 2 * 4 * 8);  // one add per element of the [2,4,8] gradient
  CHECK(sum.forward_of == find_op(g, "add_pos")->id);
  // h has y's shape: it reads y's gradient directly.
  CHECK(find_op(g, "fc.backward")->inputs[0] == y_grad);
  (void)pos;
}

TEST_CASE("a weight added at the output's shape gets its own gradient tensor, not the shared one") {
  GraphBuilder b("alias", DType::f32, 1, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w1 = b.add_weight("fc.weight", {8, 8}, FuseAxis::stack);
  TensorId full = b.add_weight("full_bias", {4, 8}, FuseAxis::stack);
  TensorId w2 = b.add_weight("head.weight", {3, 8}, FuseAxis::stack);
  TensorId y = b.op(OpKind::add, "add", {b.op(OpKind::linear, "fc", {x, w1}), full});
  b.add_op(OpKind::cross_entropy, "loss", {b.op(OpKind::linear, "head", {y, w2}), labels});
  const Graph fwd = std::move(b).finish();
  const Graph g = build_training_step(fwd, OptimizerConfig{});
  check_training_step(fwd, g);
  const Op& copy = *find_op(g, "full_bias.grad.copy");
  CHECK(copy.kind == OpKind::sum_to_shape);
  CHECK(copy.inputs == Ids{find_tensor(g, "add.grad")});
  CHECK(g.tensor(copy.outputs[0]).role == TensorRole::gradient);
  CHECK(copy.flops == 0);
  CHECK(g.tensor(find_tensor(g, "add.grad")).role == TensorRole::temporary);
  (void)full;
}

TEST_CASE("a tied weight read twice gets one accumulate_grad, one gradient and one update") {
  // W [8,8] used by two linears (like GPT-2's wte / lm_head): logits = W relu(W x).
  GraphBuilder b("tied", DType::f32, 1, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w = b.add_weight("tied.weight", {8, 8}, FuseAxis::stack);
  TensorId a = b.op(OpKind::relu, "relu", {b.op(OpKind::linear, "first", {x, w})});
  b.add_op(OpKind::cross_entropy, "loss", {b.op(OpKind::linear, "second", {a, w}), labels});
  const Graph fwd = std::move(b).finish();
  const Graph g = build_training_step(fwd, OptimizerConfig{});
  check_training_step(fwd, g);

  REQUIRE(count_kind(g, OpKind::accumulate_grad) == 1);
  const Op& second_bw = *find_op(g, "second.backward");
  const Op& first_bw = *find_op(g, "first.backward");
  const Op& acc = *find_op(g, "tied.weight.grad.accumulate2");
  // Partial gradients arrive from second (later layer) first.
  CHECK(acc.inputs == Ids{second_bw.outputs[1], first_bw.outputs[0]});
  CHECK(g.tensor(second_bw.outputs[1]).name == "tied.weight.grad.part1");
  CHECK(g.tensor(second_bw.outputs[1]).role == TensorRole::temporary);
  CHECK(g.tensor(first_bw.outputs[0]).name == "tied.weight.grad.part2");
  CHECK(g.tensor(acc.outputs[0]).name == "tied.weight.grad");
  CHECK(g.tensor(acc.outputs[0]).role == TensorRole::gradient);
  CHECK(count_kind(g, OpKind::adam_step) == 1);
  CHECK(find_op(g, "tied.weight.adam_step")->inputs == Ids{w, acc.outputs[0],
                                                           find_tensor(g, "tied.weight.exp_avg"),
                                                           find_tensor(g, "tied.weight.exp_avg_sq")});
}

TEST_CASE("validation holds a backward op to the inputs autodiff gives it, and forward attributes to range") {
  // A schedule file's backward op with its inputs cut crashed the executor's kernel and was priced on
  // what it no longer read; out-of-range attributes reached LibTorch (or ran silently).
  GraphBuilder b("block", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {2}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w = b.add_weight("fc.weight", {8, 8}, FuseAxis::stack);
  TensorId wo = b.add_weight("out.weight", {5, 8}, FuseAxis::stack);
  const auto drop = b.add_op(OpKind::dropout, "drop", {b.op(OpKind::linear, "fc", {x, w})}, {{"p", 0.1}});
  b.add_op(OpKind::cross_entropy, "loss", {b.op(OpKind::linear, "out", {drop[0], wo}), labels});
  const Graph g = build_training_step(std::move(b).finish(), OptimizerConfig{});
  validate(g);
  const auto op_id = [&](const std::string& name) { return static_cast<size_t>(find_op(g, name)->id); };
  SUBCASE("an input cut") {
    Graph bad = g;
    bad.ops[op_id("out.backward")].inputs.resize(1);  // linear_backward reads grad, x and w
    link(bad);
    CHECK_THROWS_WITH_AS(validate(bad),
                         "op 5 'out.backward': field 'inputs' has 1 tensors, the backward of op 2 'out' "
                         "(linear) reads 3",
                         GraphError);
  }
  SUBCASE("an input of another shape") {
    Graph bad = g;
    std::swap(bad.ops[op_id("out.backward")].inputs[1], bad.ops[op_id("out.backward")].inputs[2]);
    link(bad);
    CHECK_THROWS_WITH_AS(validate(bad),
                         "op 5 'out.backward': input 1 (tensor 3 'out.weight') has shape [5,8], where it "
                         "reads tensor 5 'drop' of shape [2,8]",
                         GraphError);
  }
  SUBCASE("a dropout probability outside [0, 1)") {
    Graph bad = g;
    bad.ops[op_id("drop")].attrs.insert_or_assign("p", 2.0);
    CHECK_THROWS_WITH_AS(validate(bad), doctest::Contains("attribute 'p' = 2 must be in [0, 1)"), GraphError);
  }
  SUBCASE("a backward attribute that is not its forward's (trained wrong gradients, priced the same)") {
    Graph bad = g;
    bad.ops[op_id("drop.backward")].attrs.insert_or_assign("p", 0.9);
    CHECK_THROWS_WITH_AS(validate(bad),
                         "op 6 'drop.backward': attribute 'p' = 0.9, where its forward op 1 'drop' has 0.1",
                         GraphError);
    bad.ops[op_id("drop.backward")].attrs.insert_or_assign("p", 0.1);
    bad.ops[op_id("drop.backward")].attrs.insert_or_assign("causal", int64_t{1});
    CHECK_THROWS_WITH_AS(
        validate(bad), "op 6 'drop.backward': attribute 'causal' = 1 is not one of its forward op 1 'drop''s",
        GraphError);
  }
  SUBCASE("an optimizer hyper-parameter the optimizer settings refuse (a schedule's lr -1 ran uphill)") {
    Graph bad = g;
    Op& update = *std::find_if(bad.ops.begin(), bad.ops.end(),
                               [](const Op& op) { return is_optimizer_update(op.kind); });
    update.attrs.insert_or_assign("lr", std::vector<double>{-1.0});
    CHECK_THROWS_WITH_AS(validate(bad),
                         doctest::Contains("attribute 'lr' = -1 for model 0; expected a finite value >= 0"),
                         GraphError);
    update.attrs.insert_or_assign("lr", std::vector<double>{1e-3});
    update.attrs.insert_or_assign("beta1", std::vector<double>{1.5});
    CHECK_THROWS_WITH_AS(
        validate(bad),
        doctest::Contains("attribute 'beta1' = 1.5 for model 0; expected a finite value >= 0 and < 1"),
        GraphError);
    update.attrs.insert_or_assign("beta1", std::vector<double>{0.9, 0.9, 0.9});
    CHECK_THROWS_WITH_AS(validate(bad),
                         doctest::Contains("attribute 'beta1' has 3 values; expected 1 or one per model (1)"),
                         GraphError);
  }
}

TEST_CASE("a layer norm's eps and a GELU's approximation are checked") {
  GraphBuilder b("ln", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 8}, TensorRole::input, FuseAxis::stack);
  TensorId gamma = b.add_weight("ln.weight", {8}, FuseAxis::stack);
  TensorId beta = b.add_weight("ln.bias", {8}, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(b.add_op(OpKind::layernorm, "ln", {x, gamma, beta}, {{"eps", -1.0}}),
                       doctest::Contains("attribute 'eps' must be > 0"), GraphError);
  CHECK_THROWS_WITH_AS(b.op(OpKind::gelu, "gelu", {x}, {{"approximate", int64_t{5}}}),
                       doctest::Contains("attribute 'approximate' = 5 must be 0 (erf) or 1 (tanh)"),
                       GraphError);
}
