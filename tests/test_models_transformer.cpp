// Transformer model zoo (BERT, GPT-2, ViT) and the kinds it needs: attention products, embedding,
// class token, token select. Expected values are published parameter counts / FLOPs or derived
// by hand in the comment beside each assertion.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <string>

#include "ir/graph.hpp"
#include "ir/graph_builder.hpp"
#include "ir/kind_rules.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "transforms/fusion.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::transforms;
using namespace mutwo::zoo;
using mutwo::GraphError;

namespace {

using Shape = std::vector<int64_t>;

int64_t flops_of(const Graph& g, std::initializer_list<OpKind> kinds) {
  int64_t sum = 0;
  for (const Op& op : g.ops) {
    for (OpKind k : kinds) {
      if (op.kind == k) sum += op.flops;
    }
  }
  return sum;
}

int64_t count_of(const Graph& g, OpKind kind) {
  int64_t n = 0;
  for (const Op& op : g.ops) n += op.kind == kind ? 1 : 0;
  return n;
}

const Tensor& tensor_named(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors) {
    if (t.name == name) return t;
  }
  throw GraphError("no tensor '" + name + "'");
}

const Op& op_named(const Graph& g, const std::string& name) {
  for (const Op& op : g.ops) {
    if (op.name == name) return op;
  }
  throw GraphError("no op '" + name + "'");
}

ModelConfig config(int64_t batch, int64_t seq, int64_t image, int32_t width = 1, DType dtype = DType::f32) {
  ModelConfig c;
  c.batch_size = batch;
  c.seq_len = seq;
  c.image_size = image;
  c.width = width;
  c.dtype = dtype;
  return c;
}

