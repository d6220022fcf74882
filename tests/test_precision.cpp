// Precision modes (transforms/autocast.hpp): the rewrite's casts, dtypes and bytes on a hand-sized MLP
// and bert-mini, the training step it gives (cast backward, fp32 master gradients, GradScaler's
// unscale), fusion of a rewritten graph, the analytic model's math modes, and a simulated step.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "io/graph_json.hpp"
#include "ir/graph_builder.hpp"
#include "ir/kernel_precision.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "transforms/autocast.hpp"
#include "transforms/autodiff.hpp"
#include "transforms/fusion.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;
using mutwo::costmodel::AnalyticCostModel;
using mutwo::costmodel::find_device;

namespace {

// x [4,8] -> fc1 (W1 [16,8], b1 [16]) -> relu -> fc2 (W2 [10,16], b2 [10]) -> cross entropy.
Graph mlp() {
  GraphBuilder b("mlp", DType::f32, 1, 4);
  const TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  const TensorId labels = b.add_input("labels", {4}, TensorRole::label, FuseAxis::stack, DType::i64);
  const TensorId w1 = b.add_weight("W1", {16, 8}, FuseAxis::stack);
  const TensorId b1 = b.add_weight("b1", {16}, FuseAxis::stack);
  const TensorId w2 = b.add_weight("W2", {10, 16}, FuseAxis::stack);
  const TensorId b2 = b.add_weight("b2", {10}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc1", {x, w1, b1});
  h = b.op(OpKind::relu, "relu", {h});
  const TensorId logits = b.op(OpKind::linear, "fc2", {h, w2, b2});
  b.add_op(OpKind::cross_entropy, "loss", {logits, labels});
  return std::move(b).finish();
}

const Op& op_named(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops) {
    if (op.name == name) return op;
  }
  FAIL("no op " << name);
  return g.ops.front();
}

const Tensor& tensor_named(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors) {
    if (t.name == name) return t;
  }
  FAIL("no tensor " << name);
  return g.tensors.front();
}

int64_t count_kind(const Graph& g, OpKind kind) {
  int64_t n = 0;
  for (const Op& op : g.ops) n += op.kind == kind;
  return n;
}

int64_t role_bytes(const Graph& g, TensorRole role) {
  int64_t n = 0;
  for (const Tensor& t : g.tensors) n += t.role == role ? t.bytes : 0;
  return n;
}

// Bytes of forward-produced tensors a backward op reads: what autograd keeps for backward beyond
// the leaves (weights, inputs) it also saves.
int64_t saved_activation_bytes(const Graph& step) {
  std::set<TensorId> saved;
  for (const Op& op : step.ops) {
    if (op.phase != Phase::backward) continue;
    for (TensorId id : op.inputs) {
      const Tensor& t = step.tensor(id);
      if (t.producer != kNoId && step.op(t.producer).phase == Phase::forward) saved.insert(id);
    }
  }
  int64_t n = 0;
  for (TensorId id : saved) n += step.tensor(id).bytes;
  return n;
}

OptimizerConfig adam() {
  return OptimizerConfig{};
}

}  // namespace

TEST_CASE("precision names parse and an unknown one lists the valid names") {
  CHECK(parse_precision("amp-bf16") == Precision::amp_bf16);
  CHECK(precision_name(Precision::amp_fp16) == "amp-fp16");
  CHECK_THROWS_WITH_AS(parse_precision("fp8"),
                       "unknown precision 'fp8'; valid: fp32, tf32, amp-fp16, amp-bf16, bf16",
                       mutwo::UnknownNameError);
}

TEST_CASE("fp32 is the identity and tf32 only records the mode") {
  const Graph g = mlp();
  const Graph same = apply_precision(g, Precision::fp32);
  CHECK(graph_to_json(same) == graph_to_json(g));  // bit-identical, no "precision" key written
  CHECK_FALSE(graph_to_json(g).contains("precision"));
  const Graph tf32 = apply_precision(g, Precision::tf32);
  CHECK(tf32.precision == Precision::tf32);
  CHECK(tf32.ops.size() == g.ops.size());
  CHECK(graph_to_json(tf32)["precision"] == "tf32");
  CHECK(graph_from_json(graph_to_json(tf32)).precision == Precision::tf32);  // recorded in the trace
}

