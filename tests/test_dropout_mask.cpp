// Dropout's keep-mask draws beside its kernel (costmodel/dropout_mask.hpp), counted by hand from
// exec/kernels/elementwise.cpp (dropout_mask): one bernoulli_ launch per model writing its part of
// the bool mask, then the masked scale over x and the mask.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/dropout_mask.hpp"
#include "costmodel/waves_cost_model.hpp"
#include "tests/support/zoo_step.hpp"
#include "transforms/lean_ops.hpp"

namespace {

using namespace mutwo;
using namespace mutwo::costmodel;
using namespace mutwo::ir;

const Op& first_of(const Graph& g, OpKind kind) {
  for (const Op& op : g.ops) {
    if (op.kind == kind) return op;
  }
  FAIL("no op of kind " << kind_name(kind));
  return g.ops.front();
}

}  // namespace

TEST_CASE("dropout: the masked scale over x, y and the mask, and one mask draw per model") {
  // bert-base, batch 2, seq 16: the embeddings' dropout over [2,16,768] fp32: x and y 98,304 bytes
  // each, the bool mask 24,576.
  const Graph one = test::zoo_step("bert-base", 2, 1, 16);
  const Op& d1 = first_of(one, OpKind::dropout);
  const std::vector<OpKernel> k1 = op_kernels(one, d1);
  REQUIRE(k1.size() == 2);
  CHECK((k1[0].kernel == "dropout" && !k1[0].helper && k1[0].sample.bytes == 2 * 98'304 + 24'576));
  CHECK((k1[1].kernel == "dropout_mask" && k1[1].helper && k1[1].launches == 1));
  CHECK(k1[1].sample.bytes == 24'576);
  CHECK(k1[1].sample.m == 24'576);
  CHECK(k1[1].category == KindCategory::elementwise);

  // 3 models fused: one mask of 3 x 24,576 elements, drawn in 3 launches of one model's part each.
  const Graph three = test::zoo_step("bert-base", 2, 3, 16);
  const Op& d3 = first_of(three, OpKind::dropout);
  CHECK(d3.width == 3);
  const std::vector<OpKernel> k3 = op_kernels(three, d3);
  REQUIRE(k3.size() == 2);
  CHECK(k3[1].launches == 3);
  CHECK(k3[1].sample.bytes == 24'576);
  CHECK(k3[1].sample.m == 24'576);

  // The waves source prices the op as both: the masked scale once, the draw 3 times.
  const DeviceSpec h100 = find_device("h100-sxm-80gb");
  const WaveCostModel waves(h100,
                            std::shared_ptr<const WaveModel>(&shipped_wave_model(), [](const WaveModel*) {}));
  const double scale = waves.kernel_ns(k3[0], "fp32").value();
  const double draws = waves.kernel_ns(k3[1], "fp32").value();
  OpKernel one_draw = k3[1];
  one_draw.launches = 1;
  CHECK(draws == doctest::Approx(3 * waves.kernel_ns(one_draw, "fp32").value()));
  CHECK(waves.op_duration_ns(three, d3) == static_cast<int64_t>(std::ceil(scale + draws)));
}

TEST_CASE("the lean attention's dropout draws its mask too; other ops draw none") {
  const Graph g = test::zoo_step("bert-base", 2, 1, 16);
  CHECK(dropout_mask_draws(g, first_of(g, OpKind::dropout_backward)).empty());
  CHECK(dropout_mask_draws(g, first_of(g, OpKind::softmax)).empty());
  // Tempo's attention: attn_dropout_context's mask [2,12,16,16] bool, 6,144 bytes, 2 models fused.
  zoo::ModelConfig config;
  config.batch_size = 2;
  config.width = 2;
  config.seq_len = 16;
  config.lean_ops = transforms::parse_lean_ops("attention");
  const Graph lean =
      transforms::build_training_step(zoo::build_model("bert-base", config), transforms::OptimizerConfig{});
  const std::vector<OpKernel> k = dropout_mask_draws(lean, first_of(lean, OpKind::attn_dropout_context));
  REQUIRE(k.size() == 1);
  CHECK(k[0].launches == 2);
  CHECK(k[0].sample.bytes == 6'144);
}