// Matmul FLOPs (linear + conv + attention products) of the forward graph.
int64_t matmul_flops(const Graph& g) {
  return flops_of(g, {OpKind::linear, OpKind::conv2d, OpKind::attn_scores, OpKind::attn_context});
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Kinds

TEST_CASE("attn_scores gives [B,heads,T,T] with 2*B*T*T*H FLOPs, stacked at width k") {
  GraphBuilder b("attn", DType::f32, 1, 2);
  TensorId q = b.add_input("q", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId k = b.add_input("k", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId s = b.op(OpKind::attn_scores, "scores", {q, k}, {{"heads", int64_t{3}}, {"scale", 0.5}});
  CHECK(b.tensor(s).shape == Shape{2, 3, 5, 5});
  // 2 * B 2 * heads 3 * T 5 * T 5 * head dim 4 = 1200.
  CHECK(b.graph().ops[0].flops == 1200);

  GraphBuilder f("attn", DType::f32, 3, 2);
  TensorId fq = f.add_input("q", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId fk = f.add_input("k", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId fs =
      f.op(OpKind::attn_scores, "scores", {fq, fk}, {{"heads", int64_t{3}}, {"causal", int64_t{1}}});
  CHECK(f.tensor(fs).shape == Shape{3, 2, 3, 5, 5});
  CHECK(f.graph().ops[0].flops == 3 * 1200);  // k models, same work each
}

TEST_CASE("attn_scores rejects heads that do not divide the hidden size and a k unlike q") {
  GraphBuilder b("attn", DType::f32);
  TensorId q = b.add_input("q", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId k = b.add_input("k", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId k6 = b.add_input("k6", {2, 6, 12}, TensorRole::input, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(
      b.op(OpKind::attn_scores, "s", {q, k}, {{"heads", int64_t{5}}}),
      doctest::Contains("op 's': attribute 'heads' = 5 must be >= 1 and divide the hidden size 12"),
      GraphError);
  CHECK_THROWS_WITH_AS(b.op(OpKind::attn_scores, "s", {q, k6}, {{"heads", int64_t{3}}}),
                       doctest::Contains("input 1 'k6' (k)"), GraphError);
}

TEST_CASE("attn_context merges heads back to [B,T,H] with 2*B*T*T*H FLOPs") {
  GraphBuilder b("ctx", DType::f32, 2, 2);
  TensorId p = b.add_input("p", {2, 3, 5, 5}, TensorRole::input, FuseAxis::stack);
  TensorId v = b.add_input("v", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId y = b.op(OpKind::attn_context, "ctx", {p, v});
  CHECK(b.tensor(y).shape == Shape{2, 2, 5, 12});
  CHECK(b.graph().ops[0].flops == 2 * 1200);  // width 2 x (2*2*5*5*12)

  GraphBuilder bad("ctx", DType::f32);
  TensorId p5 = bad.add_input("p", {2, 5, 5, 5}, TensorRole::input, FuseAxis::stack);  // 5 heads of 12
  TensorId v1 = bad.add_input("v", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  CHECK_THROWS_AS(bad.op(OpKind::attn_context, "ctx", {p5, v1}), GraphError);
}

TEST_CASE("attention backward saves both operands and costs two forward products") {
  for (OpKind kind : {OpKind::attn_scores, OpKind::attn_context}) {
    const KindRules* rules = kind_rules(kind);
    REQUIRE(rules != nullptr);
    CHECK(rules->saved.size() == 2);
    CHECK(rules->saved[0].from == SavedRef::From::input);
    CHECK(rules->saved[0].index == 0);
    CHECK(rules->saved[1].index == 1);
  }
  CHECK(kind_rules(OpKind::attn_scores)->backward_kind == OpKind::attn_scores_backward);
  CHECK(kind_rules(OpKind::attn_context)->backward_kind == OpKind::attn_context_backward);

  GraphBuilder b("attn", DType::f32, 1, 2);
  TensorId q = b.add_input("q", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  TensorId k = b.add_input("k", {2, 5, 12}, TensorRole::input, FuseAxis::stack);
  b.op(OpKind::attn_scores, "scores", {q, k}, {{"heads", int64_t{3}}});
  const Graph& g = b.graph();
  const Tensor* ins[] = {&g.tensor(q), &g.tensor(k)};
  const Tensor* outs[] = {&g.tensor(g.ops[0].outputs[0])};
  const std::vector<bool> both{true, true}, only_q{true, false};
  // dq = dS k and dk = dS^T q: 1200 FLOPs each (the forward's count).
  CHECK(kind_rules(OpKind::attn_scores)->backward_flops({g.ops[0], ins, outs, both}) == 2400);
  CHECK(kind_rules(OpKind::attn_scores)->backward_flops({g.ops[0], ins, outs, only_q}) == 1200);
}

TEST_CASE("embedding gathers indices S ++ [H] with no FLOPs and saves only the indices") {
  GraphBuilder b("emb", DType::bf16, 1, 4);
  TensorId idx = b.add_input("ids", {4, 7}, TensorRole::input, FuseAxis::stack, DType::i64);
  TensorId w = b.add_weight("w", {100, 16}, FuseAxis::stack);
  TensorId y = b.op(OpKind::embedding, "emb", {idx, w});
  CHECK(b.tensor(y).shape == Shape{4, 7, 16});
  CHECK(b.tensor(y).dtype == DType::bf16);  // the table's dtype, not the indices'
  CHECK(b.graph().ops[0].flops == 0);

  GraphBuilder f("emb", DType::f32, 2, 4);
  TensorId fidx = f.add_input("ids", {4, 7}, TensorRole::input, FuseAxis::stack, DType::i64);
  TensorId fw = f.add_weight("w", {100, 16}, FuseAxis::stack);
  CHECK(f.tensor(f.op(OpKind::embedding, "emb", {fidx, fw})).shape == Shape{2, 4, 7, 16});

  const KindRules* rules = kind_rules(OpKind::embedding);
  REQUIRE(rules != nullptr);
  CHECK(rules->backward_kind == OpKind::embedding_backward);
  REQUIRE(rules->saved.size() == 1);
  CHECK(rules->saved[0].from == SavedRef::From::input);
  CHECK(rules->saved[0].index == 0);

  GraphBuilder bad("emb", DType::f32);
  TensorId fidx32 = bad.add_input("ids", {4, 7}, TensorRole::input, FuseAxis::stack, DType::i32);
  TensorId bw = bad.add_weight("w", {100, 16}, FuseAxis::stack);
  CHECK_THROWS_WITH_AS(bad.op(OpKind::embedding, "emb", {fidx32, bw}),
                       doctest::Contains("op 'emb': input 0 'ids' (indices) has dtype int32"), GraphError);
}

TEST_CASE("class_token_concat turns channel-layout patches into stacked tokens with the class token first") {
  GraphBuilder b("ct", DType::f32, 1, 2);
  TensorId patches = b.add_input("patches", {2, 8, 3, 3}, TensorRole::input, FuseAxis::dim1);
  TensorId tok = b.add_weight("class_token", {1, 1, 8}, FuseAxis::stack);
  CHECK(b.tensor(b.op(OpKind::class_token_concat, "cat", {patches, tok})).shape == Shape{2, 10, 8});  // 1+3*3

  GraphBuilder f("ct", DType::f32, 3, 2);
  TensorId fp = f.add_input("patches", {2, 8, 3, 3}, TensorRole::input, FuseAxis::dim1);  // [2,24,3,3]
  TensorId ft = f.add_weight("class_token", {1, 1, 8}, FuseAxis::stack);                  // [3,1,1,8]
  CHECK(f.tensor(f.op(OpKind::class_token_concat, "cat", {fp, ft})).shape == Shape{3, 2, 10, 8});

  GraphBuilder bad("ct", DType::f32);
  TensorId bp = bad.add_input("patches", {2, 6, 3, 3}, TensorRole::input, FuseAxis::dim1);
  TensorId bt = bad.add_weight("class_token", {1, 1, 8}, FuseAxis::stack);
  CHECK_THROWS_AS(bad.op(OpKind::class_token_concat, "cat", {bp, bt}), GraphError);
  CHECK(kind_rules(OpKind::class_token_concat)->saved.empty());
}

TEST_CASE("select_token picks one token: [B,T,C] -> [B,C], stacked at width k, index in range") {
  GraphBuilder b("sel", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 10, 8}, TensorRole::input, FuseAxis::stack);
  CHECK(b.tensor(b.op(OpKind::select_token, "sel", {x})).shape == Shape{2, 8});
  CHECK(b.tensor(b.op(OpKind::select_token, "last", {x}, {{"index", int64_t{-1}}})).shape == Shape{2, 8});
  CHECK_THROWS_WITH_AS(b.op(OpKind::select_token, "bad", {x}, {{"index", int64_t{10}}}),
                       doctest::Contains("op 'bad': attribute 'index' = 10 is out of range for 10 tokens"),
                       GraphError);

  GraphBuilder f("sel", DType::f32, 4, 2);
  TensorId fx = f.add_input("x", {2, 10, 8}, TensorRole::input, FuseAxis::stack);
  CHECK(f.tensor(f.op(OpKind::select_token, "sel", {fx})).shape == Shape{4, 2, 8});
  CHECK(kind_rules(OpKind::select_token)->saved.empty());
  CHECK(kind_rules(OpKind::select_token)->backward_kind == OpKind::select_token_backward);
}

// ---------------------------------------------------------------------------------------------
// Parameter counts

TEST_CASE("BERT pre-training parameter counts match BertForPreTraining") {
  // BertModel bert-base-uncased: 109,482,240 (HF). Heads: MLM transform 768*768+768 = 590,592,
  // its LayerNorm 1,536, decoder bias 30,522 (decoder weight tied to the word embeddings),
  // NSP 768*2+2 = 1,538 -> 109,482,240 + 624,188 = 110,106,428.
  CHECK(parameter_count(build_model("bert-base", config(1, 8, 0))) == 110106428);
  // BertModel bert-large-uncased: 335,141,888. Heads: 1024*1024+1024 = 1,049,600 + 2,048 + 30,522
  // + 1024*2+2 = 2,050 -> 1,084,220 -> 336,226,108.
  CHECK(parameter_count(build_model("bert-large", config(1, 8, 0))) == 336226108);
}

TEST_CASE("GPT-2 parameter counts match GPT2LMHeadModel (lm_head tied to wte)") {
  // gpt2: wte 50257*768 + wpe 1024*768 + 12 * (12*768^2 + 13*768) + ln_f 2*768 = 124,439,808 (HF).
  CHECK(parameter_count(build_model("gpt2", config(1, 8, 0))) == 124439808);
  // gpt2-medium: 50257*1024 + 1024*1024 + 24 * (12*1024^2 + 13*1024) + 2*1024 = 354,823,168 (HF).
  CHECK(parameter_count(build_model("gpt2-medium", config(1, 8, 0))) == 354823168);
  // gpt2-xl: 50257*1600 + 1024*1600 + 48 * (12*1600^2 + 13*1600) + 2*1600 = 1,557,611,200 (HF).
  CHECK(parameter_count(build_model("gpt2-xl", config(1, 8, 0))) == 1557611200);
}

TEST_CASE("ViT parameter counts match torchvision vit_b_16 and vit_l_16") {
  // torchvision ViT_B_16_Weights.IMAGENET1K_V1 meta num_params 86,567,656;
  // ViT_L_16_Weights.IMAGENET1K_V1 num_params 304,326,632.
  CHECK(parameter_count(build_model("vit-b16", config(1, 0, 224))) == 86567656);
  CHECK(parameter_count(build_model("vit-l16", config(1, 0, 224))) == 304326632);
}

// ---------------------------------------------------------------------------------------------
// FLOPs

TEST_CASE("ViT matmul MACs per sample are within 2 % of torchvision's GFLOPS") {
  // torchvision counts multiply-accumulates of conv/linear/attention matmuls (no bias, no norms):
  // ViT-B/16 at 224: conv_proj 768*14*14 outputs * 3*16*16 = 115,605,504; per layer, T = 197:
  // qkv + out_proj 4*197*768^2, MLP 2*197*768*3072, scores + context 2*197^2*768 = 1,453,954,560;
  // x12 + head 768*1000 -> 17,563,828,224 = 17.564 GMACs (ViT_B_16_Weights "GFLOPS": 17.564).
  // Our FLOPs are 2 * MACs + one add per biased output, so /2 lands 0.05 % above.
  const Graph b16 = build_model("vit-b16", config(1, 0, 224));
  CHECK(matmul_flops(b16) == 35144147944);  // 2 * 17,563,828,224 + bias adds 16,491,496
  CHECK(std::abs(static_cast<double>(matmul_flops(b16)) / 2 / 17.564e9 - 1.0) < 0.02);
  // ViT-L/16: 24 layers, H 1024, MLP 4096 -> 61,554,712,576 MACs ("GFLOPS": 61.555).
  const Graph l16 = build_model("vit-l16", config(1, 0, 224));
  CHECK(matmul_flops(l16) == 123153200104);
  CHECK(std::abs(static_cast<double>(matmul_flops(l16)) / 2 / 61.555e9 - 1.0) < 0.02);
  // Per sample: batch 4 is 4x.
  CHECK(matmul_flops(build_model("vit-b16", config(4, 0, 224))) == 4 * 35144147944);
}

TEST_CASE("BERT forward FLOPs are 2 x non-embedding parameters per token plus attention and heads") {
  // Per token, per layer (H = 768): q,k,v,out 4*(2H^2 + H), intermediate 2*H*4H + 4H, output
  // 2*4H*H + H -> 24H^2 + 9H (= 2 x the layer's 12H^2 weights + bias adds); attention scores and
  // context 2*T*H each -> 4TH. Per token also the MLM transform 2H^2 + H and the decoder
  // 2*H*V + V; per sequence the pooler 2H^2 + H and NSP 2*H*2 + 2.
  // bert-base, T = 128: per token 12*(24*768^2 + 9*768 + 4*128*768) + 1,180,416 + 46,912,314
  //   = 222,763,578; x128 + 1,180,416 + 3,074 = 28,514,921,474 per sequence.
  const Graph base = build_model("bert-base", config(1, 128, 0));
  CHECK(matmul_flops(base) == 28514921474);
  // Kaplan et al. 2020 estimate, 2N per token (N = 85M non-embedding weights) + attention 4LTH +
  // tied decoder 2HV, agrees within 1 % (the difference is bias adds and the heads).
  const double n_non_embedding = 12 * 12.0 * 768 * 768;
  const double estimate = 128 * (2 * n_non_embedding + 4 * 12 * 128 * 768.0 + 2 * 768 * 30522.0);
  CHECK(std::abs(matmul_flops(base) / estimate - 1.0) < 0.01);
  // bert-large, T = 128: 24*(24*1024^2 + 9*1024 + 4*128*1024) + 2,098,176 + 62,539,578 per token
  //   = 681,421,626; x128 + 2,098,176 + 4,098 = 87,224,070,402.
  CHECK(matmul_flops(build_model("bert-large", config(1, 128, 0))) == 87224070402);
  // Counts: 12 layers x 4 + ... of each kind.
  CHECK(count_of(base, OpKind::attn_scores) == 12);
  CHECK(count_of(base, OpKind::embedding) == 3);
  CHECK(count_of(base, OpKind::cross_entropy) == 2);
  CHECK(count_of(base, OpKind::linear) == 12 * 6 + 4);  // 6 per layer; pooler, transform, decoder, NSP
}

TEST_CASE("GPT-2 forward FLOPs per token are 24 L H^2 + attention 4 L T H + lm_head 2 H V") {
  // gpt2, T = 1024: per token 12*(24*768^2 + 9*768 + 4*1024*768) + 2*768*50257 = 284,895,744;
  // x1024 tokens = 291,733,241,856.
  const Graph small = build_model("gpt2", config(1, 1024, 0));
  CHECK(matmul_flops(small) == 291733241856);
  // gpt2-medium: 24*(24*1024^2 + 9*1024 + 4*1024*1024) + 2*1024*50257 = 807,790,592 per token.
  CHECK(matmul_flops(build_model("gpt2-medium", config(1, 1024, 0))) == int64_t{807790592} * 1024);
  // Causal attention still counts the full T x T product (the masked half is computed, then masked).
  const Op& scores = op_named(small, "transformer.h.0.attn.scores");
  CHECK(attr_int(scores.attrs, "causal", "test") == 1);
  CHECK(scores.flops == 2 * 1024 * int64_t{1024} * 768);
  CHECK(attr_double(scores.attrs, "scale", "test") == doctest::Approx(0.125));  // 1/sqrt(64)
}

// ---------------------------------------------------------------------------------------------
// Structure, fusion, dtypes, defaults

TEST_CASE("fusing 2 models doubles parameters and FLOPs and keeps the op count") {
  for (const char* name : {"bert-base", "gpt2", "vit-b16"}) {
    CAPTURE(name);
    const bool vision = std::string(name) == "vit-b16";
    const Graph one = build_model(name, config(2, vision ? 0 : 16, vision ? 32 : 0, 1));
    const Graph two = build_model(name, config(2, vision ? 0 : 16, vision ? 32 : 0, 2));
    CHECK(two.width == 2);
    CHECK(parameter_count(two) == 2 * parameter_count(one));
    CHECK(flops_in_phase(two, Phase::forward) == 2 * flops_in_phase(one, Phase::forward));
    CHECK(two.ops.size() == one.ops.size());
  }
  // Stacked layouts: ViT tokens [k,B,1+h*w,C] after the channel-layout conv [B,k*C,h,w].
  const Graph vit2 = build_model("vit-b16", config(2, 0, 32, 2));
  CHECK(tensor_named(vit2, "conv_proj").shape == Shape{2, 2 * 768, 2, 2});
  CHECK(tensor_named(vit2, "class_token_concat").shape == Shape{2, 2, 5, 768});
  CHECK(tensor_named(vit2, "heads.head").shape == Shape{2, 2, 1000});
  const Graph bert2 = build_model("bert-base", config(2, 16, 0, 2));
  CHECK(tensor_named(bert2, "cls.predictions.decoder").shape == Shape{2, 2, 16, 30522});
  CHECK(tensor_named(bert2, "bert.encoder.layer.0.attention.self.scores").shape == Shape{2, 2, 12, 16, 16});
}

TEST_CASE("transformer graphs validate at fp32 and bf16 with int64 token inputs") {
  for (const char* name : {"bert-base", "bert-large", "gpt2", "gpt2-medium", "vit-b16", "vit-l16"}) {
    for (DType dtype : {DType::f32, DType::bf16}) {
      CAPTURE(name);
      const bool vision = std::string(name).rfind("vit", 0) == 0;
      const Graph g = build_model(name, config(2, vision ? 0 : 32, vision ? 64 : 0, 1, dtype));
      CHECK_NOTHROW(validate(g));
      // Weight bytes = parameters x dtype size (2 for bf16).
      CHECK(parameter_bytes(g) == parameter_count(g) * dtype_size_bytes(dtype));
      CHECK(tensor_named(g, "labels").dtype == DType::i64);
      if (!vision) CHECK(tensor_named(g, "input_ids").dtype == DType::i64);
    }
  }
  const Graph g = build_model("gpt2", config(2, 32, 0, 1, DType::bf16));
  CHECK(tensor_named(g, "lm_head").dtype == DType::bf16);
  CHECK(tensor_named(g, "lm_head").shape == Shape{2, 32, 50257});
}

TEST_CASE("default configs: bert seq 128 batch 16, gpt2 seq 1024 batch 8, vit 224 batch 64") {
  const Graph bert = build_model("bert-base", ModelConfig{});
  CHECK(bert.batch_size == 16);
  CHECK(tensor_named(bert, "input_ids").shape == Shape{16, 128});
  CHECK(tensor_named(bert, "bert.encoder.layer.11.output.LayerNorm").shape == Shape{16, 128, 768});
  const ModelInfo& gpt2 = builtin_models().find("gpt2");
  CHECK(gpt2.default_seq_len == 1024);
  CHECK(gpt2.default_batch_size == 8);
  const ModelInfo& vit = builtin_models().find("vit-l16");
  CHECK(vit.default_image_size == 224);
  CHECK(vit.default_batch_size == 64);
  CHECK(vit.family == "vit");
  CHECK(builtin_models().find("bert-large").default_seq_len == 128);
}

TEST_CASE("sequence lengths beyond the position table and odd image sizes are refused") {
  CHECK_THROWS_WITH_AS(build_model("bert-base", config(1, 513, 0)),
                       doctest::Contains("sequence length 513 exceeds max_position_embeddings 512"),
                       mutwo::Error);
  CHECK_NOTHROW(build_model("gpt2", config(1, 1024, 0)));
  CHECK_THROWS_AS(build_model("gpt2", config(1, 1025, 0)), mutwo::Error);
  CHECK_THROWS_WITH_AS(build_model("vit-b16", config(1, 0, 100)),
                       doctest::Contains("image size 100 must be a positive multiple of the patch size 16"),
                       mutwo::Error);
  // A dimension the model has none of is refused, not ignored (it used to build the default model).
  CHECK_THROWS_WITH_AS(build_model("vit-b16", config(1, 128, 0)),
                       "model 'vit-b16' takes no sequence length (seq_len = 128): it is not a sequence model",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(build_model("bert-base", config(1, 0, 64)),
                       "model 'bert-base' takes no image size (image_size = 64): it is not a vision model",
                       mutwo::Error);
  CHECK_THROWS_AS(build_model("dlrm", config(1, 16, 0)), mutwo::Error);
}

// The < 50 ms build target is measured by bench/bench_graph.cpp, not asserted here.
TEST_CASE("bert-large at batch 32 has 17 ops per layer and a larger training step") {
  const Graph g = build_model("bert-large", config(32, 128, 0));
  const Graph step = build_training_step(g, OptimizerConfig{});
  CHECK(step.ops.size() > g.ops.size());
  // 17 ops per layer (q,k,v, scores, softmax, dropout, context, dense, dropout, add, LayerNorm,
  // dense, gelu, dense, dropout, add, LayerNorm) x 24 + embeddings 7 + pooler 3 + MLM 5 + NSP 2.
  CHECK(g.ops.size() == 24 * 17 + 7 + 3 + 5 + 2);
}

TEST_CASE("training steps of the transformer models give every weight one gradient and token ids none") {
  for (const char* name : {"bert-base", "gpt2", "vit-b16"}) {
    for (int32_t width : {1, 2}) {
      CAPTURE(name);
      CAPTURE(width);
      const bool vision = std::string(name) == "vit-b16";
      const Graph forward = build_model(name, config(2, vision ? 0 : 8, vision ? 32 : 0, width));
      const Graph step = build_training_step(forward, OptimizerConfig{});
      CHECK_NOTHROW(validate(step));
      int64_t weights = 0, gradients = 0;
      for (const Tensor& t : step.tensors) {
        weights += t.role == TensorRole::weight ? 1 : 0;
        gradients += t.role == TensorRole::gradient ? 1 : 0;
      }
      // Tied weights (word embeddings / wte read by the embedding and the decoder / lm_head) are
      // one tensor with one accumulated gradient.
      CHECK(gradients == weights);
      int64_t id_gradients = 0;  // input_ids, position_ids, token_type_ids are int64: no gradient
      for (const Tensor& t : step.tensors)
        id_gradients += t.name.find("_ids.grad") != std::string::npos ? 1 : 0;
      CHECK(id_gradients == 0);
      if (!vision) {
        const std::string tied = std::string(name) == "gpt2" ? "transformer.wte.weight.grad"
                                                             : "bert.embeddings.word_embeddings.weight.grad";
        CHECK(step.op(tensor_named(step, tied).producer).kind == OpKind::accumulate_grad);
      } else {
        CHECK(step.op(tensor_named(step, "class_token.grad").producer).kind ==
              OpKind::class_token_concat_backward);
      }
    }
  }
}

TEST_CASE("horizontal fusion of a width-1 transformer equals building it at width 2") {
  for (const char* name : {"bert-base", "gpt2", "vit-b16"}) {
    CAPTURE(name);
    const bool vision = std::string(name) == "vit-b16";
    const Graph fused = horizontal_fuse(build_model(name, config(2, vision ? 0 : 8, vision ? 32 : 0, 1)), 2);
    const Graph built = build_model(name, config(2, vision ? 0 : 8, vision ? 32 : 0, 2));
    REQUIRE(fused.tensors.size() == built.tensors.size());
    int64_t mismatches = 0;
    for (size_t i = 0; i < built.tensors.size(); ++i) {
      mismatches += fused.tensors[i].shape != built.tensors[i].shape ? 1 : 0;
    }
    CHECK(mismatches == 0);
    CHECK(flops_in_phase(fused, Phase::forward) == flops_in_phase(built, Phase::forward));
  }
}