TEST_CASE("amp-fp16 on a 2-layer MLP: half linears, five casts, fp32 loss") {
  const Graph g = apply_precision(mlp(), Precision::amp_fp16);
  CHECK(g.precision == Precision::amp_fp16);
  // fc1: x (activation, cast per use) + W1, b1 (weights, cached); fc2: its input relu is already
  // half, W2, b2 cast; loss: cross_entropy_loss decomposes on CUDA to log_softmax (fp32_set_opt_dtype),
  // which reads the half logits in its kernel (attr dtype fp32, no cast). 1 + 2 + 2 = 5 casts; 4 + 5 = 9
  // forward ops.
  CHECK(cast_op_count(g) == 5);
  CHECK(g.ops.size() == 9);
  CHECK(g.tensor(op_named(g, "fc1").outputs[0]).dtype == DType::f16);
  CHECK(g.tensor(op_named(g, "relu").outputs[0]).dtype == DType::f16);
  CHECK(g.tensor(op_named(g, "fc2").outputs[0]).dtype == DType::f16);
  CHECK(g.tensor(op_named(g, "loss").outputs[0]).dtype == DType::f32);
  CHECK(tensor_named(g, "W1.to_fp16").dtype == DType::f16);
  CHECK(tensor_named(g, "W1").dtype == DType::f32);  // master weight stays f32
  const Op& loss = op_named(g, "loss");
  CHECK(std::get<std::string>(loss.attrs.at("dtype")) == "fp32");
  CHECK(g.tensor(loss.inputs[0]).dtype == DType::f16);
  CHECK(g.tensor(loss.outputs[1]).bytes == 4 * 10 * 4);  // the float log-probabilities
  // Forward-produced bytes. fp32: fc1 64 x 4 + relu 256 + fc2 40 x 4 + loss 4 + log_probs 160 = 836.
  // amp-fp16: casts x 32 x 2 = 64, W1 128 x 2 = 256, b1 32, W2 160 x 2 = 320, b2 20; fc1 128,
  // relu 128, fc2 80, loss 4, log_probs 160: 1192.
  CHECK(activation_bytes(mlp()) == 836);
  CHECK(activation_bytes(g) == 1192);
}

TEST_CASE("amp-fp16 on a dense block: torch.cat of a half conv output and the f32 input casts the input up") {
  // DenseNet's first dense layer: cat([x, conv(x)]) with x an f32 input. Autocast runs the conv in
  // half (x and W cast down), and cat promotes: the half conv output is cast to f32, so the
  // concatenation is f32 with both operands' channels.
  GraphBuilder b("dense", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 4, 8, 8}, TensorRole::input, FuseAxis::dim1);
  TensorId w = b.add_weight("conv.weight", {2, 4, 3, 3}, FuseAxis::dim0);
  TensorId y = b.op(OpKind::conv2d, "conv", {x, w}, {{"padding", std::vector<int64_t>{1, 1}}});
  b.op(OpKind::concat_channels, "cat", {x, y});
  const Graph g = apply_precision(std::move(b).finish(), Precision::amp_fp16);
  CHECK(g.tensor(op_named(g, "conv").outputs[0]).dtype == DType::f16);
  const Op& cat = op_named(g, "cat");
  CHECK(g.tensor(cat.inputs[0]).dtype == DType::f32);
  CHECK(g.tensor(cat.inputs[1]).dtype == DType::f32);
  CHECK(g.op(g.tensor(cat.inputs[1]).producer).kind == OpKind::cast);
  CHECK(g.tensor(cat.outputs[0]).shape == std::vector<int64_t>{2, 6, 8, 8});
  CHECK(g.tensor(cat.outputs[0]).dtype == DType::f32);
  CHECK(cast_op_count(g) == 3);  // x and W down for the conv, its output up for the cat
}

