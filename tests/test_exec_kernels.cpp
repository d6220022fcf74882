// exec/'s op kernels against LibTorch autograd, on the CPU in double precision. For every forward
// kind the zoo uses, a tiny width-1 graph in which every floating leaf is a weight and the op's
// output feeds a loss (BCE with logits against a float label, or the op itself when it is a loss):
//   1. one training step (SGD, lr 0) on exec's CPU backend gives, through the kind's explicit
//      backward kernel, the gradient autograd computes for the same forward written with
//      high-level differentiable ATen ops (tests/support/autograd_reference.hpp), for every weight;
//   2. the same graph fused at width 2 (transforms::horizontal_fuse, HFTA layouts) gives each model
//      the loss and gradients of that model run alone (InterpreterOptions::first_model).
// Weights are N(0, scale^2) per model, so that activations cross their kinks (relu6 at 6,
// hardswish at +-3 need scale 4); inputs and labels are exec's own leaf values.
// doctest after LibTorch's logging, whose glog CHECK macros would replace doctest's.
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

bool close_scalar(double a, double b) {
  return std::abs(a - b) <= kAtol + kRtol * std::abs(b);
}

transforms::OptimizerConfig sgd_lr0() {
  transforms::OptimizerConfig c;
  c.kind = transforms::OptimizerKind::sgd;
  c.lr = {0.0};
  c.momentum = {0.0};
  return c;
}

exec::InterpreterOptions options_for(int32_t first_model) {
  exec::InterpreterOptions o;
  o.seed = kSeed;
  o.first_model = first_model;
  return o;
}

// Model m's random value of weight `id`: N(0, scale^2), from a generator of its own.
at::Tensor random_weight(const Shape& shape, int32_t model, TensorId id, double scale) {
  at::Generator gen = at::detail::createCPUGenerator(
      kSeed * 1000003ull + static_cast<uint64_t>(model) * 7919ull + static_cast<uint64_t>(id));
  return at::randn(shape, gen, at::TensorOptions().dtype(at::kDouble)).mul_(scale);
}

TensorId weight(GraphBuilder& b, const std::string& name, const Shape& shape) {
  return b.add_weight(name, shape, FuseAxis::stack);  // the fused layout comes from the readers
}

TensorId index_input(GraphBuilder& b, const std::string& name, const Shape& shape) {
  return b.add_input(name, shape, TensorRole::input, FuseAxis::stack, DType::i64);
}

// Mean BCE with logits of x against a float label of its shape (stacked layout when fused).
void bce_loss(GraphBuilder& b, TensorId x) {
  const TensorId labels = b.add_input("tail.labels", b.tensor(x).shape, TensorRole::label, FuseAxis::stack);
  b.add_op(OpKind::bce_with_logits, "tail.loss", {x, labels});
}

// For a [B,C,H,W] output in the channel layout (conv, batch norm, pooling): the ViT class-token
// concat turns it into [B,1+H*W,C] tokens in the stacked layout (every element keeps its own
// gradient), then BCE. At width k the loss cannot read the channel layout directly.
void channel_bce_loss(GraphBuilder& b, TensorId x) {
  const int64_t channels = b.tensor(x).shape.at(1);
  const TensorId token = weight(b, "tail.class_token", {1, 1, channels});
  bce_loss(b, b.op(OpKind::class_token_concat, "tail.tokens", {x, token}));
}

using BuildFn = void (*)(GraphBuilder&);

