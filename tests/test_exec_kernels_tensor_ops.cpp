// exec/'s op kernels against LibTorch autograd, continued (the protocol is tests/test_exec_kernels.cpp's):
// Tempo's lean layers, dropout, broadcasting adds and muls, casts, softmax, embeddings, token ops,
// concat, DLRM's interaction and the losses, each on the CPU in double precision, alone and fused.
// doctest after LibTorch's logging, whose glog CHECK macros would replace doctest's.
#include "tests/support/test_exec_kernels_fixtures.hpp"

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

TEST_CASE(
    "layernorm_lean: dX, dgamma, dbeta from y and rstd equal autograd's of at::layer_norm, alone and x3") {
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

TEST_CASE(
    "mixed-dtype add (autocast residual): f32 + f64 promotes to f64, each operand's gradient in its dtype") {
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

TEST_CASE("softmax of a half input into float (autocast's dtype=float): equals autograd's, half gradient") {
  // x (f64) -> f16 -> softmax(dtype f32) -> f64 -> BCE. On the CPU both sides copy up, then run the
  // float softmax; the gradient comes back to half (derivatives.yaml: self.scalar_type()), then f64.
  check_kind([](GraphBuilder& b) {
    const TensorId x = weight(b, "x", {kBatch, 2, 4, 4});
    const TensorId half = b.op(OpKind::cast, "to_f16", {x}, {{"dtype", std::string("fp16")}});
    const TensorId p = b.op(OpKind::softmax, "softmax", {half}, {{"dtype", std::string("fp32")}});
    CHECK(b.tensor(p).dtype == DType::f32);
    bce_loss(b, b.op(OpKind::cast, "to_f64", {p}, {{"dtype", std::string("fp64")}}));
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

TEST_CASE("cross_entropy of half logits into float (autocast on CUDA): equals log_softmax + nll_loss's") {
  // logits (f64) -> f16 -> cross_entropy(dtype f32): log_softmax copies up on the CPU, the loss and
  // log-probabilities are float, the logits' gradient comes back half, then f64 through the cast.
  check_kind([](GraphBuilder& b) {
    const TensorId logits = weight(b, "logits", {kBatch, 5});
    const TensorId half = b.op(OpKind::cast, "to_f16", {logits}, {{"dtype", std::string("fp16")}});
    const TensorId labels = b.add_input("labels", {kBatch}, TensorRole::label, FuseAxis::stack, DType::i64);
    b.add_op(OpKind::cross_entropy, "loss", {half, labels}, {{"dtype", std::string("fp32")}});
  });
}

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