TEST_CASE("amp training step: fp32 master gradients through cast_backward, GradScaler unscale for fp16") {
  const Graph fp32 = build_training_step(mlp(), adam());
  const Graph fp16 = build_training_step(apply_precision(mlp(), Precision::amp_fp16), adam());
  const Graph bf16 = build_training_step(apply_precision(mlp(), Precision::amp_bf16), adam());
  CHECK(fp16.precision == Precision::amp_fp16);
  // 314 parameters (128 + 16 + 160 + 10): weights, gradients 1,256 B each, Adam's two states 2,512 B:
  // unchanged by autocast.
  for (const Graph* g : {&fp32, &fp16, &bf16}) {
    CHECK(role_bytes(*g, TensorRole::weight) == 1256);
    CHECK(role_bytes(*g, TensorRole::gradient) == 1256);
    CHECK(role_bytes(*g, TensorRole::optimizer_state) == 2512);
  }
  // The four weight casts have a backward (x's cast needs no gradient): 4; amp-bf16 also casts the
  // logits up (ATen copies bf16): 5. The loss's backward writes the half logits' gradient.
  CHECK(count_kind(fp16, OpKind::cast_backward) == 4);
  CHECK(count_kind(bf16, OpKind::cast_backward) == 5);
  CHECK(fp16.tensor(op_named(fp16, "loss.backward").outputs[0]).dtype == DType::f16);
  const Tensor& w1_grad = tensor_named(fp16, "W1.grad");
  CHECK(w1_grad.dtype == DType::f32);
  CHECK(fp16.op(w1_grad.producer).kind == OpKind::cast_backward);
  CHECK(tensor_named(fp16, "W1.to_fp16.grad").dtype == DType::f16);
  // GradScaler: one in-place unscale per gradient before the optimizer steps, fp16 only.
  CHECK(count_kind(fp16, OpKind::amp_unscale) == 4);
  CHECK(count_kind(bf16, OpKind::amp_unscale) == 0);
  CHECK(count_kind(fp32, OpKind::amp_unscale) == 0);
  const Op& unscale = op_named(fp16, "W1.grad.unscale");
  CHECK(unscale.bytes_read == 512);
  CHECK(unscale.bytes_written == 512);
  CHECK(unscale.id < op_named(fp16, "W1.adam_step").id);
  // Saved for backward (forward-produced tensors a backward op reads). fp32: relu's output (read by
  // relu_backward and fc2's backward) 256 + log_probs 160 = 416. amp: fc1 saves the half copies of
  // x (64) and W1 (256), relu 128, fc2 saves W2's half copy (320), the loss f32 log_probs 160: 928.
  CHECK(saved_activation_bytes(fp32) == 416);
  CHECK(saved_activation_bytes(fp16) == 928);
  CHECK(saved_activation_bytes(bf16) == 928);
}

TEST_CASE("bf16: the whole model in bf16, weights, gradients and Adam state halved") {
  const Graph step = build_training_step(apply_precision(mlp(), Precision::bf16), adam());
  CHECK(cast_op_count(step) == 0);
  CHECK(tensor_named(step, "W1").dtype == DType::bf16);
  CHECK(tensor_named(step, "W1.exp_avg").dtype == DType::bf16);  // torch.optim keeps state like params
  CHECK(role_bytes(step, TensorRole::weight) == 628);
  CHECK(role_bytes(step, TensorRole::gradient) == 628);
  CHECK(role_bytes(step, TensorRole::optimizer_state) == 1256);
  CHECK(step.tensor(op_named(step, "loss").outputs[0]).dtype == DType::bf16);
  // Forward-produced bytes halve: 836 -> 418.
  CHECK(activation_bytes(apply_precision(mlp(), Precision::bf16)) == 418);
}

