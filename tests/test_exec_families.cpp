// Training steps of every zoo family, at test scale (zoo/mini_models.cpp, f64, batch 2),
// on exec's CPU backend against LibTorch:
//   (b) the training-step schedule of one model (policies::sub_array_steps, one sub-array of width
//       1, build_plain_schedule) gives the losses, gradients and updated parameters that the same
//       forward written with high-level ATen ops gives under autograd and torch::optim
//       (tests/support/autograd_reference.hpp), for SGD with momentum, Adam and AdamW, over two
//       steps: the second exercises what the first cannot (SGD's momentum update after its
//       first-step copy, Adam's bias correction at step 2, fresh dropout masks);
//   (c) a fused width-3 step with per-model learning rates gives each model the losses, gradients,
//       parameters and optimizer state of that model stepped alone (InterpreterOptions::first_model),
//       for two steps, each from the same state.
// doctest after LibTorch's logging, whose glog CHECK macros would replace doctest's.
#include "tests/support/torch_doctest.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "exec/interpreter.hpp"
#include "exec/model_layout.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "tests/support/autograd_reference.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;
using ir::TensorId;
using ir::TensorRole;
using test::ExecRun;
using transforms::OptimizerConfig;
using transforms::OptimizerKind;

namespace {

constexpr uint64_t kSeed = 7;
constexpr int64_t kSteps = 2;
constexpr int32_t kFusedWidth = 3;

// Tolerances (f64, unit roundoff 1.1e-16). exec's explicit backward and autograd evaluate the same
// derivatives with other kernels and summation orders; through the ~100-400 ops of a mini model the
// rounding differences stay near 1e-13 relative, so losses and gradients are held to 1e-9 relative
// (1e-12 absolute for entries that are rounding noise around an exact 0). A wrong derivative, layout
// or hyper-parameter is off by far more.
constexpr double kRtol = 1e-9;
constexpr double kAtol = 1e-12;
// Parameters after Adam/AdamW: the first updates are lr * m / (sqrt(v) + eps) ~ lr * g / (|g| + eps),
// whose sensitivity to a gradient error d is lr * eps * d / (|g| + eps)^2 <= lr * d / eps. For a
// gradient that is exactly 0 in exact arithmetic (attention's key bias: softmax ignores a constant
// added to a row of scores) both sides hold rounding noise d ~ 1e-17..1e-16, moved by the update to
// lr * 1e-8..1e-9: an absolute tolerance of 1e-6 * lr covers that and stays 1000x below a real
// update (lr). SGD has no such amplification (its update is lr * g): 1e-12.
constexpr double kAdamAtolPerLr = 1e-6;

transforms::LeanOps g_lean;  // Tempo's lean layers for the models built (set by their test case)

zoo::ModelConfig mini_config() {
  zoo::ModelConfig c;
  c.batch_size = 2;
  c.dtype = ir::DType::f64;
  c.lean_ops = g_lean;
  return c;  // sequence length and image size: the minis' defaults
}

// ResNet's SGD recipe shape: momentum 0.9 and L2 weight decay.
OptimizerConfig sgd_momentum() {
  OptimizerConfig c;
  c.kind = OptimizerKind::sgd;
  c.lr = {0.05};
  c.momentum = {0.9};
  c.weight_decay = {5e-4};
  return c;
}

OptimizerConfig adam() {
  OptimizerConfig c;
  c.kind = OptimizerKind::adam;
  c.lr = {1e-3};
  return c;
}

OptimizerConfig adamw() {
  OptimizerConfig c;
  c.kind = OptimizerKind::adamw;
  c.lr = {1e-3};
  c.weight_decay = {0.01};
  return c;
}

double parameter_atol(const OptimizerConfig& opt, double lr) {
  return transforms::unfused(opt.kind) == OptimizerKind::sgd ? kAtol : kAdamAtolPerLr * lr;
}

exec::InterpreterOptions options_for(int32_t first_model) {
  exec::InterpreterOptions o;
  o.seed = kSeed;
  o.first_model = first_model;
  return o;
}

// The training-step schedule of `count` models of `model` in one fused sub-array.
std::unique_ptr<ExecRun> array_run(const std::string& model, int32_t count, const OptimizerConfig& opt,
                                   int32_t first_model) {
  policies::ModelArray array;
  array.model = model;
  array.count = count;
  array.config = mini_config();
  array.optimizer = opt;
  return std::make_unique<ExecRun>(policies::build_plain_schedule(policies::sub_array_steps(array, {count})),
                                   options_for(first_model));
}

// One step; its per-model losses.
std::vector<double> run_step(ExecRun& run) {
  const exec::StepResult r = run.interpreter().step();
  REQUIRE_MESSAGE(!r.oom, r.oom_message);
  return r.losses;
}

bool close_scalar(double a, double b) {
  return std::abs(a - b) <= kAtol + kRtol * std::abs(b);
}

// (b): `steps` steps of the width-1 schedule against autograd + torch::optim.
void check_against_autograd(const std::string& model, const OptimizerConfig& opt, int64_t steps = kSteps) {
  INFO(model << " with " << transforms::optimizer_name(opt.kind));
  const ir::Graph forward = zoo::build_model(model, mini_config());
  std::unique_ptr<ExecRun> run = array_run(model, 1, opt, 0);
  const std::vector<at::Tensor> leaves = test::starting_leaves(forward, *run);  // checks the id prefix
  std::vector<double> losses;
  for (int64_t s = 0; s < steps; ++s) losses.push_back(run_step(*run).at(0));
  const test::ReferenceResult ref = test::autograd_reference(forward, leaves, opt, {kSeed, 0, steps});
  REQUIRE(ref.losses.size() == losses.size());
  for (size_t s = 0; s < losses.size(); ++s) {
    CHECK_MESSAGE(close_scalar(losses[s], ref.losses[s]),
                  "loss of step " << s + 1 << ": exec " << losses[s] << ", autograd " << ref.losses[s]);
  }
  const auto grads = test::weight_gradients(run->graph());
  const double atol = parameter_atol(opt, opt.lr.at(0));
  size_t weights = 0;
  for (const ir::Tensor& t : forward.tensors) {
    if (t.role != TensorRole::weight) continue;
    ++weights;
    INFO("weight " << t.name);
    REQUIRE(grads.count(t.id) == 1);
    REQUIRE(ref.gradients.count(t.id) == 1);
    const at::Tensor& grad = run->interpreter().tensor(grads.at(t.id));
    INFO("gradient of the last step: " << test::difference(grad, ref.gradients.at(t.id)));
    CHECK(test::all_close(grad, ref.gradients.at(t.id), kRtol, kAtol));
    const at::Tensor& param = run->interpreter().tensor(t.id);
    INFO("parameter after the last step: " << test::difference(param, ref.parameters.at(t.id)));
    CHECK(test::all_close(param, ref.parameters.at(t.id), kRtol, atol));
    // The step moved it (a comparison of two unchanged parameters would prove nothing).
    CHECK_FALSE(at::equal(param, leaves[static_cast<size_t>(t.id)]));
  }
  CHECK(weights > 10);
}

// (c): width 3 with learning rates 1e-3, 2e-3, 3e-3 against three width-1 runs as models 0, 1, 2.
// Before step 2 each width-1 run takes its model's parameters and optimizer state from the fused
// run, so that step 2 too is compared from one state: the fused optimizer's per-model arithmetic
// rounds differently from the scalar one (~1e-16 relative), and the mini CNNs at batch 2 amplify
// a 1e-16 change of their weights into ~1e-8 of their next gradients (batch norm over 2 values per
// channel in the last stage; measured by perturbing the weights of one run), which says nothing
// about fusion.
void check_fused(const std::string& model, OptimizerConfig opt) {
  INFO(model << " x" << kFusedWidth << " with " << transforms::optimizer_name(opt.kind));
  const std::vector<double> lrs{1e-3, 2e-3, 3e-3};
  opt.lr = lrs;
  std::unique_ptr<ExecRun> fused = array_run(model, kFusedWidth, opt, 0);
  std::vector<std::unique_ptr<ExecRun>> alone;
  for (int32_t m = 0; m < kFusedWidth; ++m) {
    OptimizerConfig own = opt;
    own.lr = {lrs[static_cast<size_t>(m)]};
    alone.push_back(array_run(model, 1, own, m));
  }
  const auto fused_grads = test::weight_gradients(fused->graph());
  const auto slice_of = [&](TensorId id, int32_t m) {
    return test::model_slice(fused->interpreter().tensor(id), fused->axes().at(static_cast<size_t>(id)),
                             kFusedWidth, m);
  };
  for (int64_t step = 1; step <= kSteps; ++step) {
    INFO("step " << step);
    const std::vector<double> fused_losses = run_step(*fused);
    for (int32_t m = 0; m < kFusedWidth; ++m) {
      INFO("model " << m);
      ExecRun& single = *alone[static_cast<size_t>(m)];
      const double loss = run_step(single).at(0);
      CHECK_MESSAGE(close_scalar(fused_losses.at(static_cast<size_t>(m)), loss),
                    "loss: fused " << fused_losses.at(static_cast<size_t>(m)) << ", alone " << loss);
      const auto grads = test::weight_gradients(single.graph());
      const double atol = parameter_atol(opt, lrs[static_cast<size_t>(m)]);
      size_t states = 0;
      for (const ir::Tensor& t : single.graph().tensors) {
        if (t.role != TensorRole::weight && t.role != TensorRole::optimizer_state) continue;
        INFO(ir::role_name(t.role) << " " << t.name);
        const TensorId id = test::tensor_named(fused->graph(), t.name);
        const at::Tensor& value = single.interpreter().tensor(t.id);
        INFO("after the step: " << test::difference(slice_of(id, m), value));
        CHECK(test::all_close(slice_of(id, m), value, kRtol, t.role == TensorRole::weight ? atol : kAtol));
        if (t.role == TensorRole::optimizer_state) {
          ++states;
          continue;
        }
        const at::Tensor& grad = single.interpreter().tensor(grads.at(t.id));
        INFO("gradient: " << test::difference(slice_of(fused_grads.at(id), m), grad));
        CHECK(test::all_close(slice_of(fused_grads.at(id), m), grad, kRtol, kAtol));
      }
      CHECK(states > 0);
      if (step == kSteps) continue;
      for (const ir::Tensor& t : single.graph().tensors) {
        if (t.role == TensorRole::weight || t.role == TensorRole::optimizer_state) {
          single.interpreter().set_tensor(t.id, slice_of(test::tensor_named(fused->graph(), t.name), m));
        }
      }
    }
  }
}

}  // namespace

