// DLRM (Naumov et al. 2019, arXiv:1906.00091) in facebookresearch/dlrm's Criteo Kaggle benchmark
// configuration, bench/dlrm_s_criteo_kaggle.sh:
//   --arch-sparse-feature-size=16 --arch-mlp-bot=13-512-256-64-16 --arch-mlp-top=512-256-1
//   --loss-function=bce --mini-batch-size=128, dot interaction without self-interaction.
// dlrm_s_pytorch.py prepends the interaction width to the top MLP: 16 + 27*26/2 = 367.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "zoo/family_builders.hpp"
#include "zoo/layers.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::zoo {
namespace {

// Rows of the 26 embedding tables: the category counts of the Criteo Kaggle (Display Advertising
// Challenge) data set after dlrm_data_pytorch.py's preprocessing (sum 33,762,577). The same list is
// hard-coded wherever the published Kaggle checkpoint is loaded, e.g. DLRM_Net(16, [1460, 583, ...],
// [13,512,256,64,16], [367,512,256,1], 'dot', ...), and in user scripts building Kaggle DLRMs.
constexpr std::array<int64_t, 26> kCriteoKaggleTableRows = {
    1460, 583,   10131227, 2202608, 305,  24,   12517, 633,     3,  93145, 5683,   8351593, 3194,
    27,   14992, 5461306,  10,      5652, 2173, 4,     7046547, 18, 15,    286181, 105,     142572};
constexpr int64_t kSparseFeatureSize = 16;
constexpr int64_t kIndicesPerBag = 1;  // Criteo: one category value per feature per sample

// create_mlp: nn.Sequential of [Linear, ReLU] per layer (module indices 2i and 2i+1). The bottom
// MLP has ReLU after every layer (sigmoid_layer = -1); the top MLP's last layer is DLRM's Sigmoid,
// which mutwo folds into bce_with_logits, so `relu_last` is false there.
ir::TensorId mlp(ir::GraphBuilder& b, const std::string& prefix, ir::TensorId x,
                 const std::vector<int64_t>& sizes, bool relu_last) {
  for (size_t i = 0; i + 1 < sizes.size(); ++i) {
    const std::string layer = prefix + "." + std::to_string(2 * i);
    x = linear_layer(b, x, layer, sizes[i + 1]);  // x's last dim is sizes[i]
    if (relu_last || i + 2 < sizes.size())
      x = b.op(ir::OpKind::relu, prefix + "." + std::to_string(2 * i + 1), {x});
  }
  return x;
}

}  // namespace

ir::Graph build_dlrm(const std::string& name, const DlrmSpec& spec, const ModelConfig& cfg) {
  if (spec.table_rows.empty()) throw Error(fmt::format("model '{}': DLRM needs at least one table", name));
  for (int64_t rows : spec.table_rows) require_positive_dim(name, "table_rows", rows);
  require_positive_dim(name, "sparse_feature_size", spec.sparse_feature_size);
  if (spec.bottom_mlp.size() < 2 || spec.bottom_mlp.back() != spec.sparse_feature_size) {
    throw Error(
        fmt::format("model '{}': the bottom MLP needs its input and at least one layer, and must end "
                    "at the sparse feature size {}",
                    name, spec.sparse_feature_size));
  }
  if (spec.top_mlp.empty() || spec.top_mlp.back() != 1)
    throw Error(
        fmt::format("model '{}': the top MLP needs at least one layer and must end at 1 logit", name));
  for (int64_t n : spec.bottom_mlp) require_positive_dim(name, "bottom_mlp", n);
  for (int64_t n : spec.top_mlp) require_positive_dim(name, "top_mlp", n);
  const int64_t batch = cfg.batch_size;
  ir::GraphBuilder b(name, cfg.dtype, cfg.width, batch);
  ir::TensorId dense_x =
      b.add_input("dense_x", {batch, spec.bottom_mlp.front()}, ir::TensorRole::input, ir::FuseAxis::stack);
  ir::TensorId x = mlp(b, "bot_l", dense_x, spec.bottom_mlp, /*relu_last=*/true);

  // apply_emb: one nn.EmbeddingBag(mode="sum") per table. sparse=False, as on DLRM's data-parallel
  // path: each table's gradient is a dense [V,16] tensor (what autodiff and the memory model see).
  std::vector<ir::TensorId> features{x};
  for (size_t t = 0; t < spec.table_rows.size(); ++t) {
    const std::string i = std::to_string(t);
    ir::TensorId indices = b.add_input("indices." + i, {batch, kIndicesPerBag}, ir::TensorRole::input,
                                       ir::FuseAxis::stack, ir::DType::i64);
    ir::TensorId w = b.add_weight("emb_l." + i + ".weight", {spec.table_rows[t], spec.sparse_feature_size},
                                  ir::FuseAxis::stack);
    features.push_back(b.op(ir::OpKind::embedding_bag, "emb_l." + i, {indices, w}));
  }
  ir::TensorId z = b.op(ir::OpKind::dot_interaction, "interact", features);

  std::vector<int64_t> top{b.tensor(z).shape.back()};  // 16 + 27*26/2 = 367 for Criteo Kaggle
  top.insert(top.end(), spec.top_mlp.begin(), spec.top_mlp.end());
  ir::TensorId logits = mlp(b, "top_l", z, top, /*relu_last=*/false);
  // DLRM applies Sigmoid then BCELoss; BCE with logits is the same function, computed stably.
  ir::TensorId labels = b.add_input("labels", {batch, 1}, ir::TensorRole::label, ir::FuseAxis::stack);
  b.add_op(ir::OpKind::bce_with_logits, "loss", {logits, labels});
  return std::move(b).finish();
}

void register_dlrm_models(ModelRegistry& registry) {
  ModelInfo info;
  info.name = "dlrm";
  info.family = "dlrm";
  info.description = "DLRM, Criteo Kaggle: 26 tables x 16, bottom MLP 13-512-256-64-16, top 367-512-256-1";
  info.reference =
      "facebookresearch/dlrm bench/dlrm_s_criteo_kaggle.sh (dlrm_s_pytorch.py, dot interaction, "
      "embedding rows = Criteo Kaggle category counts); 540,677,217 parameters";
  info.default_batch_size = 128;
  DlrmSpec spec;
  spec.table_rows.assign(kCriteoKaggleTableRows.begin(), kCriteoKaggleTableRows.end());
  spec.sparse_feature_size = kSparseFeatureSize;
  spec.bottom_mlp = {13, 512, 256, 64, 16};
  spec.top_mlp = {512, 256, 1};
  info.build = [spec](const ModelConfig& cfg) { return build_dlrm("dlrm", spec, cfg); };
  registry.add(std::move(info));
}

}  // namespace mutwo::zoo