// Width-1 run of model m with random weights, checked against autograd; returns the run.
std::unique_ptr<ExecRun> check_against_autograd(const ir::Graph& forward, int32_t model, double scale,
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
void check_fused(const ir::Graph& forward, const std::vector<std::unique_ptr<ExecRun>>& singles,
                 const std::vector<double>& single_losses) {
  const auto kFusedWidth = static_cast<int32_t>(singles.size());
  const ir::Graph fused_forward = transforms::horizontal_fuse(forward, kFusedWidth);
  std::unique_ptr<ExecRun> fused =
      ExecRun::of_step(transforms::build_training_step(fused_forward, sgd_lr0()), options_for(0));
  const ir::Graph& g = fused->graph();
  for (const ir::Tensor& t : fused_forward.tensors) {
    if (t.producer != ir::kNoId) continue;
    const TensorId single_id = test::tensor_named(forward, t.name);
    const exec::ModelAxis axis = fused->axes().at(static_cast<size_t>(t.id));
    if (t.role == TensorRole::weight && ir::is_floating(t.dtype)) {
      at::Tensor value = fused->interpreter().tensor(t.id).clone();
      for (int32_t m = 0; m < kFusedWidth; ++m) {
        test::model_slice(value, axis, kFusedWidth, m).copy_(singles[m]->interpreter().tensor(single_id));
      }
      fused->interpreter().set_tensor(t.id, value);
      continue;
    }
    // Inputs and labels: exec's leaf values put model m's own values in slice m (leaf_init.hpp).
    const at::Tensor value = fused->starting_value(t.id);
    for (int32_t m = 0; m < kFusedWidth; ++m) {
      INFO("input " << t.name << " of model " << m);
      CHECK(at::equal(test::model_slice(value, axis, kFusedWidth, m), singles[m]->starting_value(single_id)));
    }
  }
  const exec::StepResult step = fused->interpreter().step();
  REQUIRE_MESSAGE(!step.oom, step.oom_message);
  REQUIRE(step.losses.size() == static_cast<size_t>(kFusedWidth));
  const auto grads = test::weight_gradients(g);
  for (int32_t m = 0; m < kFusedWidth; ++m) {
    INFO("fused model " << m);
    CHECK_MESSAGE(close_scalar(step.losses[m], single_losses[m]),
                  "loss: fused " << step.losses[m] << ", alone " << single_losses[m]);
    const auto single_grads = test::weight_gradients(singles[m]->graph());
    for (const ir::Tensor& t : fused_forward.tensors) {
      if (t.role != TensorRole::weight) continue;
      INFO("gradient of " << t.name);
      const TensorId grad = grads.at(t.id);
      const at::Tensor ours = test::model_slice(fused->interpreter().tensor(grad),
                                                fused->axes().at(static_cast<size_t>(grad)), kFusedWidth, m);
      const at::Tensor& alone =
          singles[m]->interpreter().tensor(single_grads.at(test::tensor_named(forward, t.name)));
      INFO(test::difference(ours, alone));
      CHECK(test::all_close(ours, alone, kRtol, kAtol));
    }
  }
}

// Both checks for the width-1 forward graph `build` makes (with `lean` applied), fused at `width`.
void check_kind(BuildFn build, double scale = 1.0, int32_t width = kFusedWidth,
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

Attributes conv_attrs(int64_t stride, int64_t padding, int64_t groups) {
  return {{"stride", Shape{stride, stride}}, {"padding", Shape{padding, padding}}, {"groups", groups}};
}

}  // namespace

// ---- dense ---------------------------------------------------------------------------------------

TEST_CASE(
    "linear with bias (3-D input): dX, dW, db equal autograd's; fused it is a batched matmul per model") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 5});
    const TensorId w = weight(b, "fc.weight", {4, 5});
    const TensorId bias = weight(b, "fc.bias", {4});
    bce_loss(b, b.op(OpKind::linear, "fc", {x, w, bias}));
  });
}

TEST_CASE("linear without bias (2-D input): dX, dW equal autograd's, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 5});
    const TensorId w = weight(b, "fc.weight", {3, 5});
    bce_loss(b, b.op(OpKind::linear, "fc", {x, w}));
  });
}

TEST_CASE("attn_scores (not causal): dq, dk equal autograd's of matmul(q_h, k_h^T) * scale") {
  check_kind([](GraphBuilder& b) {
    const TensorId q = weight(b, "q", {kBatch, 4, 6});
    const TensorId k = weight(b, "k", {kBatch, 4, 6});
    const TensorId s = b.op(OpKind::attn_scores, "scores", {q, k},
                            {{"heads", int64_t{2}}, {"causal", int64_t{0}}, {"scale", 1.0 / std::sqrt(3.0)}});
    bce_loss(b, b.op(OpKind::softmax, "softmax", {s}));
  });
}

