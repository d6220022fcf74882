// The kernels ops run where they are not one kernel over the graph's bytes: a fused convolution
// (HFTA: k models' convolutions as one with k times their groups) is priced as its k models' kernels
// one after another, as cuDNN ran it on the H200 (docs/VALIDATION.md, "Fused convolutions"), a
// depthwise one stays one kernel over every channel; a fused layer norm applies each model's affine
// transform apart, and batch norm reads its input once more for its statistics
// (costmodel/norm_kernels.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/calibration_profile.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/norm_kernels.hpp"
#include "costmodel/waves_cost_model.hpp"
#include "ir/conv_groups.hpp"
#include "tests/support/zoo_step.hpp"

namespace {

using namespace mutwo;
using namespace mutwo::costmodel;
using namespace mutwo::ir;
using mutwo::test::op_named;
using mutwo::test::zoo_step;

void check_same_sample(const OpKernel& fused, const OpKernel& one) {
  CHECK(fused.kernel == one.kernel);
  CHECK(fused.variant == one.variant);
  CHECK(fused.sample.m == one.sample.m);
  CHECK(fused.sample.n == one.sample.n);
  CHECK(fused.sample.k == one.sample.k);
  CHECK(fused.sample.flops == one.sample.flops);
  CHECK(fused.sample.bytes == one.sample.bytes);
  CHECK(fused.sample.winograd_tiles == one.sample.winograd_tiles);
}

}  // namespace

TEST_CASE("a fused convolution is its models' kernels one after another, forward and backward") {
  // resnet18 at batch 32 (the H200 lease's fusion run): layer1.0.conv1, x [32,64,56,56] per model,
  // W [64,64,3,3], padding 1; four models fused: x [32,256,56,56], W [256,64,3,3], 4 groups.
  const Graph one = zoo_step("resnet18", 32, 1);
  const Graph four = zoo_step("resnet18", 32, 4);
  for (const std::string name : {"layer1.0.conv1", "layer1.0.conv1.backward"}) {
    CAPTURE(name);
    const Op& op1 = op_named(one, name);
    const Op& op4 = op_named(four, name);
    const std::vector<OpKernel> k1 = op_kernels(one, op1);
    const std::vector<OpKernel> k4 = op_kernels(four, op4);
    REQUIRE(k1.size() == k4.size());
    REQUIRE(!k4.empty());
    for (size_t i = 0; i < k4.size(); ++i) {
      CHECK(k1[i].launches == 1);
      CHECK(k4[i].launches == 4);
      check_same_sample(k4[i], k1[i]);  // each launch is one model's kernel
    }
    // Every source built on op_kernels prices the fused op at 4 x one model's, to the rounding.
    for (const std::string source : {"waves", "calibrated"}) {
      CAPTURE(source);
      const auto cost = builtin_cost_sources().create(source, find_device("h200"));
      const int64_t t1 = cost->op_duration_ns(one, op1);
      const int64_t t4 = cost->op_duration_ns(four, op4);
      CHECK(t4 <= 4 * t1);
      CHECK(t4 >= 4 * t1 - 4);
    }
  }
  const Op& forward = op_named(four, "layer1.0.conv1");
  CHECK(conv_groups(forward) == 4);  // what the executor passes to at::convolution
  const std::vector<OpKernel> k = op_kernels(four, forward);
  CHECK(k[0].sample.m == 32 * 56 * 56);
  CHECK(k[0].sample.n == 64);
  CHECK(k[0].sample.k == 64 * 9);
  CHECK(k[0].variant == "3x3s1");
}

TEST_CASE("a fused depthwise convolution stays one kernel over every model's channels") {
  // mobilenet-v2's first depthwise conv: 32 channels, groups 32 per model; fused 2 wide: 64 groups,
  // W [64,1,3,3], one input channel per group.
  const Graph two = zoo_step("mobilenet-v2", 8, 2);
  const Op& dw = op_named(two, "features.1.conv.0.0");
  CHECK(conv_groups(dw) == 64);
  for (const std::string name : {"features.1.conv.0.0", "features.1.conv.0.0.backward"}) {
    CAPTURE(name);
    const std::vector<OpKernel> k = op_kernels(two, op_named(two, name));
    REQUIRE(!k.empty());
    for (const OpKernel& kernel : k) {
      CHECK(kernel.launches == 1);
      CHECK(kernel.variant == "grouped");
    }
  }
  CHECK(op_kernels(two, dw)[0].sample.n == 64);
}