// ---- (b) one model against autograd + torch::optim ---------------------------------------------

TEST_CASE(
    "bert-mini (MLM + NSP, dropout): SGD-momentum, Adam and AdamW steps equal autograd + torch::optim") {
  check_against_autograd("bert-mini", sgd_momentum());
  check_against_autograd("bert-mini", adam());
  check_against_autograd("bert-mini", adamw());
}

TEST_CASE("bert-mini with fused Adam and AdamW (fused=True): on the CPU the steps equal torch::optim's") {
  // Off CUDA the executor runs a fused step as the single-tensor form (exec/kernels/optimizer.cpp).
  OptimizerConfig fused = adam();
  fused.kind = OptimizerKind::adam_fused;
  check_against_autograd("bert-mini", fused);
  fused = adamw();
  fused.kind = OptimizerKind::adamw_fused;
  check_against_autograd("bert-mini", fused);
}

TEST_CASE("bert-mini with the BertAdams: the steps equal their update rules (no bias correction; clipping)") {
  OptimizerConfig bert = adamw();
  bert.kind = OptimizerKind::bert_adam;
  check_against_autograd("bert-mini", bert);
  bert.weight_decay = {0.0};
  check_against_autograd("bert-mini", bert);
  // pytorch-pretrained-bert's: each gradient clipped in place to norm 1 by its own norm first.
  bert.kind = OptimizerKind::bert_adam_hf;
  check_against_autograd("bert-mini", bert);
  bert.weight_decay = {0.01};
  check_against_autograd("bert-mini", bert);
}

