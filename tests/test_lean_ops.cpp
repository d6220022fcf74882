// Tempo's lean layers as a graph rewrite (transforms/lean_ops.hpp): what one Transformer layer keeps
// for backward, with and without them, derived by hand from the op definitions (ir/op_kind.hpp
// and the kinds' saved lists, which follow derivatives.yaml) and asserted on the zoo's BERT-Large
// (sequence 128 and 512) and GPT-2.
#include "transforms/lean_ops.hpp"

#include <doctest/doctest.h>

#include <string>

#include "io/trace_file.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;
using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

namespace {

// Bytes of the tensors one layer's ops make in the forward and a backward op reads: the ops whose
// names start with `prefix` (a tensor is its producer's), one sample (batch 1), fp32.
int64_t layer_saved_bytes(const Graph& step, const std::string& prefix) {
  int64_t n = 0;
  for (const Tensor& t : step.tensors) {
    if (t.producer == kNoId) continue;
    const Op& producer = step.op(t.producer);
    if (producer.phase != Phase::forward || producer.name.rfind(prefix, 0) != 0) continue;
    for (OpId c : t.consumers) {
      if (step.op(c).phase == Phase::backward) {
        n += t.bytes;
        break;
      }
    }
  }
  return n;
}

Graph step_of(const std::string& model, int64_t seq_len, const LeanOps& lean) {
  ModelConfig config;
  config.batch_size = 1;
  config.seq_len = seq_len;
  config.lean_ops = lean;
  return build_training_step(build_model(model, config), OptimizerConfig{});
}

// One layer, N = B*T tokens of hidden size H, A = B*heads*T*T attention probabilities, fp32 (4 B),
// masks bool (1 B), layer-norm statistics [B,T,1] fp32.
//
// Plain (BERT's post-LN layer; GPT-2's pre-LN block keeps the same set, shifted by one layer norm):
//   q, k (attn_scores saves both)                       2 x 4NH
//   v (attn_context saves it)                               4NH
//   softmax output P (softmax saves its result)             4A
//   dropout(P) (attn_context saves its input)               4A
//   its mask (dropout saves it)                             1A
//   context (the output projection, a linear, saves it)     4NH
//   attention-output dropout mask                           1NH
//   residual sum (layer norm saves its input)               4NH
//   its mean and rstd                                   2 x 4N
//   layer-norm output (the next linear saves it)            4NH
//   intermediate linear output (GELU saves its input)      16NH
//   GELU output (the next linear saves it)                 16NH
//   output dropout mask                                     1NH
//   residual sum (second layer norm's input)                4NH
//   its mean and rstd                                   2 x 4N
//   second layer-norm output (the next layer saves it)      4NH
//   = 66NH + 16N + 9A.
// Lean (tempo): GELU keeps its output (kept anyway) and a 1-byte mask instead of its input
// (-16NH +4NH); each layer norm keeps its output (kept anyway) and rstd instead of its input and
// mean (2 x (-4NH -4N)); attention keeps P (kept anyway) and the mask, not dropout(P) (-4A):
//   = 46NH + 8N + 5A.
int64_t plain_bytes(int64_t n, int64_t h, int64_t a) { return 66 * n * h + 16 * n + 9 * a; }
int64_t lean_bytes(int64_t n, int64_t h, int64_t a) { return 46 * n * h + 8 * n + 5 * a; }

}  // namespace

TEST_CASE("BERT-Large, sequence 128: a layer keeps 11,012,096 B per sample, 7,341,056 B with Tempo's layers") {
  // H 1024, 16 heads: N = 128, A = 16 x 128 x 128 = 262,144.
  const int64_t n = 128, h = 1024, a = 16 * 128 * 128;
  CHECK(plain_bytes(n, h, a) == 11'012'096);
  CHECK(lean_bytes(n, h, a) == 7'341'056);
  for (int layer : {0, 11, 23}) {
    const std::string prefix = "bert.encoder.layer." + std::to_string(layer) + ".";
    CAPTURE(layer);
    CHECK(layer_saved_bytes(step_of("bert-large", 128, {}), prefix) == plain_bytes(n, h, a));
    CHECK(layer_saved_bytes(step_of("bert-large", 128, parse_lean_ops("tempo")), prefix) == lean_bytes(n, h, a));
  }
}

