// 3x3 stride-1 FP32 convolutions priced as Winograd F(4x4, 3x3) runs them (wave_kernel.hpp,
// winograd_sample, runs_winograd; calibration_csv.hpp, winograd_tiles): the tiles of a pass's image,
// the 36 products a kernel becomes, which groups price that way, and where the tiles come from (a
// convolution's geometry, a CSV row's shape text, a graph's op), each derived by hand.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/calibration_csv.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_model.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/wave_samples.hpp"
#include "tests/support/zoo_step.hpp"

using namespace mutwo::costmodel;
using mutwo::ir::KindCategory;
using mutwo::test::error_of;
using mutwo::test::wave_group;

namespace {

// N=2, C=64, 5x5, K=128, 3x3, padding 1: P = Q = 5, ceil(5 / 4) = 2, so 2 x 2 x 2 = 8 tiles.
ConvGeometry small_conv() {
  ConvGeometry g;
  g.n = 2, g.c = 64, g.h = 5, g.w = 5, g.k = 128, g.r = 3, g.s = 3, g.pad_h = 1, g.pad_w = 1;
  return g;
}

KernelSample sample_of(const KernelWork& w) {
  KernelSample s;
  s.m = w.m, s.n = w.n, s.k = w.k;
  s.flops = static_cast<double>(w.flops);
  s.bytes = static_cast<double>(w.bytes);
  s.winograd_tiles = w.winograd_tiles;
  return s;
}

}  // namespace

TEST_CASE("Winograd F(4x4, 3x3) cuts each image into ceil(P / 4) x ceil(Q / 4) tiles") {
  CHECK(winograd_tiles(2, 5, 7) == 2 * 2 * 2);
  CHECK(winograd_tiles(1, 8, 8) == 4);
  CHECK(winograd_tiles(3, 224, 224) == 3 * 56 * 56);
  CHECK(error_of([] { winograd_tiles(0, 8, 8); }) ==
        "Winograd tiles of 0 images of 8x8: each size must be >= 1");
}

TEST_CASE("a 3x3 stride-1 convolution's tiles cover the image each pass computes; no other has any") {
  CHECK(conv_work(small_conv(), ConvPass::forward, "fp32").winograd_tiles == 8);
  // Without padding a 10x10 input gives an 8x8 output: 2 x 2 tiles for the output (forward, weight
  // gradient), 3 x 3 for the input the data gradient computes.
  ConvGeometry g = small_conv();
  g.n = 1, g.h = 10, g.w = 10, g.pad_h = 0, g.pad_w = 0;
  CHECK(conv_work(g, ConvPass::forward, "fp32").winograd_tiles == 4);
  CHECK(conv_work(g, ConvPass::backward_filter, "fp32").winograd_tiles == 4);
  CHECK(conv_work(g, ConvPass::backward_data, "fp32").winograd_tiles == 9);
  ConvGeometry strided = small_conv();
  strided.stride_h = strided.stride_w = 2;
  CHECK(conv_work(strided, ConvPass::forward, "fp32").winograd_tiles == 0);
  ConvGeometry pointwise = small_conv();
  pointwise.r = pointwise.s = 1;
  CHECK(conv_work(pointwise, ConvPass::forward, "fp32").winograd_tiles == 0);
  ConvGeometry grouped = small_conv();
  grouped.groups = 2;
  CHECK(conv_work(grouped, ConvPass::forward, "fp32").winograd_tiles == 0);
}

TEST_CASE("each pass becomes 36 products over the tiles, the 3x3 taps leaving the reduction") {
  // Forward: m = 2 x 25 = 50, n = K = 128, k = 9 C = 576 -> 36 x (8 x 128 x 64).
  const KernelSample fwd =
      winograd_sample("conv2d_forward", sample_of(conv_work(small_conv(), ConvPass::forward, "fp32")));
  CHECK(fwd.batch == 36);
  CHECK(fwd.m == 8);
  CHECK(fwd.n == 128);
  CHECK(fwd.k == 64);
  CHECK(fwd.flops == 2.0 * 36 * 8 * 128 * 64);  // 4,718,592, against 7,372,800 direct
  CHECK(fwd.bytes == static_cast<double>(conv_work(small_conv(), ConvPass::forward, "fp32").bytes));
  // Data gradient: m = 50 input pixels, n = C = 64, k = 9 K = 1,152 -> 36 x (8 x 64 x 128).
  const KernelSample data = winograd_sample(
      "conv2d_backward_data", sample_of(conv_work(small_conv(), ConvPass::backward_data, "fp32")));
  CHECK((data.m == 8 && data.n == 64 && data.k == 128));
  // Weight gradient: m = K = 128, n = 9 C = 576, k = 50 -> 36 x (128 x 64 x 8).
  const KernelSample filter = winograd_sample(
      "conv2d_backward_filter", sample_of(conv_work(small_conv(), ConvPass::backward_filter, "fp32")));
  CHECK((filter.m == 128 && filter.n == 64 && filter.k == 8));
  CHECK(filter.flops == 2.0 * 36 * 8 * 128 * 64);
}

TEST_CASE("only the FP32 forward 3x3 stride-1 group prices its kernels as Winograd") {
  CHECK(runs_winograd({"conv2d_forward", "3x3s1", "cuda"}));
  CHECK_FALSE(runs_winograd({"conv2d_forward", "3x3s1", "tensor"}));
  CHECK_FALSE(runs_winograd({"conv2d_forward", "", "cuda"}));
  CHECK_FALSE(runs_winograd({"conv2d_backward_data", "3x3s1", "cuda"}));
  CHECK_FALSE(runs_winograd({"conv2d_backward_filter", "3x3s1", "cuda"}));
  CHECK_FALSE(runs_winograd({"gemm", "", "cuda"}));
}