TEST_CASE("gpt2-mini (causal attention, tied lm_head): SGD-momentum, Adam and AdamW steps equal autograd") {
  check_against_autograd("gpt2-mini", sgd_momentum());
  check_against_autograd("gpt2-mini", adam());
  check_against_autograd("gpt2-mini", adamw());
}

TEST_CASE(
    "vit-mini (patches, class token): SGD-momentum, Adam and AdamW steps equal autograd + torch::optim") {
  check_against_autograd("vit-mini", sgd_momentum());
  check_against_autograd("vit-mini", adam());
  check_against_autograd("vit-mini", adamw());
}

TEST_CASE("resnet-mini (basic blocks): SGD-momentum, Adam and AdamW steps equal autograd + torch::optim") {
  check_against_autograd("resnet-mini", sgd_momentum());
  check_against_autograd("resnet-mini", adam());
  check_against_autograd("resnet-mini", adamw());
}

// One step only: at batch 2 this network's last stages normalise 2-8 values per channel, and a
// 1e-16 relative change of its weights moves its next gradients by ~1e-8 (measured), so a second
// step would compare rounding of the first amplified 1e8 times (resnet-mini: 1e4, kept at two).
TEST_CASE("resnet-bottleneck-mini (bottlenecks): SGD-momentum, Adam and AdamW steps equal autograd") {
  check_against_autograd("resnet-bottleneck-mini", sgd_momentum(), 1);
  check_against_autograd("resnet-bottleneck-mini", adam(), 1);
  check_against_autograd("resnet-bottleneck-mini", adamw(), 1);
}