TEST_CASE("attn_scores (causal): masked with finfo.min above the diagonal, no gradient through the mask") {
  check_kind([](GraphBuilder& b) {
    const TensorId q = weight(b, "q", {kBatch, 4, 6});
    const TensorId k = weight(b, "k", {kBatch, 4, 6});
    const TensorId s = b.op(OpKind::attn_scores, "scores", {q, k},
                            {{"heads", int64_t{2}}, {"causal", int64_t{1}}, {"scale", 1.0 / std::sqrt(3.0)}});
    bce_loss(b, b.op(OpKind::softmax, "softmax", {s}));
  });
}

TEST_CASE("attn_context: dp, dv equal autograd's of matmul(p, v_h) with heads merged") {
  check_kind([](GraphBuilder& b) {
    const TensorId p = weight(b, "p", {kBatch, 2, 4, 4});
    const TensorId v = weight(b, "v", {kBatch, 4, 6});
    bce_loss(b, b.op(OpKind::attn_context, "context", {p, v}));
  });
}

// ---- convolution family --------------------------------------------------------------------------

TEST_CASE(
    "conv2d stride 2, padding 1, with bias: convolution_backward equals autograd; fused = grouped conv") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 4, 7, 7});
    const TensorId w = weight(b, "conv.weight", {6, 4, 3, 3});
    const TensorId bias = weight(b, "conv.bias", {6});
    channel_bce_loss(b, b.op(OpKind::conv2d, "conv", {x, w, bias}, conv_attrs(2, 1, 1)));
  });
}

TEST_CASE("conv2d with 2 groups, no bias: dX, dW equal autograd's, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 4, 6, 6});
    const TensorId w = weight(b, "conv.weight", {6, 2, 3, 3});
    channel_bce_loss(b, b.op(OpKind::conv2d, "conv", {x, w}, conv_attrs(1, 1, 2)));
  });
}

TEST_CASE("conv2d depthwise (groups = channels), stride 2: dX, dW equal autograd's, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 4, 5, 5});
    const TensorId w = weight(b, "conv.weight", {4, 1, 3, 3});
    channel_bce_loss(b, b.op(OpKind::conv2d, "conv", {x, w}, conv_attrs(2, 1, 4)));
  });
}

TEST_CASE("max_pool2d 3x3/2 with padding 1: the gradient goes to autograd's argmax, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 6, 6});
    channel_bce_loss(b, b.op(OpKind::max_pool2d, "pool", {x},
                             {{"kernel", Shape{3, 3}}, {"stride", Shape{2, 2}}, {"padding", Shape{1, 1}}}));
  });
}

TEST_CASE("adaptive_avg_pool2d to 1x1: each input receives its channel's gradient / (H*W)") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 4, 4});
    channel_bce_loss(b, b.op(OpKind::adaptive_avg_pool2d, "pool", {x}));
  });
}

TEST_CASE("flatten of [B,C,1,1]: the gradient is reshaped back; fused it turns channel into stack layout") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 1, 1});
    bce_loss(b, b.op(OpKind::flatten, "flatten", {x}));
  });
}

// ---- normalisation -------------------------------------------------------------------------------

TEST_CASE("batchnorm2d (training, batch statistics): dX, dgamma, dbeta equal autograd's of at::batch_norm") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 4, 4});
    const TensorId gamma = weight(b, "bn.weight", {3});
    const TensorId beta = weight(b, "bn.bias", {3});
    channel_bce_loss(b, b.op(OpKind::batchnorm2d, "bn", {x, gamma, beta}, {{"eps", 1e-5}}));
  });
}

TEST_CASE(
    "layernorm over the last dim (3-D input): dX, dgamma, dbeta equal autograd's; fused affine per model") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 6});
    const TensorId gamma = weight(b, "ln.weight", {6});
    const TensorId beta = weight(b, "ln.bias", {6});
    bce_loss(b, b.op(OpKind::layernorm, "ln", {x, gamma, beta}, {{"eps", 1e-12}}));
  });
}

TEST_CASE("layernorm of a 2-D input: dX, dgamma, dbeta equal autograd's, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 6});
    const TensorId gamma = weight(b, "ln.weight", {6});
    const TensorId beta = weight(b, "ln.bias", {6});
    bce_loss(b, b.op(OpKind::layernorm, "ln", {x, gamma, beta}, {{"eps", 1e-5}}));
  });
}

