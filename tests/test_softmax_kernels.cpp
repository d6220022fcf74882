// A softmax's two kernels (costmodel/wave_kernel.hpp, kSoftmaxWarpVariant): PyTorch runs rows of at
// most 1,024 elements as its warp kernel and longer ones as its block kernel, and the wave model prices
// them as two reduction groups. The row length travels from the graph op and from NeuSight's rows to
// the kernel; a group whose rows never sit in L2 takes its L2 rate from the family's group.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/bench_rows.hpp"
#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/neusight_csv.hpp"
#include "costmodel/wave_fit.hpp"
#include "costmodel/wave_kernel.hpp"
#include "costmodel/wave_model.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/wave_samples.hpp"
#include "tests/support/zoo_step.hpp"

using namespace mutwo::costmodel;
using mutwo::ir::KindCategory;
using mutwo::test::error_of;
using mutwo::test::wave_group;

TEST_CASE("PyTorch's softmax dispatch: the warp kernel up to 1,024 elements a row") {
  CHECK(is_softmax_warp_kernel("softmax", 1024, "fp32"));
  CHECK_FALSE(is_softmax_warp_kernel("softmax", 1025, "fp32"));
  CHECK(is_softmax_warp_kernel("softmax_backward", 512, "fp16"));
  CHECK_FALSE(is_softmax_warp_kernel("softmax", 0, "fp32"));  // no row known: the family's group
  CHECK_FALSE(is_softmax_warp_kernel("layernorm", 512, "fp32"));
  const DeviceSpec t4 = find_device("t4");
  KernelSample s;
  s.bytes = 1e8;
  s.row_elements = 168;
  CHECK(wave_kernel("softmax", KindCategory::reduction, "", "fp32", s, t4).group ==
        WaveGroupKey{"reduction", "warp", ""});
  s.row_elements = 2018;
  CHECK(wave_kernel("softmax", KindCategory::reduction, "", "fp32", s, t4).group ==
        WaveGroupKey{"reduction", "", ""});
}

TEST_CASE("the row length reaches the kernel from a graph's softmax and from NeuSight's rows") {
  // bert-mini's attention softmax at sequence 16: scores [batch, heads, 16, 16], a row of 16 keys.
  const mutwo::ir::Graph g = mutwo::test::zoo_step("bert-mini", 2, 1, 16);
  const mutwo::ir::Op& softmax = mutwo::test::op_named(g, "bert.encoder.layer.0.attention.self.softmax");
  const std::vector<OpKernel> kernels = op_kernels(g, softmax);
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].sample.row_elements == g.tensor(softmax.inputs.front()).shape.back());
  CHECK(kernels[0].sample.row_elements == 16);
  const std::vector<OpKernel> backward =
      op_kernels(g, mutwo::test::op_named(g, "bert.encoder.layer.0.attention.self.softmax.backward"));
  REQUIRE(backward.size() == 1);
  CHECK(backward[0].sample.row_elements == 16);
  CHECK(op_kind_work("softmax", {4, 2048}, "fp32").row_elements == 2048);
  CHECK(op_kind_work("relu", {4, 2048}, "fp32").row_elements == 0);
  // NeuSight's T4 rows: B = 127, H = 168 (softmax_warp_forward) and B = 191, H = 2018 (cunn_SoftMaxForward).
  const std::string header =
      "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid "
      "y,Grid z,Block x,Block y,Block z,CUDA Version,B,H\n";
  const std::vector<CalibrationRow> rows = convert_neusight_csv(
      header + "softmax,0.0333,Tesla T4,p2.1.0,8902,warp,3.2,0.8,32,1,1,32,4,1,cu121,127,168\n" +
          "softmax,0.0341,Tesla T4,p2.1.0,8902,block,38.2,4.775,191,1,1,256,1,1,cu121,191,2018\n",
      "softmax.csv");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].row_elements == 168);
  CHECK(rows[1].row_elements == 2018);
  const WaveRows w = prepare_wave_rows(rows);
  CHECK(w.kernels[0].group.variant == kSoftmaxWarpVariant);
  CHECK(w.kernels[1].group.variant.empty());
}

TEST_CASE("a softmax group whose rows never sit in L2 takes the family group's L2 rate") {
  // On the A100 (40 MiB of L2): block-kernel rows of 4-160 MiB, a quarter of them in L2, and
  // warp-kernel rows of 48-240 MiB, none in L2. Both priced by one known group.
  const WaveGroupFit truth = wave_group({"reduction", "", ""}, {}, {}, {2'000, 1.6, 0.08});
  const DeviceSpec a100 = find_device("a100-40gb");
  std::vector<CalibrationRow> rows;
  for (int i = 0; i < 40; ++i) {
    for (const int64_t row : {2048, 512}) {
      CalibrationRow r;
      r.device = "a100-40gb";
      r.precision = "fp32";
      r.kernel = "softmax";
      r.category = KindCategory::reduction;
      r.row_elements = row;
      r.bytes = (row == 2048 ? 4 : 48) * (int64_t{1} << 20) * (1 + i % 5);
      r.m = r.bytes / 8;
      KernelSample s;
      s.bytes = static_cast<double>(r.bytes);
      s.row_elements = row;
      r.time_ns = std::llround(predict_wave_ns(
          truth, wave_kernel("softmax", KindCategory::reduction, "", "fp32", s, a100), a100, 1.0));
      r.source = "test";
      rows.push_back(r);
    }
  }
  const WaveModel m = fit_wave_model(prepare_wave_rows(rows), {{"synthetic"}, "2026-11-28", false});
  const WaveGroupFit* block = m.group_for({"reduction", "", ""}, nullptr);
  const WaveGroupFit* warp = m.group_for({"reduction", "warp", ""}, nullptr);
  REQUIRE(block != nullptr);
  REQUIRE(warp != nullptr);
  REQUIRE(warp != block);
  CHECK(block->memory[2] == doctest::Approx(0.08).epsilon(0.01));
  CHECK(warp->memory[1] == doctest::Approx(1.6).epsilon(0.01));
  CHECK(warp->memory[2] == block->memory[2]);  // fitted alone it would be 0: in-L2 softmaxes free
}

TEST_CASE("a wave model file: reduction may carry the warp variant, no other bandwidth-bound family") {
  WaveModel m;
  m.fitted_on = "2026-11-28";
  m.groups = {wave_group({"reduction", "warp", ""}, {}, {}, {0, 1.5, 0.2})};
  const std::string text = wave_model_json(m);
  CHECK(wave_model_json(parse_wave_model(text, "w.json")) == text);
  std::string norm = text;
  norm.replace(norm.find("\"reduction\""), 11, "\"norm\"");
  CHECK(error_of([&] { parse_wave_model(norm, "w.json"); }) ==
        "wave model 'w.json': groups 0: field 'variant' = 'warp' must be empty or, for gemm, batched, for a "
        "conv pass, 3x3s1, for reduction, warp");
}