TEST_CASE("mobilenetv2-mini (depthwise, relu6, dropout): SGD-momentum, Adam and AdamW steps equal autograd") {
  check_against_autograd("mobilenetv2-mini", sgd_momentum());
  check_against_autograd("mobilenetv2-mini", adam());
  check_against_autograd("mobilenetv2-mini", adamw());
}

TEST_CASE(
    "mobilenetv3-mini (hardswish, squeeze-excitation): SGD-momentum, Adam and AdamW steps equal autograd") {
  check_against_autograd("mobilenetv3-mini", sgd_momentum());
  check_against_autograd("mobilenetv3-mini", adam());
  check_against_autograd("mobilenetv3-mini", adamw());
}

TEST_CASE(
    "dlrm-mini (embedding bags, dot interaction, BCE): SGD-momentum, Adam and AdamW steps equal autograd") {
  check_against_autograd("dlrm-mini", sgd_momentum());
  check_against_autograd("dlrm-mini", adam());
  check_against_autograd("dlrm-mini", adamw());
}

// ---- (c) a fused width-3 step against 3 separate steps -----------------------------------------

TEST_CASE("bert-mini x3 fused (Adam, per-model lr): each model's losses, gradients and parameters alone") {
  check_fused("bert-mini", adam());
}

TEST_CASE("gpt2-mini x3 fused (AdamW, per-model lr): each model's losses, gradients and parameters alone") {
  check_fused("gpt2-mini", adamw());
}

TEST_CASE("vit-mini x3 fused (Adam, per-model lr): each model's losses, gradients and parameters alone") {
  check_fused("vit-mini", adam());
}

TEST_CASE(
    "resnet-mini x3 fused (SGD-momentum, per-model lr): each model's losses, gradients and parameters") {
  check_fused("resnet-mini", sgd_momentum());
}

TEST_CASE("resnet-bottleneck-mini x3 fused (Adam, per-model lr): each model as if trained alone") {
  check_fused("resnet-bottleneck-mini", adam());
}

TEST_CASE("mobilenetv2-mini x3 fused (AdamW, per-model lr): each model as if trained alone") {
  check_fused("mobilenetv2-mini", adamw());
}

TEST_CASE("mobilenetv3-mini x3 fused (Adam, per-model lr): each model as if trained alone") {
  check_fused("mobilenetv3-mini", adam());
}

TEST_CASE("bert-mini and resnet-mini x3 fused (BertAdam clipping each gradient): each model as if alone") {
  // Each model's gradient is clipped by its own norm: stacked weights (bert) and dim-0 chunks (conv).
  OptimizerConfig hf = adamw();
  hf.kind = OptimizerKind::bert_adam_hf;
  check_fused("bert-mini", hf);
  check_fused("resnet-mini", hf);
}

TEST_CASE("dlrm-mini x3 fused (SGD-momentum, per-model lr): each model as if trained alone") {
  check_fused("dlrm-mini", sgd_momentum());
}

// ---- Tempo's lean layers (transforms/lean_ops.hpp) -------------------------------------------------

TEST_CASE(
    "bert-mini and gpt2-mini with Tempo's lean layers: autograd's steps of the plain models, alone and x3") {
  // The rewritten graphs (in-place GELU, in-place LayerNorm, attention dropout recomputed) against
  // autograd of the plain ops they stand in for, two steps, then fused at width 3.
  g_lean = transforms::parse_lean_ops("tempo");
  check_against_autograd("bert-mini", adam());
  check_against_autograd("gpt2-mini", adamw());
  check_fused("bert-mini", adam());
  check_fused("gpt2-mini", adamw());
  g_lean = {};
}