TEST_CASE("a Winograd group prices a kernel's 36 products; a kernel without tiles as it is") {
  // A100 SXM 40GB, FP32 19,500 FLOP/ns; the group costs only flops / peak (cf = 1).
  const DeviceSpec a100 = find_device("a100-40gb");
  WaveGroupFit g = wave_group({"conv2d_forward", "3x3s1", "cuda"}, {128, 128}, {0, 0, 1, 0}, {0, 0, 0});
  const KernelSample conv = sample_of(conv_work(small_conv(), ConvPass::forward, "fp32"));
  const WaveKernel k = wave_kernel("conv2d_forward", KindCategory::conv, "3x3s1", "fp32", conv, a100);
  CHECK(predict_wave_ns(g, k, a100, 1.0) == doctest::Approx(7'372'800 / 19'500.0));  // 378.092 ns
  g.winograd = true;
  CHECK(predict_wave_ns(g, k, a100, 1.0) == doctest::Approx(4'718'592 / 19'500.0));  // 241.979 ns
  KernelSample no_tiles = conv;
  no_tiles.winograd_tiles = 0;
  const WaveKernel plain = wave_kernel("conv2d_forward", KindCategory::conv, "3x3s1", "fp32", no_tiles, a100);
  CHECK(predict_wave_ns(g, plain, a100, 1.0) == doctest::Approx(7'372'800 / 19'500.0));
}

TEST_CASE("a model file's winograd flag round-trips and is refused on a group that does not run it") {
  WaveModel m;
  m.fitted_on = "2026-11-29";
  m.groups = {wave_group({"conv2d_forward", "3x3s1", "cuda"}, {32, 32}, {1, 2, 0, 3}, {0, 0, 0})};
  m.groups[0].winograd = true;
  const std::string text = wave_model_json(m);
  CHECK(parse_wave_model(text, "w.json").groups.at(0).winograd);
  std::string bad = text;
  bad.replace(bad.find("\"math\": \"cuda\""), 14, "\"math\": \"tensor\"");
  CHECK(
      error_of([&] { parse_wave_model(bad, "w.json"); }) ==
      "wave model 'w.json': groups 0: field 'winograd' = true, but group conv2d_forward 3x3s1 (tensor) does "
      "not run Winograd");
}

TEST_CASE("a CSV row's tiles come from its shape text, else the fewest its pixels fill") {
  CalibrationRow r;
  r.kernel = "conv2d_forward";
  r.variant = "3x3s1";
  r.precision = "fp32";
  const KernelWork w = conv_work(small_conv(), ConvPass::forward, "fp32");
  r.m = w.m, r.n = w.n, r.k = w.k;
  r.shape = conv_shape_text(small_conv());
  CHECK(r.shape == "N=2 C=64 H=5 W=5 K=128 R=3 S=3 pad=1x1 stride=1x1");
  CHECK(row_winograd_tiles(r) == 8);
  // A shape text of another form (a profiler's op name and dims): 50 pixels fill at least 4 tiles.
  r.shape = "aten::convolution 2 64 5 5";
  CHECK(row_winograd_tiles(r) == 4);
  // A shape text that disagrees with the row's m, n, k is not the row's: the bound.
  r.shape = "N=4 C=64 H=5 W=5 K=128 R=3 S=3 pad=1x1 stride=1x1";
  CHECK(row_winograd_tiles(r) == 4);
  // The bound holds for any m a row may carry, the largest included.
  r.m = std::numeric_limits<int64_t>::max();
  CHECK(row_winograd_tiles(r) == std::numeric_limits<int64_t>::max() / 16 + 1);
  r.variant = "1x1s1";
  CHECK(row_winograd_tiles(r) == 0);
}

TEST_CASE("conv_shape_text's inverse reads its own text and nothing else") {
  ConvGeometry g = small_conv();
  g.groups = 4, g.c = 64, g.k = 128, g.stride_h = 2;
  const std::optional<ConvGeometry> back = parse_conv_shape_text(conv_shape_text(g));
  REQUIRE(back.has_value());
  CHECK(conv_shape_text(*back) == conv_shape_text(g));
  CHECK(back->groups == 4);
  CHECK(back->stride_h == 2);
  for (const std::string bad : {"", "N=2", "N=2 C=64 H=5 W=5 K=128 R=3 S=3 pad=1x1 stride=1x1 extra=1",
                                "C=64 N=2 H=5 W=5 K=128 R=3 S=3 pad=1x1 stride=1x1",
                                "N=2 C=64 H=5 W=5 K=128 R=3 S=3 pad=1 stride=1x1",
                                "N=99999999999999999999 C=64 H=5 W=5 K=128 R=3 S=3 pad=1x1 stride=1x1"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_conv_shape_text(bad).has_value());
  }
}

TEST_CASE("a graph's 3x3 convolutions carry their tiles into every pass's kernel") {
  // resnet18 at batch 32, layer1.0.conv1: x and y [32, 64, 56, 56], 3x3, padding 1: 32 x 14 x 14 tiles.
  const mutwo::ir::Graph g = mutwo::test::zoo_step("resnet18", 32, 1);
  for (const std::string name : {"layer1.0.conv1", "layer1.0.conv1.backward"}) {
    CAPTURE(name);
    const std::vector<OpKernel> kernels = op_kernels(g, mutwo::test::op_named(g, name));
    REQUIRE(!kernels.empty());
    for (const OpKernel& k : kernels) CHECK(k.sample.winograd_tiles == 32 * 14 * 14);
  }
  // The stem (7x7, stride 2) has none.
  for (const OpKernel& k : op_kernels(g, mutwo::test::op_named(g, "conv1")))
    CHECK(k.sample.winograd_tiles == 0);
}