// ---- elementwise ---------------------------------------------------------------------------------

template <OpKind Kind>
void activation(GraphBuilder& b) {
  bce_loss(b, b.op(Kind, "act", {weight(b, "x", {kBatch, 3, 5})}));
}

TEST_CASE("relu: threshold_backward of the saved result equals autograd's") {
  check_kind(activation<OpKind::relu>);
}

TEST_CASE("relu6: hardtanh_backward of the saved input equals autograd's (inputs beyond 0 and 6)") {
  check_kind(activation<OpKind::relu6>, 4.0);
}

TEST_CASE("gelu erf (BERT, ViT): gelu_backward equals autograd's of at::gelu") {
  check_kind([](GraphBuilder& b) {
    bce_loss(b, b.op(OpKind::gelu, "act", {weight(b, "x", {kBatch, 3, 5})}, {{"approximate", int64_t{0}}}));
  });
}

TEST_CASE("gelu tanh (GPT-2 gelu_new): gelu_backward equals autograd's of at::gelu(approximate tanh)") {
  check_kind([](GraphBuilder& b) {
    bce_loss(b, b.op(OpKind::gelu, "act", {weight(b, "x", {kBatch, 3, 5})}, {{"approximate", int64_t{1}}}));
  });
}

TEST_CASE("tanh: tanh_backward of the saved result equals autograd's") {
  check_kind(activation<OpKind::tanh>);
}

TEST_CASE("sigmoid: sigmoid_backward of the saved result equals autograd's") {
  check_kind(activation<OpKind::sigmoid>);
}

TEST_CASE("hardswish: hardswish_backward equals autograd's (inputs beyond -3 and 3)") {
  check_kind(activation<OpKind::hardswish>, 4.0);
}

TEST_CASE("hardsigmoid: hardsigmoid_backward equals autograd's (inputs beyond -3 and 3)") {
  check_kind(activation<OpKind::hardsigmoid>, 4.0);
}

// ---- Tempo's lean layers (ir/kinds/lean.cpp): the plain op's result and gradients ----------
// Each built plain, rewritten by transforms::apply_lean_ops, checked against autograd of the plain
// op alone and fused at width 3.

TEST_CASE("gelu_lean erf: the gradient from y and the mask equals autograd's of at::gelu, alone and x3") {
  // Scale 2 puts inputs on both branches of gelu^-1 (x < -0.75 and beyond); the rewrite gave it the mask.
  const transforms::LeanOps lean = transforms::parse_lean_ops("gelu");
  for (int64_t approximate : {0, 1}) {
    CAPTURE(approximate);
    static int64_t mode = 0;
    mode = approximate;
    check_kind(
        [](GraphBuilder& b) {
          bce_loss(b, b.op(OpKind::gelu, "act", {weight(b, "x", {kBatch, 3, 5})}, {{"approximate", mode}}));
        },
        2.0, 3, lean);
  }
}

TEST_CASE("layernorm_lean: dX, dgamma, dbeta from y and rstd equal autograd's of at::layer_norm, alone and x3") {
  check_kind(
      [](GraphBuilder& b) {
        const TensorId x = weight(b, "x", {kBatch, 3, 6});
        const TensorId gamma = weight(b, "ln.weight", {6});
        const TensorId beta = weight(b, "ln.bias", {6});
        bce_loss(b, b.op(OpKind::layernorm, "ln", {x, gamma, beta}, {{"eps", 1e-5}}));
      },
      1.0, 3, transforms::parse_lean_ops("layernorm"));
}

TEST_CASE("attn_dropout_context: dropout(p) rebuilt from p and the mask; equals autograd's, alone and x3") {
  // softmax -> dropout 0.1 -> context, the BERT pattern the rewrite fuses; q, k, v are weights.
  check_kind(
      [](GraphBuilder& b) {
        const TensorId q = weight(b, "q", {kBatch, 4, 6});
        const TensorId k = weight(b, "k", {kBatch, 4, 6});
        const TensorId v = weight(b, "v", {kBatch, 4, 6});
        TensorId p = b.op(OpKind::attn_scores, "scores", {q, k},
                          {{"heads", int64_t{2}}, {"causal", int64_t{0}}, {"scale", 1.0 / std::sqrt(3.0)}});
        p = b.op(OpKind::softmax, "softmax", {p});
        p = b.op(OpKind::dropout, "attn_dropout", {p}, {{"p", 0.1}});
        bce_loss(b, b.op(OpKind::attn_context, "context", {p, v}));
      },
      1.0, 3, transforms::parse_lean_ops("attention"));
}