TEST_CASE("bert-mini under autocast: 18 casts per layer and 14 in the heads") {
  ModelConfig config;
  const Graph fp32 = build_model("bert-mini", config);
  config.precision = Precision::amp_bf16;
  const Graph amp = build_model("bert-mini", config);
  // Per layer: q, k, v each cast the f32 layer input (3) and their W, b (6); softmax casts the half
  // scores up (1); the context product casts the f32 probabilities down (1); attention output dense
  // W, b (2); intermediate casts the f32 LayerNorm output (1) and W, b (2); output dense W, b (2):
  // 18. Heads: pooler dense 3, MLM transform dense 3, its LayerNorm's half input up 1, decoder 3
  // (f32 input, tied word embeddings, bias), MLM loss up 1, NSP dense 2 (tanh output already half),
  // NSP loss up 1: 14. 2 x 18 + 14 = 50.
  CHECK(cast_op_count(amp) == 50);
  CHECK(amp.ops.size() == fp32.ops.size() + 50);
  const std::string l0 = "bert.encoder.layer.0";
  CHECK(amp.tensor(op_named(amp, l0 + ".attention.self.query").outputs[0]).dtype == DType::bf16);
  CHECK(amp.tensor(op_named(amp, l0 + ".attention.self.scores").outputs[0]).dtype == DType::bf16);
  CHECK(amp.tensor(op_named(amp, l0 + ".attention.self.softmax").outputs[0]).dtype == DType::f32);
  CHECK(amp.tensor(op_named(amp, l0 + ".attention.self.context").outputs[0]).dtype == DType::bf16);
  // The residual add promotes half + f32 inside the kernel: f32 out, no cast.
  CHECK(amp.tensor(op_named(amp, l0 + ".attention.output.residual").outputs[0]).dtype == DType::f32);
  CHECK(amp.tensor(op_named(amp, l0 + ".attention.output.LayerNorm").outputs[0]).dtype == DType::f32);
  CHECK(amp.tensor(op_named(amp, "bert.embeddings.word_embeddings").outputs[0]).dtype == DType::f32);
  // The tied word embeddings: read by the f32 embedding and cast once for the decoder.
  CHECK(tensor_named(amp, "bert.embeddings.word_embeddings.weight.to_bf16").consumers.size() == 1);
  const Graph step = build_training_step(amp, adam());
  const Graph step32 = build_training_step(fp32, adam());
  CHECK(role_bytes(step, TensorRole::weight) == role_bytes(step32, TensorRole::weight));
  CHECK(role_bytes(step, TensorRole::gradient) == role_bytes(step32, TensorRole::gradient));
  CHECK(role_bytes(step, TensorRole::optimizer_state) == role_bytes(step32, TensorRole::optimizer_state));
  for (const Tensor& t : step.tensors) {
    if (t.role == TensorRole::gradient) CHECK(t.dtype == DType::f32);
  }
  // bert-base in amp-bf16: 12 x 18 + 14 = 230 casts. In amp-fp16 the softmax reads its half scores
  // and both losses their half logits in the kernel (ATen's softmax / log_softmax(x, dim,
  // dtype=float) on CUDA; bf16 takes a copy): 12 x 17 + 12 = 216.
  ModelConfig base;
  base.precision = Precision::amp_bf16;
  CHECK(cast_op_count(build_model("bert-base", base)) == 230);
  base.precision = Precision::amp_fp16;
  CHECK(cast_op_count(build_model("bert-base", base)) == 216);
}

