// BERT pre-training (Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for
// Language Understanding", NAACL 2019), layer for layer as Hugging Face transformers'
// BertForPreTraining: BertModel (embeddings, post-LN encoder, pooler) + masked-LM head (transform,
// decoder tied to the word embeddings, own bias) + next-sentence head. Tensor names follow its
// state_dict keys ("bert.encoder.layer.0.attention.self.query.weight").
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

// BertConfig defaults (bert-base-uncased / bert-large-uncased config.json).
constexpr int64_t kVocabSize = 30522;
constexpr int64_t kMaxPositions = 512;
constexpr int64_t kTypeVocabSize = 2;
constexpr double kLayerNormEps = 1e-12;
constexpr double kDropout = 0.1;  // hidden_dropout_prob = attention_probs_dropout_prob
constexpr int64_t kGeluErf = 0;   // hidden_act "gelu" is the exact (erf) GELU

// BertLayer: self-attention (BertSelfAttention + BertSelfOutput), BertIntermediate, BertOutput.
ir::TensorId bert_layer(ir::GraphBuilder& b, ir::TensorId x, const std::string& layer, const BertSpec& spec) {
  const int64_t h = spec.hidden;
  const std::string self = layer + ".attention.self";
  const ir::TensorId q = linear_layer(b, x, self + ".query", h);
  const ir::TensorId k = linear_layer(b, x, self + ".key", h);
  const ir::TensorId v = linear_layer(b, x, self + ".value", h);
  const double scale = 1.0 / std::sqrt(static_cast<double>(h / spec.heads));
  ir::TensorId p = b.op(ir::OpKind::attn_scores, self + ".scores", {q, k},
                        {{"heads", spec.heads}, {"causal", int64_t{0}}, {"scale", scale}});
  p = b.op(ir::OpKind::softmax, self + ".softmax", {p});
  p = dropout_layer(b, p, self + ".dropout", kDropout);
  const ir::TensorId context = b.op(ir::OpKind::attn_context, self + ".context", {p, v});

  const std::string attn_out = layer + ".attention.output";
  ir::TensorId y = linear_layer(b, context, attn_out + ".dense", h);
  y = dropout_layer(b, y, attn_out + ".dropout", kDropout);
  y = b.op(ir::OpKind::add, attn_out + ".residual", {y, x});
  const ir::TensorId attended = layer_norm_layer(b, y, attn_out + ".LayerNorm", kLayerNormEps);

  ir::TensorId z = linear_layer(b, attended, layer + ".intermediate.dense", 4 * h);
  z = b.op(ir::OpKind::gelu, layer + ".intermediate.intermediate_act_fn", {z}, {{"approximate", kGeluErf}});
  z = linear_layer(b, z, layer + ".output.dense", h);
  z = dropout_layer(b, z, layer + ".output.dropout", kDropout);
  z = b.op(ir::OpKind::add, layer + ".output.residual", {z, attended});
  return layer_norm_layer(b, z, layer + ".output.LayerNorm", kLayerNormEps);
}

}  // namespace