TEST_CASE("dropout p 0.3: y = x * mask / 0.7 and its backward; fused, each model draws its own mask") {
  check_kind([](GraphBuilder& b) {
    bce_loss(b, b.op(OpKind::dropout, "drop", {weight(b, "x", {kBatch, 4, 8})}, {{"p", 0.3}}));
  });
}

TEST_CASE("add of equal shapes: both operands receive the output gradient") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "a", {kBatch, 3, 4});
    const TensorId y = weight(b, "b", {kBatch, 3, 4});
    bce_loss(b, b.op(OpKind::add, "add", {x, y}));
  });
}

TEST_CASE("add with broadcast (position embedding [1,T,C]): sum_to_shape sums the gradient over the batch") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 4});
    const TensorId pos = weight(b, "pos", {1, 3, 4});
    bce_loss(b, b.op(OpKind::add, "add", {x, pos}));
  });
}

TEST_CASE("a tensor read by two ops: accumulate_grad sums both gradients (tanh(x) + x)") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 4});
    const TensorId h = b.op(OpKind::tanh, "tanh", {x});
    bce_loss(b, b.op(OpKind::add, "residual", {h, x}));
  });
}

TEST_CASE("mul of equal shapes: da = dY b, db = dY a") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "a", {kBatch, 3, 4});
    const TensorId y = weight(b, "b", {kBatch, 3, 4});
    bce_loss(b, b.op(OpKind::mul, "mul", {x, y}));
  });
}

TEST_CASE("mul with broadcast ([B,C,H,W] * [B,C,1,1]): the scale's gradient is summed over H, W") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 4, 3, 3});
    const TensorId s = weight(b, "s", {kBatch, 4, 1, 1});
    bce_loss(b, b.op(OpKind::mul, "mul", {x, s}));
  });
}

TEST_CASE("squeeze-excitation mul in the channel layout (conv -> avgpool -> scale): equals autograd, fused") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 4, 3, 3});
    const TensorId w = weight(b, "conv.weight", {4, 4, 1, 1});
    const TensorId y = b.op(OpKind::conv2d, "conv", {x, w});
    const TensorId s = b.op(OpKind::adaptive_avg_pool2d, "avgpool", {y});
    channel_bce_loss(b, b.op(OpKind::mul, "scale", {y, s}));
  });
}

TEST_CASE("cast to fp32 and back: the forward rounds, cast_backward casts the gradient back, as _to_copy") {
  // x (f64) -> f32 -> f64 -> BCE: autograd's _to_copy backward is grad.to(self dtype), twice.
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3});
    const TensorId down = b.op(OpKind::cast, "to_f32", {x}, {{"dtype", std::string("fp32")}});
    bce_loss(b, b.op(OpKind::cast, "to_f64", {down}, {{"dtype", std::string("fp64")}}));
  });
}

TEST_CASE("mixed-dtype add (autocast residual): f32 + f64 promotes to f64, each operand's gradient in its dtype") {
  // a (f64) + cast(c -> f32): TensorIterator promotes to f64; the f32 operand's gradient is cast down by
  // sum_to_shape (the engine's validate_outputs), then cast_backward brings c's gradient back to f64.
  check_kind([](GraphBuilder& b) {
    const TensorId a = weight(b, "a", {kBatch, 3});
    const TensorId c = weight(b, "c", {kBatch, 3});
    const TensorId c32 = b.op(OpKind::cast, "c.to_f32", {c}, {{"dtype", std::string("fp32")}});
    bce_loss(b, b.op(OpKind::add, "residual", {c32, a}));
  });
}

TEST_CASE("softmax over the last dim: _softmax_backward_data of the saved result equals autograd's") {
  check_kind([](GraphBuilder& b) {
    bce_loss(b, b.op(OpKind::softmax, "softmax", {weight(b, "x", {kBatch, 2, 4, 4})}));
  });
}

