// GPT-2 (Radford et al., "Language Models are Unsupervised Multitask Learners", OpenAI 2019), layer
// for layer as Hugging Face transformers' GPT2LMHeadModel: token + position embeddings, pre-LN
// decoder blocks with causal self-attention and a tanh-GELU MLP, final LayerNorm, lm_head tied to
// the token embeddings. Tensor names follow its state_dict keys ("transformer.h.0.attn.c_proj.weight").
// c_attn, one Conv1D producing q, k and v together, is written as three linears q/k/v (the same
// 3 * (H*H + H) parameters and FLOPs), named "transformer.h.0.attn.c_attn.q" etc.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "zoo/family_builders.hpp"
#include "zoo/layers.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::zoo {
namespace {

// GPT2Config defaults (gpt2 / gpt2-medium config.json).
constexpr int64_t kVocabSize = 50257;
constexpr int64_t kMaxPositions = 1024;  // n_positions
constexpr double kLayerNormEps = 1e-5;
constexpr double kDropout = 0.1;  // embd_pdrop = attn_pdrop = resid_pdrop
constexpr int64_t kGeluTanh = 1;  // activation_function "gelu_new"

// GPT2Block: x + attn(ln_1(x)), then + mlp(ln_2(.)). Its Conv1D(out, in) layers are linears with bias
// (the weight stored [out,in] rather than Conv1D's [in,out]).
ir::TensorId gpt2_block(ir::GraphBuilder& b, ir::TensorId x, const std::string& block, const Gpt2Spec& spec) {
  const int64_t h = spec.hidden;
  const ir::TensorId a = layer_norm_layer(b, x, block + ".ln_1", kLayerNormEps);
  const std::string attn = block + ".attn";
  const ir::TensorId q = linear_layer(b, a, attn + ".c_attn.q", h);
  const ir::TensorId k = linear_layer(b, a, attn + ".c_attn.k", h);
  const ir::TensorId v = linear_layer(b, a, attn + ".c_attn.v", h);
  const double scale = 1.0 / std::sqrt(static_cast<double>(h / spec.heads));  // scale_attn_weights
  ir::TensorId p = b.op(ir::OpKind::attn_scores, attn + ".scores", {q, k},
                        {{"heads", spec.heads}, {"causal", int64_t{1}}, {"scale", scale}});
  p = b.op(ir::OpKind::softmax, attn + ".softmax", {p});
  p = dropout_layer(b, p, attn + ".attn_dropout", kDropout);
  ir::TensorId y = b.op(ir::OpKind::attn_context, attn + ".context", {p, v});
  y = linear_layer(b, y, attn + ".c_proj", h);
  y = dropout_layer(b, y, attn + ".resid_dropout", kDropout);
  const ir::TensorId mid = b.op(ir::OpKind::add, block + ".attn_residual", {y, x});

  ir::TensorId m = layer_norm_layer(b, mid, block + ".ln_2", kLayerNormEps);
  m = linear_layer(b, m, block + ".mlp.c_fc", 4 * h);
  m = b.op(ir::OpKind::gelu, block + ".mlp.act", {m}, {{"approximate", kGeluTanh}});
  m = linear_layer(b, m, block + ".mlp.c_proj", h);
  m = dropout_layer(b, m, block + ".mlp.dropout", kDropout);
  return b.op(ir::OpKind::add, block + ".mlp_residual", {m, mid});
}

}  // namespace

ir::Graph build_gpt2(const std::string& name, const Gpt2Spec& spec, const ModelConfig& cfg) {
  require_positive_dim(name, "layers", spec.layers);
  require_positive_dim(name, "hidden", spec.hidden);
  require_positive_dim(name, "heads", spec.heads);
  require_positive_dim(name, "vocab_size", spec.vocab_size);
  require_positive_dim(name, "max_positions", spec.max_positions);
  if (spec.hidden % spec.heads != 0)
    throw Error(fmt::format("model '{}': {} heads do not divide hidden {}", name, spec.heads, spec.hidden));
  if (cfg.seq_len > spec.max_positions) {
    throw Error(fmt::format("model '{}': sequence length {} exceeds n_positions {}", name, cfg.seq_len,
                            spec.max_positions));
  }
  ir::GraphBuilder b(name, cfg.dtype, cfg.width, cfg.batch_size);
  const int64_t h = spec.hidden;
  const std::vector<int64_t> tokens{cfg.batch_size, cfg.seq_len};
  const ir::TensorId input_ids =
      b.add_input("input_ids", tokens, ir::TensorRole::input, ir::FuseAxis::stack, ir::DType::i64);
  const ir::TensorId position_ids =
      b.add_input("position_ids", tokens, ir::TensorRole::input, ir::FuseAxis::stack, ir::DType::i64);
  // Labels are the inputs shifted by one; the shift is a view and not modelled.
  const ir::TensorId labels =
      b.add_input("labels", tokens, ir::TensorRole::label, ir::FuseAxis::stack, ir::DType::i64);

  const ir::TensorId wte = b.add_weight("transformer.wte.weight", {spec.vocab_size, h}, ir::FuseAxis::stack);
  const ir::TensorId wpe =
      b.add_weight("transformer.wpe.weight", {spec.max_positions, h}, ir::FuseAxis::stack);
  ir::TensorId x = b.op(ir::OpKind::embedding, "transformer.wte", {input_ids, wte});
  const ir::TensorId pos = b.op(ir::OpKind::embedding, "transformer.wpe", {position_ids, wpe});
  x = b.op(ir::OpKind::add, "transformer.add_position", {x, pos});
  x = dropout_layer(b, x, "transformer.drop", kDropout);

  for (int64_t i = 0; i < spec.layers; ++i) x = gpt2_block(b, x, fmt::format("transformer.h.{}", i), spec);

  x = layer_norm_layer(b, x, "transformer.ln_f", kLayerNormEps);
  const ir::TensorId logits = b.op(ir::OpKind::linear, "lm_head", {x, wte});  // tied to wte, no bias
  b.add_op(ir::OpKind::cross_entropy, "loss", {logits, labels});
  return std::move(b).finish();
}

namespace {

void add_gpt2(ModelRegistry& registry, const std::string& name, const std::string& description,
              const std::string& reference, Gpt2Spec spec) {
  ModelInfo info;
  info.name = name;
  info.family = "gpt2";
  info.description = description;
  info.reference = reference;
  info.default_batch_size = 8;
  info.default_seq_len = 1024;
  info.build = [name, spec](const ModelConfig& cfg) { return build_gpt2(name, spec, cfg); };
  registry.add(std::move(info));
}

}  // namespace

void register_gpt2_models(ModelRegistry& registry) {
  add_gpt2(registry, "gpt2", "GPT-2 small language model: 12 layers, H 768, 12 heads, 124.4M parameters",
           "transformers GPT2LMHeadModel, gpt2 config", {12, 768, 12, kVocabSize, kMaxPositions});
  add_gpt2(registry, "gpt2-medium",
           "GPT-2 medium language model: 24 layers, H 1024, 16 heads, 354.8M parameters",
           "transformers GPT2LMHeadModel, gpt2-medium config", {24, 1024, 16, kVocabSize, kMaxPositions});
  // The 1.5B GPT-2 whose 128 GB training footprint Harmony (HotOS 2021) starts from.
  add_gpt2(registry, "gpt2-xl", "GPT-2 XL language model: 48 layers, H 1600, 25 heads, 1557.6M parameters",
           "transformers GPT2LMHeadModel, gpt2-xl config", {48, 1600, 25, kVocabSize, kMaxPositions});
}

}  // namespace mutwo::zoo
