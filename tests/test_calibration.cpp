// The calibrated cost source: calibration CSV reading and DeepBench conversion, the kernel model's wave
// quantization, the fit, profiles, held-out error on DeepBench's V100 kernels, cross-GPU scaling.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/calibration_csv.hpp"
#include "costmodel/calibration_fit.hpp"
#include "costmodel/calibration_profile.hpp"
#include "costmodel/calibration_validation.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/deepbench_csv.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "tests/support/error_of.hpp"

using namespace mutwo::costmodel;
using namespace mutwo::ir;
using mutwo::Error;
using mutwo::FormatError;

namespace {

const std::string kFixtures = MUTWO_TEST_FIXTURES;
const std::string kGemm = kFixtures + "/calibration/deepbench_gemm.csv";
const std::string kConv = kFixtures + "/calibration/deepbench_conv.csv";

using mutwo::test::error_of;
constexpr auto npos = std::string::npos;

constexpr std::string_view kHeader =
    "device,precision,kernel,variant,category,m,n,k,flops,bytes,time_ns,source,shape\n";

// y = x W^T on x[rows, in], W[out, in].
Graph linear_graph(DType dtype, int64_t rows, int64_t in, int64_t out) {
  GraphBuilder b("linear", dtype, 1, rows);
  TensorId x = b.add_input("x", {rows, in}, TensorRole::input, FuseAxis::stack);
  TensorId w = b.add_weight("w", {out, in}, FuseAxis::stack);
  TensorId y = b.op(OpKind::linear, "fc", {x, w});
  b.op(OpKind::relu, "relu", {y});
  return std::move(b).finish();
}

}  // namespace

TEST_CASE("wave quantization: 1000x300 in 128x64 tiles on 80 SMs is 40 tiles, one wave") {
  // ceil(1000/128) = 8, ceil(300/64) = 5 -> 40 tiles <= 80 SMs -> 1 wave; Fq = flops * 1 * 80 *
  // 128 * 64 / (1000 * 300) = flops * 655,360 / 300,000.
  const KernelSample k{1, 1000, 300, 100, 60'000'000.0, 1000.0, 0};
  CHECK(kernel_waves(1000, 300, {128, 64}, 80) == 1);
  const auto x = compute_terms(k, {128, 64}, 80);
  CHECK(x[0] == 1.0);
  CHECK(x[1] == 1.0);
  CHECK(x[2] == 60'000'000.0);
  CHECK(x[3] == doctest::Approx(60'000'000.0 * 655'360.0 / 300'000.0).epsilon(1e-15));
  // 81 tiles (9 x 9 of 128x64 on 1152x576) need a second wave on 80 SMs; 80 tiles do not.
  CHECK(kernel_waves(1152, 576, {128, 64}, 80) == 2);
  CHECK(kernel_waves(1024, 640, {128, 64}, 80) == 1);
  CHECK_THROWS_AS(compute_terms({0, 1, 1, 1, 1, 0}, {128, 64}, 80), Error);
}