TEST_CASE("BERT-Large, sequence 512: 72,359,936 B per layer and sample, 45,092,864 B with Tempo's layers") {
  // N = 512, A = 16 x 512 x 512 = 4,194,304: attention is now half of what a layer keeps.
  const int64_t n = 512, h = 1024, a = 16 * 512 * 512;
  CHECK(plain_bytes(n, h, a) == 72'359'936);
  CHECK(lean_bytes(n, h, a) == 45'092'864);
  const std::string prefix = "bert.encoder.layer.7.";
  CHECK(layer_saved_bytes(step_of("bert-large", 512, {}), prefix) == plain_bytes(n, h, a));
  CHECK(layer_saved_bytes(step_of("bert-large", 512, parse_lean_ops("tempo")), prefix) == lean_bytes(n, h, a));
  // Each lever alone: GELU -12NH, layer norm -8NH -8N, attention -4A.
  const Graph plain = step_of("bert-large", 512, {});
  CHECK(layer_saved_bytes(step_of("bert-large", 512, parse_lean_ops("gelu")), prefix) ==
        plain_bytes(n, h, a) - 12 * n * h);
  CHECK(layer_saved_bytes(step_of("bert-large", 512, parse_lean_ops("layernorm")), prefix) ==
        plain_bytes(n, h, a) - 8 * n * h - 8 * n);
  CHECK(layer_saved_bytes(step_of("bert-large", 512, parse_lean_ops("attention")), prefix) ==
        plain_bytes(n, h, a) - 4 * a);
}

TEST_CASE("GPT-2 (sequence 1024): 165,167,104 B per block and sample, 99,098,624 B with Tempo's layers") {
  // H 768, 12 heads: N = 1024, A = 12 x 1024 x 1024 = 12,582,912. The pre-LN block's first layer
  // norm reads the previous block's output, so the block's own tensors are the same set as BERT's.
  const int64_t n = 1024, h = 768, a = 12 * 1024 * 1024;
  CHECK(plain_bytes(n, h, a) == 165'167'104);
  CHECK(lean_bytes(n, h, a) == 99'098'624);
  const std::string prefix = "transformer.h.5.";
  CHECK(layer_saved_bytes(step_of("gpt2", 1024, {}), prefix) == plain_bytes(n, h, a));
  CHECK(layer_saved_bytes(step_of("gpt2", 1024, parse_lean_ops("tempo")), prefix) == lean_bytes(n, h, a));
}

TEST_CASE("the rewrite: same parameters and forward FLOPs but for the masks; lean kinds recorded in traces") {
  ModelConfig config;
  config.batch_size = 2;
  config.seq_len = 64;
  const Graph plain = build_model("bert-base", config);
  config.lean_ops = parse_lean_ops("tempo");
  const Graph lean = build_model("bert-base", config);
  CHECK(parameter_count(lean) == parameter_count(plain));
  int64_t gelus = 0, norms = 0, attentions = 0, dropouts_plain = 0, dropouts_lean = 0;
  for (const Op& op : lean.ops) {
    gelus += op.kind == OpKind::gelu_lean;
    norms += op.kind == OpKind::layernorm_lean;
    attentions += op.kind == OpKind::attn_dropout_context;
    dropouts_lean += op.kind == OpKind::dropout;
    CHECK(op.kind != OpKind::gelu);
    CHECK(op.kind != OpKind::layernorm);
  }
  for (const Op& op : plain.ops) dropouts_plain += op.kind == OpKind::dropout;
  CHECK(gelus == 12 + 1);       // every layer's, and the MLM head's transform
  CHECK(norms == 12 * 2 + 2);   // two per layer, the embeddings', the MLM head's
  CHECK(attentions == 12);
  CHECK(dropouts_lean == dropouts_plain - 12);  // the attention dropouts moved into the fused op
  CHECK(lean.ops.size() == plain.ops.size() - 12);
  // Forward FLOPs: the GELU mask comparison (1 per element) and the dropout now counted in the fused
  // op at the same 2 per element.
  const int64_t gelu_elements = 12 * 2 * 64 * 3072 + 2 * 64 * 768;
  CHECK(flops_in_phase(lean, Phase::forward) == flops_in_phase(plain, Phase::forward) + gelu_elements);
  // A trace keeps the lean kinds.
  Trace t;
  t.graph = lean;
  const Trace back = trace_from_json(trace_to_json(t));
  CHECK(back.graph.ops.size() == lean.ops.size());
  CHECK(back.graph.ops[static_cast<size_t>(lean.ops.back().id)].kind == lean.ops.back().kind);
  // Fused (HFTA) graphs are rewritten alike.
  config.width = 3;
  const Graph fused = build_model("bert-base", config);
  CHECK(fused.ops.size() == lean.ops.size());
}

TEST_CASE("lean ops: names parse, bad names are refused") {
  CHECK(parse_lean_ops("none") == LeanOps{});
  CHECK(parse_lean_ops("tempo") == LeanOps{true, true, true});
  CHECK(parse_lean_ops("gelu,attention") == LeanOps{true, false, true});
  CHECK(lean_ops_name(parse_lean_ops("layernorm,gelu")) == "gelu,layernorm");
  CHECK(lean_ops_name(LeanOps{true, true, true}) == "tempo");
  CHECK_THROWS_WITH_AS(parse_lean_ops("gelu,softmax"), doctest::Contains("unknown lean ops 'softmax'"),
                       UnknownNameError);
  const Graph step = step_of("bert-mini", 16, {});
  CHECK_THROWS_WITH_AS(apply_lean_ops(step, parse_lean_ops("tempo")), doctest::Contains("rewrite a forward graph"),
                       GraphError);
}
