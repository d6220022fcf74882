#pragma once
// Fixtures shared by tests/test_exec_kernels.cpp and tests/test_exec_kernels_tensor_ops.cpp.
#include "tests/support/torch_doctest.hpp"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "exec/interpreter.hpp"
#include "exec/model_layout.hpp"
#include "ir/graph_builder.hpp"
#include "tests/support/autograd_reference.hpp"
#include "transforms/autodiff.hpp"
#include "transforms/fusion.hpp"
#include "transforms/lean_ops.hpp"

using namespace mutwo;
using ir::Attributes;
using ir::DType;
using ir::FuseAxis;
using ir::GraphBuilder;
using ir::OpKind;
using ir::TensorId;
using ir::TensorRole;
using test::ExecRun;

namespace {

using Shape = std::vector<int64_t>;

constexpr uint64_t kSeed = 20240521;
constexpr int64_t kBatch = 2;
constexpr int32_t kFusedWidth = 2;

// Tolerances (f64, unit roundoff 1.1e-16). The explicit backward kernels (mm, convolution_backward,
// native_layer_norm_backward, ...) and autograd's derivative formulas compute the same sums in other
// orders and groupings, so they agree to rounding: a few ulps per op, over reductions of at most
// ~100 terms here, i.e. ~1e-14 relative. 1e-10 leaves four orders of margin for that, while a wrong
// formula (a missing scale, a transposed operand, a dropped term) is off by O(1). The absolute
// floor 1e-12 is for entries whose exact value is 0 but come out as rounding noise (~1e-17).
constexpr double kRtol = 1e-10;
constexpr double kAtol = 1e-12;

inline bool close_scalar(double a, double b) {
  return std::abs(a - b) <= kAtol + kRtol * std::abs(b);
}

inline transforms::OptimizerConfig sgd_lr0() {
  transforms::OptimizerConfig c;
  c.kind = transforms::OptimizerKind::sgd;
  c.lr = {0.0};
  c.momentum = {0.0};
  return c;
}

inline exec::InterpreterOptions options_for(int32_t first_model) {
  exec::InterpreterOptions o;
  o.seed = kSeed;
  o.first_model = first_model;
  return o;
}

// Model m's random value of weight `id`: N(0, scale^2), from a generator of its own.
inline at::Tensor random_weight(const Shape& shape, int32_t model, TensorId id, double scale) {
  at::Generator gen = at::detail::createCPUGenerator(
      kSeed * 1000003ull + static_cast<uint64_t>(model) * 7919ull + static_cast<uint64_t>(id));
  return at::randn(shape, gen, at::TensorOptions().dtype(at::kDouble)).mul_(scale);
}

inline TensorId weight(GraphBuilder& b, const std::string& name, const Shape& shape) {
  return b.add_weight(name, shape, FuseAxis::stack);  // the fused layout comes from the readers
}

inline TensorId index_input(GraphBuilder& b, const std::string& name, const Shape& shape) {
  return b.add_input(name, shape, TensorRole::input, FuseAxis::stack, DType::i64);
}

// Mean BCE with logits of x against a float label of its shape (stacked layout when fused).
inline void bce_loss(GraphBuilder& b, TensorId x) {
  const TensorId labels = b.add_input("tail.labels", b.tensor(x).shape, TensorRole::label, FuseAxis::stack);
  b.add_op(OpKind::bce_with_logits, "tail.loss", {x, labels});
}

// For a [B,C,H,W] output in the channel layout (conv, batch norm, pooling): the ViT class-token
// concat turns it into [B,1+H*W,C] tokens in the stacked layout (every element keeps its own
// gradient), then BCE. At width k the loss cannot read the channel layout directly.
inline void channel_bce_loss(GraphBuilder& b, TensorId x) {
  const int64_t channels = b.tensor(x).shape.at(1);
  const TensorId token = weight(b, "tail.class_token", {1, 1, channels});
  bce_loss(b, b.op(OpKind::class_token_concat, "tail.tokens", {x, token}));
}

using BuildFn = void (*)(GraphBuilder&);

// Width-1 run of model m with random weights, checked against autograd; returns the run.
inline std::unique_ptr<ExecRun> check_against_autograd(const ir::Graph& forward, int32_t model, double scale,
                                                       double* loss_out) {
  std::unique_ptr<ExecRun> run =
      ExecRun::of_step(transforms::build_training_step(forward, sgd_lr0()), options_for(model));
  for (const ir::Tensor& t : forward.tensors) {
    if (t.role == TensorRole::weight && ir::is_floating(t.dtype)) {
      run->interpreter().set_tensor(t.id, random_weight(t.shape, model, t.id, scale));
    }
  }
  const std::vector<at::Tensor> leaves = test::starting_leaves(forward, *run);
  const exec::StepResult step = run->interpreter().step();
  REQUIRE_MESSAGE(!step.oom, step.oom_message);
  REQUIRE(step.losses.size() == 1);
  const test::ReferenceResult ref =
      test::autograd_reference(forward, leaves, sgd_lr0(), test::ReferenceRun{kSeed, model, 1});
  INFO("model " << model);
  CHECK_MESSAGE(close_scalar(step.losses[0], ref.losses.at(0)),
                "loss: exec " << step.losses[0] << ", autograd " << ref.losses.at(0));
  *loss_out = step.losses[0];

  const auto grads = test::weight_gradients(run->graph());
  size_t compared = 0;
  for (const ir::Tensor& t : forward.tensors) {
    if (t.role != TensorRole::weight) continue;
    INFO("gradient of " << t.name);
    REQUIRE(grads.count(t.id) == 1);
    REQUIRE(ref.gradients.count(t.id) == 1);
    const at::Tensor& ours = run->interpreter().tensor(grads.at(t.id));
    const at::Tensor& theirs = ref.gradients.at(t.id);
    INFO(test::difference(ours, theirs));
    CHECK(test::all_close(ours, theirs, kRtol, kAtol));
    // A gradient that is all zeros would make the comparison vacuous.
    CHECK(theirs.abs().max().item<double>() > 0.0);
    ++compared;
  }
  CHECK(compared > 0);
  return run;
}

// The graph fused at width 2, model m's weights set to model m's values of the width-1 runs:
// each model's loss and gradient slices equal its width-1 run's.
inline void check_fused(const ir::Graph& forward, const std::vector<std::unique_ptr<ExecRun>>& singles,
                        const std::vector<double>& single_losses) {
  const auto width = static_cast<int32_t>(singles.size());
  const ir::Graph fused_forward = transforms::horizontal_fuse(forward, width);
  std::unique_ptr<ExecRun> fused =
      ExecRun::of_step(transforms::build_training_step(fused_forward, sgd_lr0()), options_for(0));
  const ir::Graph& g = fused->graph();
  for (const ir::Tensor& t : fused_forward.tensors) {
    if (t.producer != ir::kNoId) continue;
    const TensorId single_id = test::tensor_named(forward, t.name);
    const exec::ModelAxis axis = fused->axes().at(static_cast<size_t>(t.id));
    if (t.role == TensorRole::weight && ir::is_floating(t.dtype)) {
      at::Tensor value = fused->interpreter().tensor(t.id).clone();
      for (int32_t m = 0; m < width; ++m) {
        test::model_slice(value, axis, width, m).copy_(singles[m]->interpreter().tensor(single_id));
      }
      fused->interpreter().set_tensor(t.id, value);
      continue;
    }
    // Inputs and labels: exec's leaf values put model m's own values in slice m (leaf_init.hpp).
    const at::Tensor value = fused->starting_value(t.id);
    for (int32_t m = 0; m < width; ++m) {
      INFO("input " << t.name << " of model " << m);
      CHECK(at::equal(test::model_slice(value, axis, width, m), singles[m]->starting_value(single_id)));
    }
  }
  const exec::StepResult step = fused->interpreter().step();
  REQUIRE_MESSAGE(!step.oom, step.oom_message);
  REQUIRE(step.losses.size() == static_cast<size_t>(width));
  const auto grads = test::weight_gradients(g);
  for (int32_t m = 0; m < width; ++m) {
    INFO("fused model " << m);
    CHECK_MESSAGE(close_scalar(step.losses[m], single_losses[m]),
                  "loss: fused " << step.losses[m] << ", alone " << single_losses[m]);
    const auto single_grads = test::weight_gradients(singles[m]->graph());
    for (const ir::Tensor& t : fused_forward.tensors) {
      if (t.role != TensorRole::weight) continue;
      INFO("gradient of " << t.name);
      const TensorId grad = grads.at(t.id);
      const at::Tensor ours = test::model_slice(fused->interpreter().tensor(grad),
                                                fused->axes().at(static_cast<size_t>(grad)), width, m);
      const at::Tensor& alone =
          singles[m]->interpreter().tensor(single_grads.at(test::tensor_named(forward, t.name)));
      INFO(test::difference(ours, alone));
      CHECK(test::all_close(ours, alone, kRtol, kAtol));
    }
  }
}

// Both checks for the width-1 forward graph `build` makes (with `lean` applied), fused at `width`.
inline void check_kind(BuildFn build, double scale = 1.0, int32_t width = kFusedWidth,
                       const transforms::LeanOps& lean = {}) {
  GraphBuilder b("kind", DType::f64, 1, kBatch);
  build(b);
  const ir::Graph forward = transforms::apply_lean_ops(std::move(b).finish(), lean);
  std::vector<std::unique_ptr<ExecRun>> singles;
  std::vector<double> losses(static_cast<size_t>(width));
  for (int32_t m = 0; m < width; ++m) {
    singles.push_back(check_against_autograd(forward, m, scale, &losses[static_cast<size_t>(m)]));
  }
  check_fused(forward, singles, losses);
}

inline Attributes conv_attrs(int64_t stride, int64_t padding, int64_t groups) {
  return {{"stride", Shape{stride, stride}}, {"padding", Shape{padding, padding}}, {"groups", groups}};
}

}  // namespace

// ---- dense ---------------------------------------------------------------------------------------