// ---- data movement -------------------------------------------------------------------------------

TEST_CASE("embedding: dW scatter-adds the output gradient into the rows read (5 rows, 8 reads)") {
  check_kind([](GraphBuilder& b) {
    const TensorId ids = index_input(b, "ids", {kBatch, 4});
    const TensorId w = weight(b, "emb.weight", {5, 3});
    bce_loss(b, b.op(OpKind::embedding, "emb", {ids, w}));
  });
}

TEST_CASE("embedding_bag (sum, bags of 3): every index of a bag receives the bag's gradient") {
  check_kind([](GraphBuilder& b) {
    const TensorId ids = index_input(b, "ids", {kBatch, 3});
    const TensorId w = weight(b, "emb.weight", {6, 4});
    bce_loss(b, b.op(OpKind::embedding_bag, "emb", {ids, w}));
  });
}

TEST_CASE("class_token_concat (ViT): patch gradients transposed back, the token's summed over the batch") {
  check_kind([](GraphBuilder& b) {
    const TensorId patches = weight(b, "patches", {kBatch, 4, 2, 3});
    const TensorId token = weight(b, "class_token", {1, 1, 4});
    bce_loss(b, b.op(OpKind::class_token_concat, "tokens", {patches, token}));
  });
}

TEST_CASE("select_token index 0: the gradient lands in token 0, zeros elsewhere") {
  check_kind([](GraphBuilder& b) {
    bce_loss(b,
             b.op(OpKind::select_token, "first", {weight(b, "x", {kBatch, 5, 3})}, {{"index", int64_t{0}}}));
  });
}

TEST_CASE("select_token index -1 counts from the end, as Python does") {
  check_kind([](GraphBuilder& b) {
    bce_loss(b,
             b.op(OpKind::select_token, "last", {weight(b, "x", {kBatch, 5, 3})}, {{"index", int64_t{-1}}}));
  });
}

TEST_CASE("concat on the last dim: each input receives its slice of the gradient") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "a", {kBatch, 3});
    const TensorId y = weight(b, "b", {kBatch, 5});
    const TensorId z = weight(b, "c", {kBatch, 2});
    bce_loss(b, b.op(OpKind::concat, "cat", {x, y, z}));
  });
}

TEST_CASE("dot_interaction (DLRM interact_features, 4 features): equals autograd's of bmm + Z[:, li, lj]") {
  check_kind([](GraphBuilder& b) {
    const TensorId dense = weight(b, "dense", {kBatch, 4});
    const TensorId e0 = weight(b, "emb0", {kBatch, 4});
    const TensorId e1 = weight(b, "emb1", {kBatch, 4});
    const TensorId e2 = weight(b, "emb2", {kBatch, 4});
    bce_loss(b, b.op(OpKind::dot_interaction, "interact", {dense, e0, e1, e2}));
  });
}

// ---- losses --------------------------------------------------------------------------------------

TEST_CASE(
    "cross_entropy ([B,C] logits): mean loss and (softmax - onehot) / B equal at::cross_entropy_loss's") {
  check_kind([](GraphBuilder& b) {
    const TensorId logits = weight(b, "logits", {kBatch, 5});
    const TensorId labels = b.add_input("labels", {kBatch}, TensorRole::label, FuseAxis::stack, DType::i64);
    b.add_op(OpKind::cross_entropy, "loss", {logits, labels});
  });
}

TEST_CASE("cross_entropy ([B,T,C] logits, the language models'): mean over B*T positions") {
  check_kind([](GraphBuilder& b) {
    const TensorId logits = weight(b, "logits", {kBatch, 3, 5});
    const TensorId labels =
        b.add_input("labels", {kBatch, 3}, TensorRole::label, FuseAxis::stack, DType::i64);
    b.add_op(OpKind::cross_entropy, "loss", {logits, labels});
  });
}

TEST_CASE(
    "bce_with_logits: mean loss and (sigmoid(x) - y) / n equal at::binary_cross_entropy_with_logits's") {
  check_kind([](GraphBuilder& b) { bce_loss(b, weight(b, "logits", {kBatch, 3})); });
}