ir::Graph build_bert(const std::string& name, const BertSpec& spec, const ModelConfig& cfg) {
  require_positive_dim(name, "layers", spec.layers);
  require_positive_dim(name, "hidden", spec.hidden);
  require_positive_dim(name, "heads", spec.heads);
  require_positive_dim(name, "vocab_size", spec.vocab_size);
  require_positive_dim(name, "max_positions", spec.max_positions);
  require_positive_dim(name, "type_vocab_size", spec.type_vocab_size);
  if (spec.hidden % spec.heads != 0)
    throw Error(fmt::format("model '{}': {} heads do not divide hidden {}", name, spec.heads, spec.hidden));
  if (cfg.seq_len > spec.max_positions) {
    throw Error(fmt::format("model '{}': sequence length {} exceeds max_position_embeddings {}", name,
                            cfg.seq_len, spec.max_positions));
  }
  ir::GraphBuilder b(name, cfg.dtype, cfg.width, cfg.batch_size);
  const int64_t batch = cfg.batch_size;
  const int64_t seq = cfg.seq_len;
  const int64_t h = spec.hidden;
  const std::vector<int64_t> tokens{batch, seq};
  const ir::TensorId input_ids =
      b.add_input("input_ids", tokens, ir::TensorRole::input, ir::FuseAxis::stack, ir::DType::i64);
  const ir::TensorId position_ids =
      b.add_input("position_ids", tokens, ir::TensorRole::input, ir::FuseAxis::stack, ir::DType::i64);
  const ir::TensorId token_type_ids =
      b.add_input("token_type_ids", tokens, ir::TensorRole::input, ir::FuseAxis::stack, ir::DType::i64);
  const ir::TensorId mlm_labels =
      b.add_input("labels", tokens, ir::TensorRole::label, ir::FuseAxis::stack, ir::DType::i64);
  const ir::TensorId nsp_labels =
      b.add_input("next_sentence_label", {batch}, ir::TensorRole::label, ir::FuseAxis::stack, ir::DType::i64);

  // BertEmbeddings: word + position + token type, LayerNorm, dropout.
  const std::string emb = "bert.embeddings";
  const ir::TensorId word_w =
      b.add_weight(emb + ".word_embeddings.weight", {spec.vocab_size, h}, ir::FuseAxis::stack);
  const ir::TensorId pos_w =
      b.add_weight(emb + ".position_embeddings.weight", {spec.max_positions, h}, ir::FuseAxis::stack);
  const ir::TensorId type_w =
      b.add_weight(emb + ".token_type_embeddings.weight", {spec.type_vocab_size, h}, ir::FuseAxis::stack);
  ir::TensorId x = b.op(ir::OpKind::embedding, emb + ".word_embeddings", {input_ids, word_w});
  const ir::TensorId type_x =
      b.op(ir::OpKind::embedding, emb + ".token_type_embeddings", {token_type_ids, type_w});
  x = b.op(ir::OpKind::add, emb + ".add_token_type", {x, type_x});
  const ir::TensorId pos_x = b.op(ir::OpKind::embedding, emb + ".position_embeddings", {position_ids, pos_w});
  x = b.op(ir::OpKind::add, emb + ".add_position", {x, pos_x});
  x = layer_norm_layer(b, x, emb + ".LayerNorm", kLayerNormEps);
  x = dropout_layer(b, x, emb + ".dropout", kDropout);

  for (int64_t i = 0; i < spec.layers; ++i)
    x = bert_layer(b, x, fmt::format("bert.encoder.layer.{}", i), spec);

  // BertPooler: dense + tanh on the first ([CLS]) token.
  ir::TensorId pooled =
      b.op(ir::OpKind::select_token, "bert.pooler.first_token", {x}, {{"index", int64_t{0}}});
  pooled = linear_layer(b, pooled, "bert.pooler.dense", h);
  pooled = b.op(ir::OpKind::tanh, "bert.pooler.activation", {pooled});

  // BertLMPredictionHead: transform (dense, gelu, LayerNorm), decoder tied to the word embeddings.
  ir::TensorId m = linear_layer(b, x, "cls.predictions.transform.dense", h);
  m = b.op(ir::OpKind::gelu, "cls.predictions.transform.transform_act_fn", {m}, {{"approximate", kGeluErf}});
  m = layer_norm_layer(b, m, "cls.predictions.transform.LayerNorm", kLayerNormEps);
  const ir::TensorId decoder_bias =
      b.add_weight("cls.predictions.bias", {spec.vocab_size}, ir::FuseAxis::stack);
  const ir::TensorId mlm_logits =
      b.op(ir::OpKind::linear, "cls.predictions.decoder", {m, word_w, decoder_bias});
  b.add_op(ir::OpKind::cross_entropy, "mlm_loss", {mlm_logits, mlm_labels});

  // BertOnlyNSPHead: Linear(H, 2) on the pooled output.
  const ir::TensorId nsp_logits = linear_layer(b, pooled, "cls.seq_relationship", 2);
  b.add_op(ir::OpKind::cross_entropy, "nsp_loss", {nsp_logits, nsp_labels});
  return std::move(b).finish();
}

namespace {

void add_bert(ModelRegistry& registry, const std::string& name, const std::string& description,
              const std::string& reference, BertSpec spec) {
  ModelInfo info;
  info.name = name;
  info.family = "bert";
  info.description = description;
  info.reference = reference;
  info.default_batch_size = 16;
  info.default_seq_len = 128;
  info.build = [name, spec](const ModelConfig& cfg) { return build_bert(name, spec, cfg); };
  registry.add(std::move(info));
}

}  // namespace

void register_bert_models(ModelRegistry& registry) {
  add_bert(registry, "bert-base",
           "BERT-Base pre-training (MLM + NSP): 12 layers, H 768, 12 heads, 110.1M parameters",
           "transformers BertForPreTraining, bert-base-uncased config",
           {12, 768, 12, kVocabSize, kMaxPositions, kTypeVocabSize});
  add_bert(registry, "bert-large",
           "BERT-Large pre-training (MLM + NSP): 24 layers, H 1024, 16 heads, 336.2M parameters",
           "transformers BertForPreTraining, bert-large-uncased config",
           {24, 1024, 16, kVocabSize, kMaxPositions, kTypeVocabSize});
}

}  // namespace mutwo::zoo