TEST_CASE("the fit recovers known coefficients from synthetic kernels exactly") {
  const int32_t sms = 80;
  const TileShape tile{128, 64};
  KernelModel truth;
  truth.tile = tile;
  truth.compute = {3000.0, 800.0, 2e-5, 1e-5};
  truth.memory = {2000.0, 1.25e-3};
  // Compute-bound kernels (FLOP-heavy) and bandwidth-bound ones (byte-heavy), on both sides of the
  // seed roofline (15,700 FLOP/ns, 900 B/ns) as the truth has them.
  std::vector<KernelSample> samples;
  const int64_t shapes[][3] = {{1000, 300, 500}, {4096, 4096, 1024}, {1152, 576, 64}, {512, 2000, 3000},
                               {8000, 70, 700},  {300, 300, 9000},   {2048, 128, 256}};
  for (const auto& s : shapes) {
    KernelSample k{
        1, s[0], s[1], s[2], 2.0 * s[0] * s[1] * s[2], 4.0 * (s[0] * s[2] + s[2] * s[1] + s[0] * s[1]), 0};
    k.time_ns = predict_kernel_ns(truth, k, sms);
    samples.push_back(k);
  }
  for (double mib : {32.0, 128.0, 512.0}) {  // one wave of a copy-like kernel: memory-bound
    KernelSample k{1, 64, 64, 1, 8192.0, mib * 1048576, 0};
    k.time_ns = predict_kernel_ns(truth, k, sms);
    samples.push_back(k);
  }
  const Roofline roofline{15'700.0, 900.0};
  const KernelModel fit = fit_kernel_model(samples, tile, sms, roofline, "synthetic");
  for (size_t j = 0; j < kComputeTerms; ++j)
    CHECK(fit.compute[j] == doctest::Approx(truth.compute[j]).epsilon(1e-9));
  for (size_t j = 0; j < kMemoryTerms; ++j)
    CHECK(fit.memory[j] == doctest::Approx(truth.memory[j]).epsilon(1e-9));
  // Over every candidate tile, the true one fits exactly and is chosen.
  const KernelModel best = fit_kernel_model(samples, sms, roofline, "synthetic");
  CHECK(best.tile.m == 128);
  CHECK(best.tile.n == 64);
  CHECK(relative_errors(best, samples, sms).max < 1e-9);
}

TEST_CASE("the fit refuses an empty set and a non-positive time, naming the group") {
  CHECK(error_of([] { fit_kernel_model({}, 80, Roofline{}, "device 'v100-16gb', kernel 'gemm'"); }) ==
        "device 'v100-16gb', kernel 'gemm': no samples to fit");
  CHECK(error_of([] {
          fit_kernel_model({{1, 1, 1, 1, 1, 0}}, {128, 64}, 80, Roofline{}, "g");
        }) == "g: sample 0 has time_ns = 0, must be > 0");
}

TEST_CASE("calibration CSV: rows read, and every bad field named with file, line and value") {
  const std::string good =
      std::string(kHeader) +
      "# a comment\nv100-16gb,fp16,gemm,,matmul,64,32,16,65536,7168,5000,\"a, b\",M=64\n";
  const auto rows = parse_calibration_csv(good, "k.csv");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].device == "v100-16gb");
  CHECK(rows[0].category == KindCategory::matmul);
  CHECK(rows[0].flops == 65536);
  CHECK(rows[0].time_ns == 5000);
  CHECK(rows[0].source == "a, b");
  CHECK(rows[0].origin == "k.csv:3");
  CHECK(parse_calibration_csv(calibration_csv_text(rows), "again.csv")[0].source == "a, b");

  auto bad = [](std::string row) {
    return error_of([&] { parse_calibration_csv(std::string(kHeader) + row, "k.csv"); });
  };
  CHECK(bad("v100-16gb,fp16,gemm,,matmul,64,32,16,65536,7168,5x,,\n") ==
        "k.csv:2: field 'time_ns' = '5x': must be a whole number");
  CHECK(bad("v100-16gb,fp16,gemm,,matmul,64,32\n") == "k.csv:2: expected 13 fields, got 7");
  CHECK(bad("a200,fp16,gemm,,matmul,64,32,16,65536,7168,5000,,\n")
            .rfind("k.csv:2: field 'device' = 'a200': not a catalog device; valid: a10, a100-40gb", 0) == 0);
  CHECK(bad("v100-16gb,fp8,gemm,,matmul,64,32,16,65536,7168,5000,,\n") ==
        "k.csv:2: field 'precision' = 'fp8': valid: fp32, tf32, fp16, bf16");
  CHECK(bad("v100-16gb,fp16,gemm,,conv,64,32,16,65536,7168,5000,,\n") ==
        "k.csv:2: field 'category' = 'conv': kernel 'gemm' is in category 'matmul'");
  CHECK(bad("v100-16gb,fp16,gemm,,matmul,0,32,16,65536,7168,5000,,\n") ==
        "k.csv:2: field 'm' = '0': must be >= 1");
  CHECK(bad("v100-16gb,fp16,gemm,,matmul,1,32,16,65536,7168,0,,\n") ==
        "k.csv:2: field 'time_ns' = '0': must be > 0");
  CHECK(bad("v100-16gb,fp16,gemm,3x3s1,matmul,64,32,16,65536,7168,5000,,\n") ==
        "k.csv:2: field 'variant' = '3x3s1': only the conv2d_* kernels have one; 'gemm' must leave it empty");
  CHECK(bad("v100-16gb,fp16,conv2d_forward,,conv,64,32,16,65536,7168,5000,,\n") ==
        "k.csv:2: field 'variant' = '': a conv kernel's shape class; valid: 3x3s1, 1x1s1, 1x1-strided, "
        "grouped, "
        "general");
  CHECK(error_of([] {
          parse_calibration_csv("device,kernel\n", "h.csv");
        }).rfind("h.csv:1: header 'device,kernel' is not", 0) == 0);
}