TEST_CASE("a fused layer norm is ATen's norm without affine plus each model's affine and its gradients") {
  // bert-base at batch 2, seq 16, 2 models: the embeddings' LayerNorm normalises x [2, 2, 16, 768]
  // fp32 = 196,608 bytes (X).
  const Graph one = zoo_step("bert-base", 2, 1, 16);
  const Graph two = zoo_step("bert-base", 2, 2, 16);
  const std::string name = "bert.embeddings.LayerNorm";
  const Op& fwd = op_named(two, name);
  REQUIRE(two.tensor(fwd.inputs[0]).bytes == 196'608);
  const std::vector<OpKernel> f = op_kernels(two, fwd);
  REQUIRE(f.size() == 2);
  CHECK((f[0].kernel == "layernorm" && f[0].category == KindCategory::norm &&
         f[0].sample.bytes == 2 * 196'608.0));
  CHECK((f[1].kernel == "add" && f[1].category == KindCategory::elementwise &&
         f[1].sample.bytes == 2 * 196'608.0));
  // Its backward needs dx and both affine gradients: dY * gamma (2X), the norm's backward (3X),
  // dgamma's three element-wise passes (2X, 2X, 3X) and sum (1X), dbeta's sum (1X): 14X, 7 kernels.
  const std::vector<OpKernel> b = op_kernels(two, op_named(two, name + ".backward"));
  REQUIRE(b.size() == 7);
  double passes = 0;
  for (const OpKernel& k : b) passes += k.sample.bytes / 196'608.0;
  CHECK(passes == 14);
  CHECK(b[1].kernel == "layernorm_backward");
  CHECK(b[1].category == KindCategory::norm);
  CHECK((b[5].category == KindCategory::reduction && b[6].category == KindCategory::reduction));
  // One model runs ATen's own op with its affine: one kernel each, as before.
  CHECK(costmodel::norm_kernels(one, op_named(one, name)).empty());
  CHECK(op_kernels(one, op_named(one, name + ".backward")).size() == 1);
}

TEST_CASE("batch norm reads its input once more for its statistics, a helper pass beside its kernel") {
  // resnet18 at batch 32, one model: bn1 normalises x [32,64,112,112] fp32 = 102,760,448 bytes.
  const Graph one = zoo_step("resnet18", 32, 1);
  const Op& bn = op_named(one, "bn1");
  const double x = 102'760'448;
  REQUIRE(one.tensor(bn.inputs[0]).bytes == x);
  const std::vector<OpKernel> f = op_kernels(one, bn);
  REQUIRE(f.size() == 2);
  CHECK((f[0].kernel == "batchnorm2d" && !f[0].helper));  // the op's own bytes, as bench-ops fits it
  CHECK(f[0].sample.bytes == static_cast<double>(bn.bytes_read + bn.bytes_written));
  CHECK((f[1].helper && f[1].category == KindCategory::reduction && f[1].sample.bytes == x));
  // Its backward reduces dY and x per channel first: 2X.
  const std::vector<OpKernel> b = op_kernels(one, op_named(one, "bn1.backward"));
  REQUIRE(b.size() == 2);
  CHECK((b[1].helper && b[1].sample.bytes == 2 * x));
  // The H200's bench-ops profile has a batchnorm2d group fitted on whole-op times, the statistics
  // pass inside them: calibrated prices bn1 by that group alone, not the pass again. The waves
  // source, whose norm group is fitted on single kernels, adds the pass.
  const DeviceSpec h200 = find_device("h200");
  const CalibratedCostModel calibrated(h200, *find_calibration_profile(h200));
  const KernelGroupFit* g = calibrated.profile().find("batchnorm2d", "", "fp32");
  REQUIRE(g != nullptr);
  const WaveCostModel waves(h200,
                            std::shared_ptr<const WaveModel>(&shipped_wave_model(), [](const WaveModel*) {}));
  const std::optional<double> statistics = waves.kernel_ns(f[1], "fp32");
  const std::optional<double> kernel = waves.kernel_ns(f[0], "fp32");
  REQUIRE((statistics.has_value() && kernel.has_value()));
  CHECK(*statistics > 1000);  // 103 MB at the H200's 4.8 TB/s: over 20 us
  CHECK(calibrated.op_duration_ns(one, bn) ==
        static_cast<int64_t>(std::ceil(predict_kernel_ns(g->model, f[0].sample, h200.sm_count))));
  CHECK(waves.op_duration_ns(one, bn) == static_cast<int64_t>(std::ceil(*kernel + *statistics)));
  // Its backward has no group in the profile: both kernels by the wave model, the pass included.
  const Op& bnb = op_named(one, "bn1.backward");
  REQUIRE(calibrated.profile().find("batchnorm2d_backward", "", "fp32") == nullptr);
  CHECK(calibrated.op_duration_ns(one, bnb) == waves.op_duration_ns(one, bnb));
}

TEST_CASE("calibrated prices the kernels its profile lacks by the caller's wave model") {
  // The V100's DeepBench profile has no norm kernel: batch norm is the wave model's, here one whose
  // coefficients are doubled, so the calibrated price must move with it and equal the waves source's.
  const Graph one = zoo_step("resnet18", 32, 1);
  const Op& bn = op_named(one, "bn1");
  auto doubled = std::make_shared<WaveModel>(shipped_wave_model());
  const auto doubled_terms = [](WaveGroupFit& g) {
    for (double& c : g.compute) c *= 2;
    for (double& d : g.memory) d *= 2;
  };
  for (WaveGroupFit& g : doubled->groups) doubled_terms(g);
  for (WaveRefinement& r : doubled->refinements) {
    for (WaveGroupFit& g : r.groups) doubled_terms(g);
  }
  CostSourceInputs inputs;
  inputs.wave_model = doubled;
  const DeviceSpec v100 = find_device("v100-16gb");
  const int64_t custom = builtin_cost_sources().create("calibrated", v100, inputs)->op_duration_ns(one, bn);
  CHECK(custom == builtin_cost_sources().create("waves", v100, inputs)->op_duration_ns(one, bn));
  CHECK(custom > builtin_cost_sources().create("calibrated", v100)->op_duration_ns(one, bn));
}
