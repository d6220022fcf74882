// The wave model: its features on a datasheet, its price, the groups it picks, its file, its fit
// across GPUs (with a harness term for eager-op measurements) and the `waves` cost source.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/relative_nnls.hpp"
#include "costmodel/wave_fit.hpp"
#include "costmodel/wave_model.hpp"
#include "costmodel/wave_validation.hpp"
#include "costmodel/waves_cost_model.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/wave_samples.hpp"
#include "transforms/autodiff.hpp"
#include "transforms/fusion.hpp"

using namespace mutwo::costmodel;
using mutwo::ir::KindCategory;
using mutwo::test::error_of;
using mutwo::test::gemm_row;
using mutwo::test::gemm_sample;
using mutwo::test::wave_group;

TEST_CASE("wave features: 2 products of 1000x300x100 in 128x64 tiles on the A100 fill one wave") {
  const DeviceSpec a100 = find_device("a100-40gb");
  const WaveKernel k =
      wave_kernel("gemm", KindCategory::matmul, "", "fp32", gemm_sample(2, 1000, 300, 100), a100);
  CHECK(k.group == WaveGroupKey{"gemm", "batched", "cuda"});
  CHECK(k.peak_flops_per_ns == doctest::Approx(19'500.0));
  const WaveFeatures f = wave_features(k, {128, 64}, a100, 1.0);
  // tiles = 2 * ceil(1000/128) * ceil(300/64) = 2 * 8 * 5 = 80 <= 108 SMs: 1 wave, 1 / 1.41 GHz ns.
  CHECK(f.compute[0] == 1.0);
  CHECK(f.compute[1] == doctest::Approx(1 / 1.41));
  // 120 MFLOP at 19.5 TFLOP/s: 6,153.85 ns; Fq = 120e6 * 1 * 108 * 128 * 64 / (2 * 1000 * 300) =
  // 176,947,200 -> 9,074.22 ns (the idle tile slots of the wave).
  CHECK(f.compute[2] == doctest::Approx(6'153.846));
  CHECK(f.compute[3] == doctest::Approx(9'074.215));
  // A GEMM's operands stream from HBM: 3,440,000 B / 1,555 B/ns = 2,212.2 ns; nothing from L2.
  CHECK(f.memory[1] == doctest::Approx(2'212.219));
  CHECK(f.memory[2] == 0);
  // Price of a group with c = [1000, 500, 1.2, 0.1], d = [800, 1.1, 0.05]:
  // compute 1000 + 500 * 0.70922 + 1.2 * 6153.85 + 0.1 * 9074.22 = 9,646.65 ns;
  // memory 800 + 1.1 * 2212.22 = 3,233.44 ns; the larger binds.
  const WaveGroupFit g = wave_group({"gemm", "", "cuda"}, {128, 64}, {1000, 500, 1.2, 0.1}, {800, 1.1, 0.05});
  CHECK(predict_wave_ns(g, k, a100, 1.0) == doctest::Approx(9'646.647));
}

TEST_CASE("wave kernels: the math class and peak follow the precision and the GPU") {
  const auto peak_of = [](std::string_view precision, const char* gpu) {
    const WaveKernel k = wave_kernel("gemm", KindCategory::matmul, "", precision, gemm_sample(1, 64, 64, 64),
                                     find_device(gpu));
    return std::make_pair(k.group.math, k.peak_flops_per_ns);
  };
  CHECK(peak_of("fp16", "v100-16gb") == std::make_pair(std::string("tensor"), 125'000.0));    // tensor cores
  CHECK(peak_of("fp16", "p100-pcie-16gb") == std::make_pair(std::string("cuda"), 18'700.0));  // FP16x2
  CHECK(peak_of("bf16", "v100-16gb") ==
        std::make_pair(std::string("cuda"), 15'700.0));  // no bf16 tensor cores
  CHECK(peak_of("bf16", "a100-40gb") == std::make_pair(std::string("tensor"), 312'000.0));
  CHECK(peak_of("tf32", "a100-40gb") == std::make_pair(std::string("tensor"), 156'000.0));
  CHECK(peak_of("tf32", "v100-16gb") == std::make_pair(std::string("cuda"), 15'700.0));  // no TF32
  // A conv keeps its 3x3 stride-1 class apart, a GEMM of several products is batched; bandwidth-bound
  // kinds go to their family.
  const DeviceSpec a100 = find_device("a100-40gb");
  CHECK(wave_kernel("gemm", KindCategory::matmul, "", "fp32", gemm_sample(8, 64, 64, 64), a100).group ==
        WaveGroupKey{"gemm", "batched", "cuda"});
  CHECK(wave_kernel("gemm", KindCategory::matmul, "", "fp32", gemm_sample(1, 64, 64, 64), a100).group ==
        WaveGroupKey{"gemm", "", "cuda"});
  CHECK(wave_kernel("conv2d_forward", KindCategory::conv, "3x3s1", "fp32", gemm_sample(1, 8, 8, 8), a100)
            .group == WaveGroupKey{"conv2d_forward", "3x3s1", "cuda"});
  CHECK(
      wave_kernel("conv2d_backward_data", KindCategory::conv, "1x1s1", "fp16", gemm_sample(1, 8, 8, 8), a100)
          .group == WaveGroupKey{"conv2d_backward_data", "", "tensor"});
  CHECK(wave_kernel("layernorm", KindCategory::norm, "", "fp32", gemm_sample(1, 8, 1, 1), a100).group ==
        WaveGroupKey{"norm", "", ""});
  CHECK(wave_kernel("softmax", KindCategory::reduction, "", "fp16", gemm_sample(1, 8, 1, 1), a100).group ==
        WaveGroupKey{"reduction", "", ""});
  CHECK(wave_kernel("adam_step", KindCategory::optimizer, "", "fp32", gemm_sample(1, 8, 1, 1), a100).group ==
        WaveGroupKey{"elementwise", "", ""});
}

TEST_CASE("a bandwidth-bound kernel whose bytes fit in L2 streams them from L2") {
  const DeviceSpec a100 = find_device("a100-40gb");  // 40 MiB of L2, 108 SMs at 1.41 GHz
  KernelSample s;
  s.m = 1 << 20;
  s.bytes = 30.0 * (1 << 20);  // fits
  WaveFeatures f =
      wave_features(wave_kernel("relu", KindCategory::elementwise, "", "fp32", s, a100), {}, a100, 1.0);
  CHECK(f.memory[1] == 0);
  CHECK(f.memory[2] == doctest::Approx(30.0 * (1 << 20) / (108 * 1.41)));  // 206,575.3 byte-ns per SM-cycle
  s.bytes = 50.0 * (1 << 20);  // does not: 52,428,800 B / 1,555 B/ns from HBM
  f = wave_features(wave_kernel("relu", KindCategory::elementwise, "", "fp32", s, a100), {}, a100, 1.0);
  CHECK(f.memory[1] == doctest::Approx(33'716.270));
  CHECK(f.memory[2] == 0);
  CHECK(f.compute[1] == 0);  // no waves without a tile
  CHECK(f.compute[3] == 0);
}

TEST_CASE("a refinement whose rows all stream from HBM keeps the cross-GPU group's L2 rate") {
  // Elementwise kernels priced by a known group: on the A100 (40 MiB of L2) half of them fit in L2, on
  // the T4 (4 MiB) none does. The T4's own rows cannot say the L2 rate: fitted, it would be 0 and a
  // 3 MiB kernel on the T4 would cost the fixed cost alone.
  // (0.08 SM-cycles per byte: L2 at 1.9x the A100's HBM rate, so that the A100's rows show it.)
  const WaveGroupFit truth = wave_group({"elementwise", "", ""}, {}, {}, {2'000, 1.25, 0.08});
  std::vector<CalibrationRow> rows;
  for (const char* gpu : {"a100-40gb", "t4"}) {
    const DeviceSpec device = find_device(gpu);
    for (int i = 0; i < 40; ++i) {
      KernelSample s;
      s.m = 1;
      s.bytes = (std::string_view(gpu) == "t4" ? 8.0 : 1.0) * (1 << 20) * (1 + i);  // T4: 8-320 MiB
      CalibrationRow r;
      r.device = gpu;
      r.precision = "fp32";
      r.kernel = "relu";
      r.category = KindCategory::elementwise;
      r.bytes = static_cast<int64_t>(s.bytes);
      r.time_ns = std::llround(predict_wave_ns(
          truth, wave_kernel("relu", KindCategory::elementwise, "", "fp32", s, device), device, 1.0));
      r.source = "test";
      rows.push_back(r);
    }
  }
  const WaveModel m = fit_wave_model(prepare_wave_rows(rows), {{"synthetic"}, "2026-11-28", true});
  const DeviceSpec t4 = find_device("t4");
  const WaveGroupFit* across = m.group_for({"elementwise", "", ""}, nullptr);
  const WaveGroupFit* own = m.group_for({"elementwise", "", ""}, t4);
  REQUIRE(across != nullptr);
  REQUIRE(own != nullptr);
  REQUIRE(own != across);  // the T4's refinement
  CHECK(across->memory[2] == doctest::Approx(0.08).epsilon(0.01));
  CHECK(own->memory[1] == doctest::Approx(1.25).epsilon(0.01));
  CHECK(own->memory[2] == across->memory[2]);
  // A 3 MiB kernel on the T4 (40 SMs at 1.59 GHz) from L2: 2,000 + 0.08 x 3 MiB / 63.6 = 5,957 ns, the
  // cheaper of that and HBM's 2,000 + 1.25 x 3 MiB / 320 B/ns = 14,288 ns (and not 2,000).
  KernelSample s;
  s.bytes = 3.0 * (1 << 20);
  const WaveKernel k = wave_kernel("relu", KindCategory::elementwise, "", "fp32", s, t4);
  CHECK(predict_wave_ns(*own, k, t4, m.clock_ratio(t4)) == doctest::Approx(5'957).epsilon(0.01));
}

TEST_CASE("the model picks a device's own group, then a same-chip device's, then the cross-GPU one") {
  WaveModel m;
  m.groups = {wave_group({"gemm", "", "cuda"}, {128, 128}, {1, 0, 1, 0}, {0, 1, 0}),
              wave_group({"elementwise", "", ""}, {128, 128}, {0, 0, 0, 0}, {2, 1, 1}),
              wave_group({"conv2d_forward", "", "cuda"}, {128, 128}, {3, 0, 1, 0}, {0, 1, 0})};
  WaveRefinement pcie;
  pcie.device = "a100-pcie-40gb";
  pcie.groups = {wave_group({"gemm", "", "cuda"}, {64, 64}, {4, 0, 1, 0}, {0, 1, 0})};
  m.refinements = {pcie};
  const WaveGroupKey gemm{"gemm", "", "cuda"};
  CHECK(m.group_for(gemm, find_device("a100-pcie-40gb")) == &m.refinements[0].groups[0]);
  // The SXM4 A100-40GB is the same GA100 with the same figures: it takes the PCIe card's kernels.
  CHECK(m.group_for(gemm, find_device("a100-40gb")) == &m.refinements[0].groups[0]);
  // The 80 GB part's bandwidth differs: the cross-GPU group.
  CHECK(m.group_for(gemm, find_device("a100-80gb")) == &m.groups[0]);
  // A conv class without a group takes the pass's general one; a norm without one, elementwise's.
  CHECK(m.group_for({"conv2d_forward", "3x3s1", "cuda"}, find_device("h100-sxm-80gb")) == &m.groups[2]);
  CHECK(m.group_for({"norm", "", ""}, find_device("h100-sxm-80gb")) == &m.groups[1]);
  CHECK(m.group_for({"gemm", "", "tensor"}, find_device("h100-sxm-80gb")) == nullptr);
  // A batched GEMM without a group of its own takes the device's single-product one.
  CHECK(m.group_for({"gemm", "batched", "cuda"}, find_device("a100-pcie-40gb")) ==
        &m.refinements[0].groups[0]);
  CHECK(m.group_for({"gemm", "batched", "cuda"}, find_device("h100-sxm-80gb")) == &m.groups[0]);
  // Without a fitted fixed cost a group pays kUnfittedFixedCostNs: 2,450 ns. 64 bytes sit in L2,
  // where dl = 1 SM-cycle per byte prices them at 64 / (132 SMs x 1.98 GHz) = 0.245 ns, slower than
  // streaming them from HBM at dh = 1: 64 / 3,350 B/ns = 0.019 ns; the cheaper of the two is taken.
  WaveGroupFit unfitted = m.groups[1];
  unfitted.fixed_cost_fitted = false;
  KernelSample tiny;
  tiny.bytes = 64;
  const DeviceSpec h100 = find_device("h100-sxm-80gb");
  CHECK(predict_wave_ns(unfitted, wave_kernel("relu", KindCategory::elementwise, "", "fp32", tiny, h100),
                        h100, 1.0) == doctest::Approx(kUnfittedFixedCostNs + 64 / 3350.0));
}

TEST_CASE("the fixed cost the eager-op families take is read off HTA's V100 trace") {
  // kUnfittedFixedCostNs = the 5th percentile of the elementwise kernels' durations (1.70 us) + the
  // median back-to-back interval (0.75 us, scripts/kernel-gaps.py).
  const nlohmann::json trace = mutwo::support::parse_json_document(
      mutwo::support::read_text_file(std::string(MUTWO_TEST_FIXTURES) +
                                     "/kineto/v100_training_rank0.pt.trace.json.gz"),
      "v100");
  std::vector<double> durations;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e.value("cat", "") == "kernel" && e.value("name", "").find("elementwise") != std::string::npos) {
      durations.push_back(e["dur"].get<double>());
    }
  }
  std::sort(durations.begin(), durations.end());
  CHECK(durations.size() == 1'765);
  // numpy's linear interpolation at 5 %: position 0.05 * 1764 = 88.2.
  const double p5 = durations[88] + 0.2 * (durations[89] - durations[88]);
  CHECK(p5 == doctest::Approx(1.70).epsilon(0.005));
  CHECK(kUnfittedFixedCostNs == 1'700.0 + 750.0);
}

TEST_CASE("non-negative least squares in normal form finds the subset method's optimum") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.1, 2.0);
  Eigen::MatrixXd a(40, 4);
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    for (Eigen::Index j = 0; j < a.cols(); ++j) a(i, j) = u(rng);
  }
  a.col(3) = -a.col(3);  // a term whose unconstrained coefficient comes out negative
  const Eigen::VectorXd subsets = nonnegative_least_squares(a);
  const Eigen::VectorXd normal =
      nonnegative_least_squares_normal(a.transpose() * a, a.transpose() * Eigen::VectorXd::Ones(a.rows()));
  CHECK(subsets(3) == 0);
  for (Eigen::Index j = 0; j < 4; ++j) CHECK(normal(j) == doctest::Approx(subsets(j)).epsilon(1e-9));
}

TEST_CASE("the power limit: a 70 W T4 holds 0.58 of its boost clock on math at 20 pJ per FLOP") {
  const DeviceSpec t4 = find_device("t4");  // 70 W, TSMC 12FFN (0.75 of 16FF+'s energy), 8.1 TFLOPS
  // 70 W / (20 pJ * 0.75) = 4,666.7 FLOP per ns sustained, of 8,100: 0.5761.
  CHECK(sustained_clock_ratio(t4, 20) == doctest::Approx(0.576132));
  // A 250 W A100 PCIe on N7 (0.40): 250 / (20 * 0.40) = 31,250 > 19,500 FLOP per ns: holds boost.
  CHECK(sustained_clock_ratio(find_device("a100-pcie-40gb"), 20) == 1.0);
  // No limit without an energy, or for a device that names no board power.
  CHECK(sustained_clock_ratio(t4, 0) == 1.0);
  DeviceSpec unknown = t4;
  unknown.board_power_w = 0;
  CHECK(sustained_clock_ratio(unknown, 20) == 1.0);
  unknown = t4;
  unknown.process = "TSMC 3nm";
  CHECK(error_of([&] {
          sustained_clock_ratio(unknown, 20);
        }).rfind("device 't4': process 'TSMC 3nm' is not a known process; valid: TSMC 16FF+", 0) == 0);
  // At half the clock a GEMM's waves and FLOPs take twice the time; its bytes do not.
  const WaveKernel k =
      wave_kernel("gemm", KindCategory::matmul, "", "fp32", gemm_sample(1, 512, 512, 512), t4);
  const WaveFeatures boost = wave_features(k, {128, 64}, t4, 1.0);
  const WaveFeatures half = wave_features(k, {128, 64}, t4, 0.5);
  CHECK(half.compute[0] == 1.0);
  for (size_t j = 1; j < 4; ++j) CHECK(half.compute[j] == doctest::Approx(2 * boost.compute[j]));
  CHECK(half.compute[4] == boost.compute[4]);
  CHECK(boost.compute[4] == doctest::Approx(boost.memory[1]));
  CHECK(half.memory == boost.memory);
  // The traffic beside the math: 3 x 512^2 x 4 B over the T4's 320 GB/s is 9,830.4 ns, paid cb = 2
  // times on top of a compute regime that is otherwise free; tensor-core kernels carry no such term.
  WaveGroupFit traffic = wave_group({"gemm", "", "cuda"}, {128, 64}, {0, 0, 0, 0}, {0, 0, 0});
  traffic.compute[4] = 2;
  CHECK(boost.compute[4] == doctest::Approx(9'830.4));
  CHECK(predict_wave_ns(traffic, k, t4, 1.0) == doctest::Approx(19'660.8));
  const WaveKernel tc =
      wave_kernel("gemm", KindCategory::matmul, "", "fp16", gemm_sample(1, 512, 512, 512), t4);
  CHECK(tc.group.math == kTensorMath);
  CHECK(wave_features(tc, {128, 64}, t4, 1.0).compute[4] == 0);
  // A bandwidth-bound kernel does not see it.
  KernelSample s;
  s.bytes = 1e9;
  const WaveKernel relu = wave_kernel("relu", KindCategory::elementwise, "", "fp32", s, t4);
  CHECK(wave_features(relu, {}, t4, 0.5).memory == wave_features(relu, {}, t4, 1.0).memory);
  CHECK(error_of([&] {
          wave_features(k, {128, 64}, t4, 0);
        }) == "device 't4': clock ratio 0 must be in (0, 1]");
}

TEST_CASE("the fit recovers the power limit's energy from a throttled T4 beside an A100") {
  // Kernels priced by one known gemm group at 20 pJ per FLOP: the T4 at 0.576 of its clock, the A100
  // at its boost. The grid (4 ... 128 pJ by sqrt 2, then 2^(1/4) and 2^(1/8) around the best) lands
  // within 2^(1/16) of 20 pJ, and the coefficients near the truth.
  WaveGroupFit truth = wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 1.1, 0.2}, {1'500, 1.3, 0});
  truth.tile_choice = true;  // as the fit prices FP32 single products (chooses_tile)
  std::vector<CalibrationRow> rows;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> dim(64, 4096);
  for (const char* gpu : {"a100-pcie-40gb", "t4"}) {
    const DeviceSpec device = find_device(gpu);
    for (int i = 0; i < 200; ++i) {
      const KernelSample s = gemm_sample(1, dim(rng), dim(rng), dim(rng));
      CalibrationRow r = gemm_row(gpu, s);
      const WaveKernel k = wave_kernel("gemm", KindCategory::matmul, "", "fp32", s, device);
      r.time_ns = std::llround(predict_wave_ns(truth, k, device, sustained_clock_ratio(device, 20)));
      r.timing = Timing::kernel;
      r.source = "test";
      rows.push_back(r);
    }
  }
  const WaveModel m = fit_wave_model(prepare_wave_rows(rows), {{"synthetic"}, "2026-11-27", false});
  CHECK(m.energy_pj_per_flop == doctest::Approx(20).epsilon(0.045));
  REQUIRE(m.groups.size() == 1);
  CHECK(m.groups[0].compute[2] == doctest::Approx(1.1).epsilon(0.06));
  CHECK(m.groups[0].error.median < 0.03);
  CHECK(m.clock_ratio(find_device("t4")) == doctest::Approx(0.576).epsilon(0.05));
}

TEST_CASE("the fit recovers a known model across two GPUs, and an eager-op set's harness") {
  // Kernels priced by a known gemm group on an A100 and a V100, timed back to back; one more set
  // on the V100 timed as eager ops, each 20 us of harness on top.
  WaveGroupFit truth = wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 1.1, 0.2}, {1'500, 1.3, 0});
  truth.tile_choice = true;  // as the fit prices FP32 single products (chooses_tile)
  std::vector<CalibrationRow> rows;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dim(64, 4096);
  for (const char* gpu : {"a100-40gb", "v100-16gb", "v100-16gb"}) {
    const bool eager = rows.size() >= 400;
    const DeviceSpec device = find_device(gpu);
    for (int i = 0; i < 200; ++i) {
      const KernelSample s = gemm_sample(1, dim(rng), dim(rng), i % 7 == 0 ? 8 : dim(rng));
      CalibrationRow r = gemm_row(gpu, s);
      const double price = predict_wave_ns(
          truth, wave_kernel("gemm", KindCategory::matmul, "", "fp32", s, device), device, 1.0);
      r.time_ns = std::llround(price + (eager ? 20'000.0 : 0.0));
      r.timing = eager ? Timing::eager_op : Timing::kernel;
      r.source = eager ? "neusight test" : "test";
      rows.push_back(r);
    }
  }
  const WaveRows prepared = prepare_wave_rows(rows);
  const WaveModel m = fit_wave_model(prepared, {{"synthetic"}, "2026-11-26", /*refinements=*/false});
  CHECK(m.energy_pj_per_flop == 0);  // nothing throttled: no power limit is the best fit
  REQUIRE(m.groups.size() == 1);
  const WaveGroupFit& fit = m.groups.front();
  CHECK((fit.tile.m == 128 && fit.tile.n == 64));
  CHECK(fit.fixed_cost_fitted);
  CHECK(fit.compute[0] == doctest::Approx(3'000).epsilon(0.01));
  CHECK(fit.compute[2] == doctest::Approx(1.1).epsilon(0.01));
  CHECK(fit.compute[3] == doctest::Approx(0.2).epsilon(0.01));
  CHECK(fit.memory[1] == doctest::Approx(1.3).epsilon(0.01));
  CHECK(fit.error.median < 1e-3);
  REQUIRE(m.harness.size() == 1);
  CHECK(m.harness[0].device == "v100-16gb");
  CHECK(m.harness[0].harness_ns == doctest::Approx(20'000).epsilon(0.01));
  CalibrationRow host;
  host.device = "cpu";
  CHECK(error_of([&] { prepare_wave_rows({host}); }).find("host CPU") != std::string::npos);
  // Leave-one-out needs two GPUs.
  const WaveRows one_gpu = prepare_wave_rows(std::vector<CalibrationRow>(rows.begin(), rows.begin() + 200));
  CHECK(error_of([&] { leave_one_gpu_out(one_gpu); }) ==
        "leave one GPU out: the rows hold fewer than two GPUs");
}

TEST_CASE("a wave model file round-trips, and a bad one is refused naming the field") {
  WaveModel m;
  m.fitted_on = "2026-11-26";
  m.inputs = {"a.csv"};
  m.groups = {wave_group({"gemm", "", "tensor"}, {256, 128}, {1, 2, 3, 4}, {5, 6, 7})};
  m.groups[0].devices = {"v100-16gb"};
  m.groups[0].compute[4] = 9.5;
  m.harness = {{"t4", "neusight add", 25'000, 14'000, {"elementwise", "", ""}}};
  m.energy_pj_per_flop = 17.5;
  const std::string text = wave_model_json(m);
  const WaveModel back = parse_wave_model(text, "w.json");
  CHECK(wave_model_json(back) == text);
  CHECK(back.groups[0].tile.m == 256);
  CHECK_FALSE(back.groups[0].tile_choice);
  WaveModel chooser = m;
  chooser.groups[0].key.math = "cuda";
  chooser.groups[0].tile_choice = true;
  CHECK(parse_wave_model(wave_model_json(chooser), "w.json").groups[0].tile_choice);
  const auto bad = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    return error_of([&] { parse_wave_model(t, "w.json"); });
  };
  CHECK(bad("\"version\": 6", "\"version\": 7") ==
        "wave model 'w.json': field 'version' = 7 is not supported (this mutwo reads versions 1 to 6)");
  CHECK(bad("\"energy_pj_per_flop\": 17.5", "\"energy_pj_per_flop\": -1") ==
        "wave model 'w.json': field 'energy_pj_per_flop' = -1 must be a finite number >= 0");
  // Only an FP32 group of single products or convolutions chooses a tile per kernel (chooses_tile).
  CHECK(bad("\"tile_choice\": false", "\"tile_choice\": true") ==
        "wave model 'w.json': groups 0: field 'tile_choice' = true, but group gemm (tensor) runs one tile");
  // An older file: `t` at version `from` relabelled `from - 1` is refused naming `named` while it still
  // holds `field`, and read once `field` is replaced by `without`.
  const auto older = [&](std::string t, int from, const std::string& named, const std::string& field,
                         const std::string& without) {
    const std::string version = fmt::format("\"version\": {}", from);
    t.replace(t.find(version), version.size(), fmt::format("\"version\": {}", from - 1));
    CHECK(error_of([&] { parse_wave_model(t, "w.json"); }).find(named) != std::string::npos);
    REQUIRE(t.find(field) != std::string::npos);
    t.replace(t.find(field), field.size(), without);
    return t;
  };
  // A version 5 file (before the traffic beside the math) holds four compute terms; the fifth reads 0.
  const std::string v5 = older(text, 6, "compute", ",\n        9.5\n", "\n");
  CHECK(parse_wave_model(v5, "w.json").groups.at(0).compute[4] == 0);
  CHECK(parse_wave_model(v5, "w.json").groups.at(0).compute[3] == 4);
  // A version 4 file (before Winograd) has no winograd: every group prices its kernels as given.
  const std::string v4 = older(v5, 5, "winograd", "      \"winograd\": false,\n", "");
  CHECK_FALSE(parse_wave_model(v4, "w.json").groups.at(0).winograd);
  // A version 3 file (before a tile per kernel) has no tile_choice: every group runs its one tile.
  const std::string v3 = older(v4, 4, "tile_choice", "      \"tile_choice\": false,\n", "");
  CHECK_FALSE(parse_wave_model(v3, "w.json").groups.at(0).tile_choice);
  // A version 1 file (before the power limit) reads with no limit; it may not carry the energy.
  // A version 2 file (before a harness per group) holds each harness for every group of its set.
  std::string v2 = v3;
  v2.replace(v2.find("\"version\": 3"), 12, "\"version\": 2");
  CHECK(error_of([&] { parse_wave_model(v2, "w.json"); }).find("harness 0") != std::string::npos);
  const std::string group_fields =
      "      \"family\": \"elementwise\",\n      \"variant\": \"\",\n      \"math\": \"\",\n";
  REQUIRE(v2.find(group_fields) != std::string::npos);
  v2.replace(v2.find(group_fields), group_fields.size(), "");
  CHECK(parse_wave_model(v2, "w.json").harness.at(0).group.family.empty());
  std::string v1 = v2;
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  CHECK(error_of([&] { parse_wave_model(v1, "w.json"); }) ==
        "wave model 'w.json': field 'energy_pj_per_flop' needs version 2");
  v1.replace(v1.find("  \"energy_pj_per_flop\": 17.5,\n"), 29, "");
  CHECK(parse_wave_model(v1, "w.json").energy_pj_per_flop == 0);
  CHECK(bad("\"family\": \"gemm\"", "\"family\": \"fft\"")
            .rfind("wave model 'w.json': groups 0: field 'family' = 'fft'; valid: gemm", 0) == 0);
  CHECK(bad("\"math\": \"tensor\"", "\"math\": \"\"") ==
        "wave model 'w.json': groups 0: field 'math' = '' must be tensor or cuda");
  CHECK(
      bad("1.0,", "-1.0,") ==
      "wave model 'w.json': groups 0 (gemm (tensor)): field 'compute'[0] = -1 must be a finite number >= 0");
  CHECK(bad("\"rows\"", "\"row\"").find("row") != std::string::npos);
  CHECK(bad("\"variant\": \"\"", "\"variant\": \"3x3s1\"") ==
        "wave model 'w.json': groups 0: field 'variant' = '3x3s1' must be empty or, for gemm, batched, for a "
        "conv pass, 3x3s1, for reduction, warp");
}

TEST_CASE(
    "the waves source prices an op as the sum of its kernels; a fused linear's bias gradient is no GEMM") {
  using namespace mutwo::support;
  using namespace mutwo::ir;
  using namespace mutwo::transforms;
  // A linear, then one [4, 512, 768] -> [4, 512, 3072] with a bias, and a loss; fused 8 wide, trained.
  GraphBuilder b("fc", DType::f32);
  const TensorId x = b.add_input("x", {4, 512, 768}, TensorRole::input, FuseAxis::stack);
  const TensorId w = b.add_weight("w", {3072, 768}, FuseAxis::stack);
  const TensorId bias = b.add_weight("b", {3072}, FuseAxis::stack);
  const TensorId w0 = b.add_weight("w0", {768, 768}, FuseAxis::stack);
  const TensorId h = b.op(OpKind::linear, "fc0", {x, w0});  // so that fc's input needs a gradient
  const TensorId y = b.op(OpKind::linear, "fc", {h, w, bias});
  const TensorId labels = b.add_input("labels", {4, 512}, TensorRole::label, FuseAxis::stack, DType::i64);
  b.add_op(OpKind::cross_entropy, "loss", {y, labels});
  const Graph step = build_training_step(horizontal_fuse(std::move(b).finish(), 8), OptimizerConfig{});
  const Op* backward = nullptr;
  for (const Op& op : step.ops) {
    if (op.kind == OpKind::linear_backward && op.name.rfind("fc.", 0) == 0) backward = &op;
  }
  REQUIRE(backward != nullptr);
  // dX [8, 4, 512, 768] and dW [8, 3072, 768] are GEMMs; the bias gradient [8, 3072] is not
  // (before the fix it priced as an 8 x 3072 GEMM with k = 2.9 million: 35x a single model's time).
  const std::vector<OpKernel> kernels = op_kernels(step, *backward);
  REQUIRE(kernels.size() == 2);
  CHECK((kernels[0].sample.m == 8 * 4 * 512 && kernels[0].sample.n == 768));
  CHECK((kernels[1].sample.m == 8 * 3072 && kernels[1].sample.n == 768));
  // The forward's one kernel: m = 8 * 4 * 512 rows, n = 3072, k = 768; its FLOPs the op's, 2 * 16384 *
  // 3072 * 768 + 16384 * 3072 for the bias = 77,359,742,976; priced by a hand-made group c = [1000, 0,
  // 1, 0]: / 19,500 FLOP/ns = 3,967,166.3 ns + 1,000, rounded up.
  const Op& forward = step.ops[static_cast<size_t>(backward->forward_of)];
  auto model = std::make_shared<WaveModel>();
  model->fitted_on = "2026-11-26";
  model->groups = {wave_group({"gemm", "", "cuda"}, {128, 128}, {1'000, 0, 1, 0}, {0, 1, 0})};
  CostSourceInputs inputs;
  inputs.wave_model = model;
  const auto cost = builtin_cost_sources().create("waves", find_device("a100-40gb"), inputs);
  CHECK(cost->op_duration_ns(step, forward) == 3'968'167);
  // With a refinement for the device (the same-chip A100 PCIe card's), the source prices with it:
  // c = [2000, 0, 1, 0] -> 3,967,166.3 + 2,000, rounded up; describe() says so.
  WaveRefinement pcie;
  pcie.device = "a100-pcie-40gb";
  pcie.groups = {wave_group({"gemm", "", "cuda"}, {128, 128}, {2'000, 0, 1, 0}, {0, 1, 0})};
  model->refinements = {pcie};
  const auto refined = builtin_cost_sources().create("waves", find_device("a100-40gb"), inputs);
  CHECK(refined->op_duration_ns(step, forward) == 3'969'167);
  CHECK(refined->describe(step).find(", refined on a100-pcie-40gb's kernels: ") != std::string::npos);
  CHECK(cost->describe(step).rfind(
            "waves (kernel model fitted 2026-11-26 across 0 GPUs, from its datasheet alone: ", 0) == 0);
  // A GPU whose kernels the cross-GPU groups were fitted on is not priced from its datasheet alone.
  model->refinements.clear();
  model->groups.front().devices = {"a100-40gb"};
  const auto fitted = builtin_cost_sources().create("waves", find_device("a100-40gb"), inputs);
  CHECK(fitted->describe(step).rfind("waves (kernel model fitted 2026-11-26 across 1 GPUs: ", 0) == 0);
}

TEST_CASE("the shipped wave model prices every op of the zoo's training steps") {
  const WaveModel& m = shipped_wave_model();
  CHECK_FALSE(m.fitted_on.empty());
  for (const char* family : {"gemm", "conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter",
                             "norm", "reduction", "elementwise"}) {
    bool found = false;
    for (const WaveGroupFit& g : m.groups) found = found || g.key.family == family;
    CAPTURE(family);
    CHECK(found);
  }
  for (const char* math : {"cuda", "tensor"}) {
    bool found = false;
    for (const WaveGroupFit& g : m.groups) found = found || (g.key.family == "gemm" && g.key.math == math);
    CHECK(found);
  }
}
