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
#include "tests/support/test_exec_kernels_fixtures.hpp"

#include "exec/pointwise_conv.hpp"
#include "ir/conv_lowering.hpp"
#include "tests/support/zoo_step.hpp"

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

TEST_CASE("conv2d 1x1 stride 2 with bias (ResNet's downsample): fused, a batched GEMM per model") {
  const auto build = [](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 4, 7, 5});
    const TensorId w = weight(b, "downsample.weight", {6, 4, 1, 1});
    const TensorId bias = weight(b, "downsample.bias", {6});
    channel_bce_loss(b, b.op(OpKind::conv2d, "downsample", {x, w, bias}, conv_attrs(2, 0, 1)));
  };
  // The fused graph records the batched GEMM (ir/conv_lowering.hpp), so the fused check below runs
  // exec/pointwise_conv.hpp's path; the model alone (one group) runs at::convolution's.
  GraphBuilder one("kind", DType::f64, 1, kBatch);
  build(one);
  const ir::Graph alone = std::move(one).finish();
  const ir::Graph fused = transforms::horizontal_fuse(alone, kFusedWidth);
  CHECK_FALSE(ir::conv_runs_as_batched_gemm(test::op_named(alone, "downsample")));
  CHECK(ir::conv_runs_as_batched_gemm(test::op_named(fused, "downsample")));
  check_kind(build);
}

TEST_CASE("a grouped 1x1 convolution as a batched GEMM equals at::convolution and its backward") {
  const auto opts = at::TensorOptions().dtype(at::kDouble);
  at::manual_seed(7);
  const int64_t groups = 4;
  // x is a channel slice (not contiguous), as a chunk's half is.
  const at::Tensor x = at::randn({3, 2 * groups * 3, 7, 5}, opts).slice(1, 0, groups * 3);
  const at::Tensor w = at::randn({groups * 5, 3, 1, 1}, opts);
  const at::Tensor bias = at::randn({groups * 5}, opts);
  for (const int64_t s : {1, 2, 3}) {
    CAPTURE(s);
    const std::vector<int64_t> stride{s, s};
    const at::Tensor expected = at::convolution(x, w, bias, stride, {0, 0}, {1, 1}, false, {0, 0}, groups);
    const at::Tensor y = exec::pointwise_conv_forward(x, w, bias, stride, groups);
    REQUIRE(y.sizes() == expected.sizes());
    CHECK(at::allclose(y, expected, 1e-12, 1e-12));
    const at::Tensor dy = at::randn(expected.sizes(), opts);
    const std::vector<int64_t> bias_sizes{w.size(0)};
    auto [dx, dw, db] = at::convolution_backward(dy, x, w, at::OptionalIntArrayRef(bias_sizes), stride,
                                                 {0, 0}, {1, 1}, false, {0, 0}, groups, {true, true, true});
    const auto grads = exec::pointwise_conv_backward(dy, x, w, stride, groups, {true, true, true});
    CHECK(at::allclose(grads[0], dx, 1e-12, 1e-12));
    CHECK(at::allclose(grads[1], dw, 1e-12, 1e-12));
    CHECK(at::allclose(grads[2], db, 1e-12, 1e-12));
    const auto dw_only = exec::pointwise_conv_backward(dy, x, w, stride, groups, {false, true, false});
    CHECK_FALSE(dw_only[0].defined());
    CHECK_FALSE(dw_only[2].defined());
  }
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

TEST_CASE(
    "conv2d dilated by 2 (DeepLab's atrous conv), padding 2: dX, dW equal autograd's, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 7, 7});
    const TensorId w = weight(b, "conv.weight", {4, 3, 3, 3});
    Attributes attrs = conv_attrs(1, 2, 1);
    attrs["dilation"] = Shape{2, 2};
    const TensorId y = b.op(OpKind::conv2d, "conv", {x, w}, attrs);
    REQUIRE(b.tensor(y).shape == Shape{kBatch, 4, 7, 7});  // (7 + 4 - 2*2 - 1) / 1 + 1
    channel_bce_loss(b, y);
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

TEST_CASE("max_pool2d 3x3/2 with ceil_mode on 8x8 (4x4 out, the last window partial), fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 8, 8});
    const TensorId y = b.op(OpKind::max_pool2d, "pool", {x},
                            {{"kernel", Shape{3, 3}}, {"stride", Shape{2, 2}}, {"ceil_mode", int64_t{1}}});
    REQUIRE(b.tensor(y).shape == Shape{kBatch, 3, 4, 4});
    channel_bce_loss(b, y);
  });
}

TEST_CASE(
    "avg_pool2d 2x2/2 (DenseNet's transition): avg_pool2d_backward equals autograd's, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 6, 6});
    channel_bce_loss(b, b.op(OpKind::avg_pool2d, "pool", {x}, {{"kernel", Shape{2, 2}}}));
  });
}