TEST_CASE("amp-fp16 softmax: half scores in, float probabilities out, one kernel; its gradient is half") {
  ModelConfig config;
  config.precision = Precision::amp_fp16;
  const Graph amp = build_model("bert-mini", config);
  // bert-mini in amp-bf16: 50, less one softmax cast per layer and the two losses' casts.
  CHECK(cast_op_count(amp) == 46);
  const Op& softmax = op_named(amp, "bert.encoder.layer.0.attention.self.softmax");
  const Tensor& scores = amp.tensor(softmax.inputs[0]);
  const Tensor& probs = amp.tensor(softmax.outputs[0]);
  CHECK(amp.op(scores.producer).kind == OpKind::attn_scores);  // no cast between
  CHECK(scores.dtype == DType::f16);
  CHECK(probs.dtype == DType::f32);
  CHECK(std::get<std::string>(softmax.attrs.at("dtype")) == "fp32");
  // Reads 2 bytes and writes 4 per element, where a copy up then a float softmax moved 2 + 4 + 4 + 4.
  CHECK(softmax.bytes_read * 2 == softmax.bytes_written);
  const Graph step = build_training_step(amp, adam());
  const Op& backward = op_named(step, "bert.encoder.layer.0.attention.self.softmax.backward");
  CHECK(step.tensor(backward.outputs[0]).dtype == DType::f16);
  // Reads the float output gradient and probabilities (4 + 4), writes the half gradient (2).
  CHECK(backward.bytes_read == 4 * backward.bytes_written);
  // An f16 softmax with any other dtype is refused, naming the attribute.
  GraphBuilder b("bad", DType::f32, 1, 2);
  const TensorId x = b.add_input("x", {2, 4}, TensorRole::input, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(b.op(OpKind::softmax, "sm", {x}, {{"dtype", std::string("fp16")}}),
                       doctest::Contains("attribute 'dtype' = fp16 on input 0 'x' of dtype fp32"),
                       mutwo::GraphError);
}

TEST_CASE("a non-fp32 model or a training step is refused by the rewrite, naming the field") {
  ModelConfig config;
  config.dtype = DType::bf16;
  config.precision = Precision::amp_fp16;
  CHECK_THROWS_WITH_AS(
      build_model("bert-mini", config),
      "model 'bert-mini': precision amp-fp16 trains an fp32 model; dtype is bf16 (keep dtype fp32)",
      mutwo::Error);
  const Graph step = build_training_step(mlp(), adam());
  CHECK_THROWS_AS(apply_precision(step, Precision::amp_bf16), mutwo::GraphError);
  const Graph amp = apply_precision(mlp(), Precision::amp_bf16);
  CHECK_THROWS_WITH_AS(apply_precision(amp, Precision::bf16),
                       "precision bf16: graph 'mlp' already has field 'precision' = amp-bf16",
                       mutwo::GraphError);
}

TEST_CASE("fusing a rewritten graph equals rewriting the fused build") {
  for (const char* model : {"bert-mini", "resnet-mini"}) {
    CAPTURE(model);
    ModelConfig one;
    one.precision = Precision::amp_fp16;
    ModelConfig three = one;
    three.width = 3;
    const Graph fused = horizontal_fuse(build_model(model, one), 3);
    const Graph native = build_model(model, three);
    CHECK(fused.precision == Precision::amp_fp16);
    REQUIRE(fused.ops.size() == native.ops.size());
    REQUIRE(fused.tensors.size() == native.tensors.size());
    for (size_t i = 0; i < fused.tensors.size(); ++i) {
      CHECK(fused.tensors[i].shape == native.tensors[i].shape);
      CHECK(fused.tensors[i].dtype == native.tensors[i].dtype);
    }
    for (size_t i = 0; i < fused.ops.size(); ++i) CHECK(fused.ops[i].flops == native.ops[i].flops);
    CHECK_NOTHROW(build_training_step(fused, adam()));
  }
  // resnet-mini's image is cast for the first conv and laid out on the channel dim like the conv's
  // input: [B, 3k, H, W].
  ModelConfig bf16;
  bf16.precision = Precision::amp_bf16;
  const Graph fused = horizontal_fuse(build_model("resnet-mini", bf16), 3);
  for (const Op& op : fused.ops) {
    if (op.kind == OpKind::cast && fused.tensor(op.inputs[0]).role == TensorRole::input) {
      CHECK(fused.tensor(op.inputs[0]).shape[1] == 9);
    }
  }
}

TEST_CASE("analytic: a linear under tf32 runs at the TF32 peak, fp32 at the FP32 peak (A100)") {
  // x [4096,4096] W [4096,4096], no bias: F = 2 * 4096^3 = 137,438,953,472 FLOPs.
  GraphBuilder b("gemm", DType::f32, 1, 4096);
  const TensorId x = b.add_input("x", {4096, 4096}, TensorRole::input, FuseAxis::stack);
  const TensorId w = b.add_weight("W", {4096, 4096}, FuseAxis::stack);
  b.op(OpKind::linear, "fc", {x, w});
  const Graph fp32 = std::move(b).finish();
  const Graph tf32 = apply_precision(fp32, Precision::tf32);
  const AnalyticCostModel a100(find_device("a100-40gb"));
  const double flops = 137438953472.0;
  // The model's matmul term: (F + w_half) / (P * 0.80), w_half = 108 SMs x 4 MiFLOP = 452,984,832.
  const double half = 108.0 * 4 * 1024 * 1024;
  const auto fast = a100.breakdown(tf32, tf32.ops[0]);
  const auto slow = a100.breakdown(fp32, fp32.ops[0]);
  CHECK(fast.peak_flops_per_ns == doctest::Approx(156'000.0));                     // TF32 156 TFLOPS
  CHECK(slow.peak_flops_per_ns == doctest::Approx(19'500.0));                      // FP32 19.5 TFLOPS
  CHECK(fast.compute_ns == doctest::Approx((flops + half) / (156'000.0 * 0.80)));  // 1,104,903 ns
  CHECK(slow.compute_ns == doctest::Approx((flops + half) / (19'500.0 * 0.80)));   // 8,839,227 ns
  CHECK(fast.duration_ns == 4'000 + 1'104'904);  // launch + ceil(compute): compute-bound
  // bf16 on a V100 (no bf16 tensor cores) runs on CUDA cores; fp16 uses its tensor cores.
  const AnalyticCostModel v100(find_device("v100-16gb"));
  CHECK(v100.peak_flops_per_ns(KindCategory::matmul, DType::bf16) == doctest::Approx(15'700.0));
  CHECK(v100.peak_flops_per_ns(KindCategory::matmul, DType::f16) == doctest::Approx(125'000.0));
  CHECK(a100.peak_flops_per_ns(KindCategory::matmul, DType::bf16) == doctest::Approx(312'000.0));
}

TEST_CASE("amp-bf16 on a V100 is refused as torch.autocast refuses it; bf16 runs there") {
  ModelConfig config;
  config.precision = Precision::amp_bf16;
  const Graph amp = build_training_step(build_model("bert-mini", config), adam());
  const AnalyticCostModel v100(find_device("v100-16gb"));
  CHECK_THROWS_AS(v100.op_duration_ns(amp, amp.ops[0]), mutwo::Error);
  config.precision = Precision::bf16;
  const Graph bf16 = build_training_step(build_model("bert-mini", config), adam());
  CHECK(v100.op_duration_ns(bf16, bf16.ops[0]) > 0);
}

TEST_CASE("bert-base steps faster under tf32 and amp than fp32 on an A100 (simulated)") {
  const AnalyticCostModel a100(find_device("a100-40gb"));
  auto step_ns = [&](Precision p) {
    ModelConfig config;
    config.precision = p;
    const Graph step = build_training_step(build_model("bert-base", config), adam());
    return mutwo::sim::simulate(mutwo::policies::build_plain_schedule({step}), a100).step_time_ns;
  };
  const int64_t fp32 = step_ns(Precision::fp32);
  const int64_t tf32 = step_ns(Precision::tf32);
  const int64_t amp_bf16 = step_ns(Precision::amp_bf16);
  MESSAGE("bert-base a100-40gb step ns: fp32 " << fp32 << ", tf32 " << tf32 << ", amp-bf16 " << amp_bf16);
  CHECK(tf32 < fp32);
  CHECK(amp_bf16 < fp32);
}

TEST_CASE("kernel precisions: each name's data type and math, unknown names listing the valid ones") {
  std::vector<std::string> names;
  for (const KernelPrecisionInfo& p : kernel_precisions()) {
    names.emplace_back(p.name);
    CHECK(&kernel_precision(p.id) == &p);
  }
  CHECK(names == std::vector<std::string>{"fp32", "tf32", "fp16", "bf16"});
  CHECK(kernel_precision("tf32").dtype == DType::f32);  // TF32 is math, not storage
  CHECK_FALSE(kernel_precision("tf32").half);
  CHECK(kernel_precision("fp16").dtype == DType::f16);
  CHECK(kernel_precision("bf16").dtype == DType::bf16);
  CHECK(kernel_precision("bf16").half);
  CHECK(find_kernel_precision("fp8") == nullptr);
  CHECK_THROWS_WITH_AS(kernel_precision("fp8"), "unknown precision 'fp8'; valid: fp32, tf32, fp16, bf16",
                       mutwo::UnknownNameError);
}
