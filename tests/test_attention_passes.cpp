// The attention products' element-wise passes beside their GEMMs (costmodel/attention_passes.hpp),
// counted by hand from exec/kernels/dense.cpp and ATen's matmul (a copy per head split and merge).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "costmodel/attention_passes.hpp"
#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/calibration_profile.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/waves_cost_model.hpp"
#include "tests/support/zoo_step.hpp"

namespace {

using namespace mutwo;
using namespace mutwo::costmodel;
using namespace mutwo::ir;
using mutwo::test::op_named;
using mutwo::test::zoo_step;

// (kernel, bytes) of an op's helper passes.
std::vector<std::pair<std::string, double>> passes(const Graph& g, const Op& op) {
  std::vector<std::pair<std::string, double>> out;
  for (const OpKernel& k : op_kernels(g, op)) {
    if (k.helper) out.emplace_back(k.kernel, k.sample.bytes);
  }
  return out;
}

}  // namespace

TEST_CASE("bert-base's attention products: head copies and the scaling beside the GEMMs") {
  // Batch 2, seq 16, 12 heads: q, k, v, dO [2,16,768] fp32 = 98,304 bytes (Q); scores [2,12,16,16]
  // = 24,576 bytes (S).
  const Graph g = zoo_step("bert-base", 2, 1, 16);
  const std::string p = "bert.encoder.layer.0.attention.self.";
  using Passes = std::vector<std::pair<std::string, double>>;
  const double q = 98'304, s = 24'576;
  CHECK(passes(g, op_named(g, p + "scores")) == Passes{{"copy", 2 * q}, {"copy", 2 * q}, {"mul", 2 * s}});
  // Backward: dS * scale, then per gradient the other operand's copy and the merge of heads.
  CHECK(passes(g, op_named(g, p + "scores.backward")) ==
        Passes{{"mul", 2 * s}, {"copy", 2 * q}, {"copy", 2 * q}, {"copy", 2 * q}, {"copy", 2 * q}});
  CHECK(passes(g, op_named(g, p + "context")) == Passes{{"copy", 2 * q}, {"copy", 2 * q}});
  CHECK(passes(g, op_named(g, p + "context.backward")).size() == 4);
  // The GEMMs stay first and are no helpers.
  const std::vector<OpKernel> k = op_kernels(g, op_named(g, p + "scores"));
  REQUIRE(k.size() == 4);
  CHECK((k[0].kernel == "gemm" && !k[0].helper));
}

TEST_CASE(
    "a causal mask is one more pass over the scores; a profile without the passes prices them by waves") {
  const Graph g = zoo_step("gpt2", 2, 1, 16);
  const Op& scores = op_named(g, "transformer.h.0.attn.scores");
  const auto p = passes(g, scores);
  REQUIRE(p.size() == 4);
  CHECK(p.back() == std::pair<std::string, double>{"masked_fill", 2 * 24'576.0});
  // The V100's DeepBench profile has GEMMs only: the scores' GEMM by the profile, its 4 passes by the
  // shipped wave model.
  const DeviceSpec v100 = find_device("v100-16gb");
  CalibratedCostModel calibrated(v100, *find_calibration_profile(v100));
  const KernelGroupFit* gemm = calibrated.profile().find("gemm", "", "fp32");
  REQUIRE(gemm != nullptr);
  const std::vector<OpKernel> kernels = op_kernels(g, scores);
  REQUIRE(kernels.size() == 5);
  const WaveCostModel waves(v100,
                            std::shared_ptr<const WaveModel>(&shipped_wave_model(), [](const WaveModel*) {}));
  double expected = predict_kernel_ns(gemm->model, kernels[0].sample, 80);
  for (size_t i = 1; i < kernels.size(); ++i) {
    REQUIRE(kernels[i].helper);
    expected += waves.kernel_ns(kernels[i], "fp32").value();
  }
  CHECK(expected > predict_kernel_ns(gemm->model, kernels[0].sample, 80) + 4 * 1'000);  // 4 launches at least
  CHECK(calibrated.op_duration_ns(g, scores) == static_cast<int64_t>(std::ceil(expected)));
  CHECK(attention_passes(g, op_named(g, "transformer.h.0.ln_1")).empty());
}