TEST_CASE("avg_pool2d 3x3/2, padding 1, ceil_mode, padding not counted: equals autograd's, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 6, 6});
    const TensorId y = b.op(OpKind::avg_pool2d, "pool", {x},
                            {{"kernel", Shape{3, 3}},
                             {"stride", Shape{2, 2}},
                             {"padding", Shape{1, 1}},
                             {"ceil_mode", int64_t{1}},
                             {"count_include_pad", int64_t{0}}});
    REQUIRE(b.tensor(y).shape == Shape{kBatch, 3, 4, 4});
    channel_bce_loss(b, y);
  });
}

TEST_CASE("concat_channels of 2, 3 and 1 channels: each input gets its slice; fused, each model's together") {
  check_kind([](GraphBuilder& b) {
    const TensorId x1 = weight(b, "x1", {kBatch, 2, 3, 3});
    const TensorId x2 = weight(b, "x2", {kBatch, 3, 3, 3});
    const TensorId x3 = weight(b, "x3", {kBatch, 1, 3, 3});
    const TensorId w = weight(b, "conv.weight", {4, 6, 1, 1});  // mixes every channel of one model
    const TensorId y = b.op(OpKind::concat_channels, "cat", {x1, x2, x3});
    channel_bce_loss(b, b.op(OpKind::conv2d, "conv", {y, w}, conv_attrs(1, 0, 1)));
  });
}

TEST_CASE("ShuffleNet V2's unit: chunk in two, one half through a conv, concatenated, shuffled in 2 groups") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 6, 3, 3});
    const TensorId x1 =
        b.op(OpKind::slice_channels, "x1", {x}, {{"start", int64_t{0}}, {"length", int64_t{3}}});
    const TensorId x2 =
        b.op(OpKind::slice_channels, "x2", {x}, {{"start", int64_t{3}}, {"length", int64_t{3}}});
    const TensorId w = weight(b, "branch2.weight", {3, 3, 1, 1});
    const TensorId y = b.op(OpKind::concat_channels, "cat", {x1, b.op(OpKind::conv2d, "branch2", {x2, w})});
    channel_bce_loss(b, b.op(OpKind::channel_shuffle, "shuffle", {y}, {{"groups", int64_t{2}}}));
  });
}

TEST_CASE("channel_shuffle in 3 groups of 2 (not its own inverse): the gradient is shuffled back") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 6, 2, 2});
    const TensorId w = weight(b, "mix.weight", {6, 6, 1, 1});  // each output channel weighs its inputs apart
    const TensorId y = b.op(OpKind::channel_shuffle, "shuffle", {x}, {{"groups", int64_t{3}}});
    channel_bce_loss(b, b.op(OpKind::conv2d, "mix", {y, w}, conv_attrs(1, 0, 1)));
  });
}

TEST_CASE("ConvNeXt's block tail: permute, layer norm, linear, permute back, layer scale [C,1,1]") {
  // Fused, the permute turns [B,k*C,H,W] into [k,B,H,W,C] for the layer norm and the linear, and
  // back; the layer scale gamma is concatenated on its channel dim ([k*C,1,1]) like batch norm's.
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 2, 4});
    const TensorId nhwc = b.op(OpKind::permute, "to_nhwc", {x}, {{"dims", Shape{0, 2, 3, 1}}});
    REQUIRE(b.tensor(nhwc).shape == Shape{kBatch, 2, 4, 3});
    const TensorId gamma = weight(b, "norm.weight", {3});
    const TensorId beta = weight(b, "norm.bias", {3});
    const TensorId n = b.op(OpKind::layernorm, "norm", {nhwc, gamma, beta}, {{"eps", 1e-6}});
    const TensorId w = weight(b, "pwconv.weight", {5, 3});
    const TensorId bias = weight(b, "pwconv.bias", {5});
    const TensorId h = b.op(OpKind::linear, "pwconv", {n, w, bias});
    const TensorId nchw = b.op(OpKind::permute, "to_nchw", {h}, {{"dims", Shape{0, 3, 1, 2}}});
    REQUIRE(b.tensor(nchw).shape == Shape{kBatch, 5, 2, 4});
    const TensorId scale = weight(b, "layer_scale", {5, 1, 1});
    channel_bce_loss(b, b.op(OpKind::mul, "scaled", {nchw, scale}));
  });
}

TEST_CASE("flatten of [B,C,2,2] (VGG's 7x7 map, smaller): the gradient is reshaped back, fused and alone") {
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 3, 2, 2});
    bce_loss(b, b.op(OpKind::flatten, "flatten", {x}));
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

TEST_CASE("silu: silu_backward of the saved input equals autograd's") {
  check_kind(activation<OpKind::silu>, 4.0);
}

TEST_CASE("hardsigmoid: hardsigmoid_backward equals autograd's (inputs beyond -3 and 3)") {
  check_kind(activation<OpKind::hardsigmoid>, 4.0);
}

// ---- Tempo's lean layers (ir/kinds/lean.cpp): the plain op's result and gradients ----------
// Each built plain, rewritten by transforms::apply_lean_ops, checked against autograd of the plain
// op alone and fused at width 3.