TEST_CASE(
    "calibration CSV version 2: a batch count and what the time holds; version 1 reads as batch 1 of "
    "kernels") {
  const std::string header(kCalibrationCsvHeader);
  const std::string good =
      header + "\nv100-16gb,fp32,gemm,,matmul,8,64,32,16,524288,57344,9000,eager-op,neusight bmm,\n";
  const auto rows = parse_calibration_csv(good, "v2.csv");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].batch == 8);
  CHECK(rows[0].timing == Timing::eager_op);
  // Written back as version 2, read again the same.
  const std::string text = calibration_csv_text(rows);
  CHECK(text.rfind(header + "\n", 0) == 0);
  const auto again = parse_calibration_csv(text, "again.csv");
  CHECK((again[0].batch == 8 && again[0].timing == Timing::eager_op && again[0].flops == 524'288));
  // Version 1 rows (the tests above) carry neither: batch 1, timing kernel.
  const auto v1 = parse_calibration_csv(
      std::string(kHeader) + "v100-16gb,fp16,gemm,,matmul,64,32,16,65536,7168,5000,,\n", "v1.csv");
  CHECK((v1[0].batch == 1 && v1[0].timing == Timing::kernel));
  auto bad = [&](std::string row) {
    return error_of([&] { parse_calibration_csv(header + "\n" + row, "k.csv"); });
  };
  CHECK(bad("v100-16gb,fp32,gemm,,matmul,0,64,32,16,524288,57344,9000,kernel,,\n") ==
        "k.csv:2: field 'batch' = '0': must be >= 1");
  CHECK(bad("v100-16gb,fp32,relu,,elementwise,2,64,1,1,64,512,9000,kernel,,\n") ==
        "k.csv:2: field 'batch' = '2': only a gemm computes a batch of products; must be 1");
  CHECK(bad("v100-16gb,fp32,gemm,,matmul,1,64,32,16,65536,7168,9000,wall,,\n") ==
        "k.csv:2: field 'timing' = 'wall': valid: kernel, eager-op, host-paced");
}

TEST_CASE("DeepBench conversion: GEMM and conv rows with mutwo's FLOPs and bytes") {
  const auto gemm = read_calibration_input(kGemm);
  CHECK(gemm.size() == 1280);
  // V100 fp32 1760x16x1760 NN, 0.038 ms: FLOPs 2*1760*16*1760 = 99,123,200; bytes (1760*1760 +
  // 1760*16 + 1760*16) * 4 = 12,615,680.
  CHECK(gemm[0].device == "v100-16gb");
  CHECK(gemm[0].kernel == "gemm");
  CHECK(gemm[0].flops == 99'123'200);
  CHECK(gemm[0].bytes == 12'615'680);
  CHECK(gemm[0].time_ns == 38'000);
  CHECK(gemm[0].shape == "M=1760 N=16 K=1760 NN");
  const auto conv = read_calibration_input(kConv);
  // First V100 row: N4 C1 H161 W700, K32 R5 S20, stride 2 -> P = (161-5)/2+1 = 79, Q = (700-20)/2+1
  // = 341; FLOPs 2*4*32*79*341*1*5*20 = 689,638,400; bytes (4*161*700 + 32*100 + 4*32*79*341) * 4 =
  // 15,608,768; no data-gradient time, so a forward and a filter row.
  CHECK(conv[0].kernel == "conv2d_forward");
  CHECK(conv[0].variant == "general");  // 5x20, stride 2
  CHECK(conv[0].m == 4 * 79 * 341);
  CHECK(conv[0].n == 32);
  CHECK(conv[0].k == 100);
  CHECK(conv[0].flops == 689'638'400);
  CHECK(conv[0].bytes == 15'608'768);
  CHECK(conv[0].time_ns == 78'000);
  CHECK(conv[1].kernel == "conv2d_backward_filter");
  CHECK(conv[1].m == 32);
  CHECK(conv[1].n == 100);
  CHECK(conv[1].k == 4 * 79 * 341);
  CHECK(conv[1].time_ns == 127'000);
  const std::string bad_gpu =
      "gpu,precision,source,M,N,K,a_transpose,b_transpose,time_ms\nA100,fp32,x,1,1,1,N,N,0.1\n";
  CHECK(error_of([&] { convert_deepbench_gemm(bad_gpu, "g.csv"); }) ==
        "g.csv:2: field 'gpu' = 'A100': valid: V100, P100, T4, GTX 1080 Ti, Titan Xp");
  const std::string bad_time =
      "gpu,precision,source,M,N,K,a_transpose,b_transpose,time_ms\nV100,fp32,x,1,1,1,N,N,-1\n";
  CHECK(error_of([&] { convert_deepbench_gemm(bad_time, "g.csv"); }) ==
        "g.csv:2: field 'time_ms' = '-1': must be > 0");
}

TEST_CASE("held-out error on DeepBench's V100 kernels (5-fold)") {
  auto rows = read_calibration_input(kGemm);
  const auto conv = read_calibration_input(kConv);
  rows.insert(rows.end(), conv.begin(), conv.end());
  std::vector<CalibrationRow> v100;
  for (const auto& r : rows) {
    if (r.device == "v100-16gb") v100.push_back(r);
  }
  const auto errors = kfold_errors_by_category(v100, kfold_predictions(v100, 5));
  auto find = [&](std::string category, std::string precision) {
    for (const auto& e : errors) {
      if (e.group == category && e.precision == precision) return e.error;
    }
    FAIL("no group");
    return ErrorSummary{};
  };
  // GEMM meets issue 16's target (median <= 10 %, mean <= 15 %).
  CHECK(find("matmul", "fp32").median <= 0.10);
  CHECK(find("matmul", "fp32").mean <= 0.15);
  CHECK(find("matmul", "fp16").median <= 0.10);
  CHECK(find("matmul", "fp16").mean <= 0.15);
  // Convolution, fitted per shape class (conv_variant), comes close but not under it: the achieved
  // figures (docs/FIDELITY.md), which a better model must lower. One model per conv kernel gave
  // fp32 27.1 % / 29.1 %, fp16 14.9 % / 22.4 %.
  CHECK(find("conv", "fp32").median == doctest::Approx(0.112).epsilon(0.01));
  CHECK(find("conv", "fp32").mean == doctest::Approx(0.1685).epsilon(0.01));
  CHECK(find("conv", "fp16").median == doctest::Approx(0.116).epsilon(0.01));
  CHECK(find("conv", "fp16").mean == doctest::Approx(0.207).epsilon(0.01));
}

TEST_CASE("profiles: JSON round trip, errors naming the field, the shipped five and same-chip lookup") {
  std::vector<CalibrationRow> rows = read_calibration_input(kGemm);
  const CalibrationProfile p = fit_calibration_profile(rows, find_device("t4"), {"gemm.csv"}, "2025-06-01");
  REQUIRE(p.groups.size() == 2);  // gemm fp16, gemm fp32
  const CalibrationProfile back = parse_calibration_profile(calibration_profile_json(p), "t4.json");
  CHECK(back.device == "t4");
  CHECK(back.groups[1].precision == "fp32");
  CHECK(back.groups[1].model.compute == p.groups[1].model.compute);
  CHECK(back.groups[1].model.memory == p.groups[1].model.memory);
  CHECK(error_of([&] { fit_calibration_profile(rows, find_device("a100-40gb"), {}, ""); }) ==
        "no calibration rows for device 'a100-40gb'; the inputs have rows for: gtx1080ti, p100-pcie-16gb, "
        "t4, titan-xp, "
        "v100-16gb");
  std::string text = calibration_profile_json(p);
  text.replace(text.find("\"tile_m\""), 8, "\"tile_x\"");
  CHECK(error_of([&] { parse_calibration_profile(text, "t4.json"); }) ==
        "calibration profile 't4.json': group 0: unknown field 'tile_x'");

  std::vector<std::string> shipped;
  for (const auto& s : shipped_calibration_profiles()) shipped.push_back(s.device);
  CHECK(shipped ==
        std::vector<std::string>{"gtx1080ti", "h200", "p100-pcie-16gb", "t4", "titan-xp", "v100-16gb"});
  CHECK(find_calibration_profile(find_device("v100-32gb"))->device == "v100-16gb");
  CHECK_FALSE(find_calibration_profile(find_device("a100-40gb")).has_value());
  // The H100 SXM is the H200's chip with less memory bandwidth: not the same chip to a profile.
  CHECK_FALSE(find_calibration_profile(find_device("h100-sxm-80gb")).has_value());
}

TEST_CASE("the shipped H200 profile is the fit of the H200's bench-ops kernels, refitted to the bit") {
  // costmodel/profiles/h200.json from tests/fixtures/calibration/h200_bench_ops.csv (the first GPU
  // lease, tests/fixtures/calibration/README.md): the data regenerates the profile exactly.
  const std::string csv = kFixtures + "/calibration/h200_bench_ops.csv";
  const std::vector<CalibrationRow> rows = read_calibration_input(csv);
  CHECK(rows.size() == 3362);
  const CalibrationProfile fitted = fit_calibration_profile(rows, find_device("h200"), {}, "2026-11-27");
  const std::optional<CalibrationProfile> shipped = find_calibration_profile(find_device("h200"));
  REQUIRE(shipped.has_value());
  CHECK(shipped->device == "h200");
  CHECK(shipped->inputs == std::vector<std::string>{"tests/fixtures/calibration/h200_bench_ops.csv"});
  REQUIRE(shipped->groups.size() == fitted.groups.size());
  for (size_t i = 0; i < fitted.groups.size(); ++i) {
    CAPTURE(fitted.groups[i].kernel);
    CHECK(shipped->groups[i].kernel == fitted.groups[i].kernel);
    CHECK(shipped->groups[i].precision == fitted.groups[i].precision);
    CHECK(shipped->groups[i].model.compute == fitted.groups[i].model.compute);
    CHECK(shipped->groups[i].model.memory == fitted.groups[i].model.memory);
  }
}

TEST_CASE("calibrated source: a linear op is its GEMM priced by the profile; relu by the wave model") {
  const Graph g = linear_graph(DType::f32, 4096, 1024, 1024);
  auto model = builtin_cost_sources().create("calibrated", find_device("v100-16gb"));
  const auto& calibrated = dynamic_cast<const CalibratedCostModel&>(*model);
  // linear fp32 on V100 (no TF32): one gemm, m = 4096, n = 1024, k = 2*4096*1024*1024 / (2*4096*1024).
  const auto kernels = op_kernels(g, g.ops[0]);
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0].kernel == "gemm");
  CHECK(kernels[0].sample.m == 4096);
  CHECK(kernels[0].sample.n == 1024);
  CHECK(kernels[0].sample.k == 1024);
  const KernelGroupFit* gemm = calibrated.profile().find("gemm", "", "fp32");
  REQUIRE(gemm != nullptr);
  CHECK(model->op_duration_ns(g, g.ops[0]) ==
        static_cast<int64_t>(std::ceil(predict_kernel_ns(gemm->model, kernels[0].sample, 80))));
  CHECK(model->op_duration_ns(g, g.ops[1]) ==
        builtin_cost_sources().create("waves", find_device("v100-16gb"))->op_duration_ns(g, g.ops[1]));
  CHECK(model->describe(g).find(": 1 of 2 ops, 1 with kernels the profile lacks priced by waves)") != npos);
  CHECK(error_of([] {
          builtin_cost_sources().create("calibrated", find_device("a100-40gb"));
        }).rfind("cost source 'calibrated': no calibration profile for device 'a100-40gb'", 0) == 0);
}

TEST_CASE("measured trace from a T4 predicts a V100 by the ratio of the two calibrated prices") {
  Trace trace;
  trace.graph = linear_graph(DType::f32, 4096, 1024, 1024);
  trace.op_duration_ns = {1'000'000, 50'000};
  trace.device = "Tesla T4";
  CostSourceInputs inputs;
  inputs.measured_traces = {trace};
  auto model = builtin_cost_sources().create("measured", find_device("v100-16gb"), inputs);
  CalibratedCostModel t4(find_device("t4"), *find_calibration_profile(find_device("t4")));
  CalibratedCostModel v100(find_device("v100-16gb"), *find_calibration_profile(find_device("v100-16gb")));
  const Graph& g = trace.graph;
  const double ratio = static_cast<double>(*v100.calibrated_duration_ns(g, g.ops[0])) /
                       static_cast<double>(*t4.calibrated_duration_ns(g, g.ops[0]));
  CHECK(ratio < 1.0);  // a V100 runs an fp32 GEMM faster than a T4
  CHECK(model->op_duration_ns(g, g.ops[0]) == std::llround(1'000'000 * ratio));
  const double relu = static_cast<double>(*v100.calibrated_duration_ns(g, g.ops[1])) /
                      static_cast<double>(*t4.calibrated_duration_ns(g, g.ops[1]));
  CHECK(relu < 1.0);  // relu: in neither profile, both price it by waves (900 GB/s against 320)
  CHECK(model->op_duration_ns(g, g.ops[1]) == std::llround(50'000 * relu));
  CHECK(model->describe(g).find("to v100-16gb by calibrated profiles: 2 of 2 measured ops") != npos);
  // On the GPU it was measured on, nothing is scaled.
  auto same = builtin_cost_sources().create("measured", find_device("t4"), inputs);
  CHECK(same->op_duration_ns(g, g.ops[0]) == 1'000'000);
}

TEST_CASE("conv variants: the shape classes cuDNN's algorithm choice follows") {
  CHECK(conv_variant(3, 3, 1, 1) == "3x3s1");
  CHECK(conv_variant(3, 3, 2, 2) == "general");  // ResNet v1.5's strided 3x3: no Winograd
  CHECK(conv_variant(1, 1, 1, 1) == "1x1s1");
  CHECK(conv_variant(1, 1, 2, 2) == "1x1-strided");  // a downsampling shortcut
  CHECK(conv_variant(7, 7, 2, 2) == "general");
  CHECK(conv_variant(3, 3, 1, 1, 2, 2) == "general");      // dilated
  CHECK(conv_variant(3, 3, 1, 1, 1, 1, 32) == "grouped");  // depthwise / grouped
}

TEST_CASE("groups: a conv variant with fewer than 12 rows is fitted with the general ones") {
  // 12 rows of 3x3s1 stay a group; 5 of 1x1s1 join the 3 general ones; gemm has no variant.
  std::vector<CalibrationRow> rows;
  auto add = [&](std::string kernel, std::string variant, int count) {
    for (int i = 0; i < count; ++i) {
      CalibrationRow r;
      r.device = "v100-16gb";
      r.precision = "fp32";
      r.kernel = kernel;
      r.variant = variant;
      r.category = kernel_category(kernel);
      r.m = 64 * (i + 1), r.n = 64, r.k = 64;
      r.flops = 2 * r.m * r.n * r.k;
      r.bytes = 4 * (r.m * r.k + r.k * r.n + r.m * r.n);
      r.time_ns = 1000 + 100 * i;
      rows.push_back(r);
    }
  };
  add("conv2d_forward", "general", 3);
  add("conv2d_forward", "3x3s1", 12);
  add("conv2d_forward", "1x1s1", 5);
  add("gemm", "", 6);
  const auto groups = calibration_groups(rows);
  REQUIRE(groups.size() == 3);
  const CalibrationGroupKey general{"v100-16gb", "conv2d_forward", "general", "fp32"};
  REQUIRE(groups.contains(general));
  CHECK(groups.at(general) == std::vector<size_t>{0, 1, 2, 15, 16, 17, 18, 19});  // input order
  CHECK(groups.at({"v100-16gb", "conv2d_forward", "3x3s1", "fp32"}).size() == 12);
  CHECK(groups.at({"v100-16gb", "gemm", "", "fp32"}).size() == 6);
  CHECK(calibration_group_text(general) ==
        "device 'v100-16gb', kernel 'conv2d_forward' (general), precision 'fp32'");

  const CalibrationProfile p = fit_calibration_profile(rows, find_device("v100-16gb"), {}, "2026-11-24");
  REQUIRE(p.groups.size() == 3);
  CHECK(p.pricing("conv2d_forward", "3x3s1", "fp32")->variant == "3x3s1");
  CHECK(p.pricing("conv2d_forward", "1x1s1", "fp32")->variant == "general");    // folded in
  CHECK(p.pricing("conv2d_forward", "grouped", "fp32")->variant == "general");  // never measured
  CHECK(p.pricing("conv2d_backward_data", "3x3s1", "fp32") == nullptr);
  CHECK(p.pricing("gemm", "", "fp32")->rows == 6);
  // The variant travels through the profile's JSON; a version-1 profile is refused.
  const CalibrationProfile back = parse_calibration_profile(calibration_profile_json(p), "p.json");
  CHECK(back.find("conv2d_forward", "3x3s1", "fp32") != nullptr);
  std::string v1 = calibration_profile_json(p);
  v1.replace(v1.find("\"version\": 2"), 12, "\"version\": 1");
  CHECK(error_of([&] { parse_calibration_profile(v1, "old.json"); }) ==
        "calibration profile 'old.json': field 'version' = 1 is not supported (this mutwo reads version 2; "
        "version 1 "
        "had no conv variants: fit it again with mutwo calibrate)");
  std::string bad = calibration_profile_json(p);
  bad.replace(bad.find("\"variant\": \"3x3s1\""), 18, "\"variant\": \"5x5s1\"");
  CHECK(
      error_of([&] { parse_calibration_profile(bad, "bad.json"); })
          .find("field 'variant' = '5x5s1' is not a conv variant; valid: 3x3s1, 1x1s1, 1x1-strided, grouped, "
                "general") != std::string::npos);
}

TEST_CASE("calibrated source: a conv op and its backward carry the forward's shape class") {
  // ResNet's 3x3 stride-1 conv: x[8,64,56,56], W[64,64,3,3], padding 1; then its backward.
  GraphBuilder b("conv", DType::f32, 1, 8);
  TensorId x = b.add_input("x", {8, 64, 56, 56}, TensorRole::input, FuseAxis::dim1);
  TensorId w = b.add_weight("w", {64, 64, 3, 3}, FuseAxis::dim0);
  b.op(OpKind::conv2d, "conv", {x, w}, {{"padding", std::vector<int64_t>{1, 1}}});
  TensorId w2 = b.add_weight("w2", {128, 64, 1, 1}, FuseAxis::dim0);
  b.op(OpKind::conv2d, "down", {x, w2}, {{"stride", std::vector<int64_t>{2, 2}}});
  const Graph g = std::move(b).finish();
  const auto k3 = op_kernels(g, g.ops[0]);
  REQUIRE(k3.size() == 1);
  CHECK(k3[0].kernel == "conv2d_forward");
  CHECK(k3[0].variant == "3x3s1");
  CHECK(k3[0].sample.m == 8 * 56 * 56);
  CHECK(k3[0].sample.n == 64);
  CHECK(k3[0].sample.k == 64 * 9);
  const auto k1 = op_kernels(g, g.ops[1]);
  REQUIRE(k1.size() == 1);
  CHECK(k1[0].variant == "1x1-strided");
  // The V100 profile prices each by its variant's group.
  CalibratedCostModel v100(find_device("v100-16gb"), *find_calibration_profile(find_device("v100-16gb")));
  const KernelGroupFit* winograd = v100.profile().find("conv2d_forward", "3x3s1", "fp32");
  REQUIRE(winograd != nullptr);
  // fp32 on a V100: no TF32, so the fp32 group.
  CHECK(v100.calibrated_duration_ns(g, g.ops[0]) ==
        static_cast<int64_t>(std::ceil(predict_kernel_ns(winograd->model, k3[0].sample, 80))));
}

TEST_CASE("the analytic source priced on DeepBench's measured kernels, by hand for two rows") {
  const auto rows = read_calibration_input(kGemm);
  // Rows 1 and 161: V100, GEMM M = K = 1760, N = 16 (NN), fp32 0.038 ms and fp16 0.020 ms.
  REQUIRE(rows[0].precision == "fp32");
  REQUIRE(rows[0].time_ns == 38'000);
  REQUIRE(rows[160].precision == "fp16");
  REQUIRE(rows[160].time_ns == 20'000);
  const std::vector<CalibrationRow> two{rows[0], rows[160]};
  const std::vector<double> predicted = analytic_predictions(two);
  // v100-16gb: FP32 15,700 FLOP/ns, FP16 tensor 125,000, HBM 900 B/ns, 80 SMs, launch 4,000 ns;
  // matmul efficiency 0.80 with ramps 80 * 4 MiFLOP = 335,544,320 FLOP and 80 * 16 KiB = 1,310,720 B.
  // fp32: FLOPs 2 * 1760 * 16 * 1760 = 99,123,200 -> (99,123,200 + 335,544,320) / 12,560 = 34,607.29 ns;
  //       bytes 12,615,680 -> (12,615,680 + 1,310,720) / 720 = 19,342.22 ns; 4,000 + 34,608 = 38,608
  //       (+1.6 % of 38,000).
  CHECK(predicted[0] == 38'608);
  // fp16: compute 434,667,520 / 100,000 = 4,346.68 ns; bytes 6,307,840 -> 7,618,560 / 720 = 10,581.33 ns,
  //       memory-bound: 4,000 + 10,582 = 14,582 (-27.1 % of 20,000).
  CHECK(predicted[1] == 14'582);
  // Buckets by the measured time: both rows are in "20-200 us" (20,000 ns opens it); a third row
  // of 5,000 ns priced at 6,000 (+20 %) is alone in "< 20 us".
  std::vector<CalibrationRow> three = two;
  three.push_back(rows[0]);
  three[2].time_ns = 5'000;
  const auto buckets =
      errors_by_duration(three, {predicted[0], predicted[1], 6'000}, {38'000, 20'000, 5'000});
  REQUIRE(buckets.size() == 4);  // two buckets, each source
  CHECK(buckets[0].bucket == "< 20 us");
  CHECK(buckets[0].source == "analytic");
  CHECK(buckets[0].error.count == 1);
  CHECK(buckets[0].signed_median == doctest::Approx(0.2));
  CHECK(buckets[1].source == "calibrated (k-fold)");
  CHECK(buckets[1].error.median == 0);
  CHECK(buckets[2].bucket == "20-200 us");
  CHECK(buckets[2].error.count == 2);
  // Signed errors +0.016 and -0.2709: their median is their mean, -0.1275; |errors| 0.016, 0.2709.
  CHECK(buckets[2].signed_median == doctest::Approx((38'608.0 / 38'000 - 1 + 14'582.0 / 20'000 - 1) / 2));
  CHECK(buckets[2].error.max == doctest::Approx(1 - 14'582.0 / 20'000));

  // Over all of V100's kernels, the figures docs/FIDELITY.md states: GEMM within 11 % (median) in
  // both precisions, the convolutions 46 % (fp32: Winograd beats the direct count the source prices).
  auto all = rows;
  const auto conv = read_calibration_input(kConv);
  all.insert(all.end(), conv.begin(), conv.end());
  std::vector<CalibrationRow> v100;
  for (const auto& r : all) {
    if (r.device == "v100-16gb") v100.push_back(r);
  }
  for (const GroupError& e : kfold_errors_by_category(v100, analytic_predictions(v100))) {
    CAPTURE(e.group);
    CAPTURE(e.precision);
    const double expected = e.group == "matmul" ? (e.precision == "fp32" ? 0.109 : 0.075)
                                                : (e.precision == "fp32" ? 0.460 : 0.251);
    CHECK(e.error.median == doctest::Approx(expected).epsilon(0.01));
  }
  // The rendered section, as docs/FIDELITY.md carries it for V100 (analytic beside calibrated).
  const std::string md = calibration_fidelity_markdown(v100, 5, "cmd");
  CHECK(md.find("### The analytic source on the same kernels") != npos);
  CHECK(md.find("| v100-16gb | matmul | fp32 | 160 | 10.9 % | 19.1 % | +8.4 % | 5.2 % |") != npos);
  CHECK(md.find("| conv | fp32 | 272 | 46.0 % | 64.5 % | +39.3 % | 11.2 % |") != npos);
  CHECK(md.find("| measured duration | source | kernels | median | mean | signed median |") != npos);
}
