// `mutwo bench-ops` without a device: the kernels and default grid (ir/bench_ops.hpp) and the
// calibration rows made of timings (costmodel/bench_rows.hpp), checked against the calibration
// CSV's rules, DeepBench's converter and the calibrated source's own look-up.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "costmodel/bench_rows.hpp"
#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/calibration_csv.hpp"
#include "costmodel/deepbench_csv.hpp"
#include "costmodel/wave_fit.hpp"
#include "ir/bench_ops.hpp"
#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "tests/support/error_of.hpp"

using namespace mutwo::costmodel;
using namespace mutwo::ir;
using mutwo::Error;

namespace {

using mutwo::test::error_of;

KernelTiming timing(std::string kernel, std::vector<int64_t> dims, std::string precision, int64_t ns) {
  KernelTiming t;
  t.shape = {std::move(kernel), std::move(dims), "test"};
  t.precision = std::move(precision);
  t.time_ns = ns;
  return t;
}

}  // namespace

TEST_CASE("the default grid: every shape valid; GEMM covers the powers of two 64..8192 in m, n and k") {
  for (const std::string& kernel : bench_kernel_names()) {
    for (bool quick : {false, true}) {
      const std::vector<BenchShape> grid = default_bench_grid(kernel, quick);
      CHECK_FALSE(grid.empty());
      for (const BenchShape& s : grid) {
        CHECK(s.kernel == kernel);
        CHECK_NOTHROW(validate_bench_shape(s));
        // ... and a timing of it is a valid calibration row (bench_row validates what it makes).
        CHECK_NOTHROW(bench_row(timing(s.kernel, s.dims, "bf16", 1000), "h200"));
      }
    }
  }
  // 8 powers of two (64, 128, ..., 8192) in each of m, n, k: 8^3 = 512 shapes tagged "pow2".
  std::set<std::vector<int64_t>> pow2;
  for (const BenchShape& s : default_bench_grid("gemm", false)) {
    if (s.source == "pow2") pow2.insert(s.dims);
  }
  CHECK(pow2.size() == 512);
  CHECK(pow2.contains({64, 8192, 64}));
  CHECK(pow2.contains({8192, 8192, 8192}));
  // 23 distinct ResNet-50 convolutions and 10 of MobileNet-V2 at batch 16, 32 and 64.
  const std::vector<BenchShape> conv = default_bench_grid("conv2d_backward_filter", false);
  CHECK(conv.size() == 99);
  // MobileNet-V2's 1x1 from 16 to 96 channels at 112x112, the H200 step's slowest convolution.
  const auto has = [&](std::vector<int64_t> dims, std::string source) {
    for (const BenchShape& s : conv) {
      if (s.dims == dims && s.source == source) return true;
    }
    return false;
  };
  CHECK(has({32, 16, 112, 112, 96, 1, 1, 0, 1, 1}, "mobilenet-v2 112"));
  CHECK(has({64, 3, 224, 224, 32, 3, 3, 1, 2, 1}, "mobilenet-v2 stem"));
  CHECK(has({16, 144, 56, 56, 144, 3, 3, 1, 2, 144}, "mobilenet-v2 56"));  // depthwise, stride 2
  // --quick: a handful of tiny shapes (the CLI test runs them all on the CPU).
  CHECK(default_bench_grid("gemm", true).size() == 2);
}

TEST_CASE("bench kernels: an unknown name lists the valid ones; bad dims are named") {
  CHECK(error_of([] { check_bench_kernel("matmul"); }) ==
        "unknown kernel 'matmul'; valid: gemm, conv2d_forward, conv2d_backward_data, conv2d_backward_filter, "
        "relu, "
        "gelu, add, softmax, layernorm, batchnorm2d");
  CHECK(error_of([] {
          validate_bench_shape({"gemm", {64, 64}, ""});
        }) == "kernel 'gemm' dims [64,64]: expected 3 dims");
  CHECK(error_of([] {
          validate_bench_shape({"relu", {0, 8}, ""});
        }) == "kernel 'relu' dims [0,8]: dim 0 must be >= 1");
  // A conv's pad (dim 7) may be 0; a 5x5 filter does not fit a 3x3 input padded by 0; groups divide
  // C and K.
  CHECK_NOTHROW(validate_bench_shape({"conv2d_forward", {1, 1, 3, 3, 1, 3, 3, 0, 1, 1}, ""}));
  CHECK(error_of([] {
          validate_bench_shape({"conv2d_forward", {1, 1, 3, 3, 1, 5, 5, 0, 1, 1}, ""});
        }) ==
        "kernel 'conv2d_forward' dims [1,1,3,3,1,5,5,0,1,1]: filter 5x5 larger than the padded input 3x3");
  CHECK(error_of([] {
          validate_bench_shape({"conv2d_forward", {1, 6, 3, 3, 8, 1, 1, 0, 1, 4}, ""});
        }) == "kernel 'conv2d_forward' dims [1,6,3,3,8,1,1,0,1,4]: groups 4 must divide C = 6 and K = 8");
  CHECK(error_of([] {
          validate_bench_shape({"conv2d_forward", {1, 1, 3, 3, 1, 3, 3, 0, 1}, ""});
        }) == "kernel 'conv2d_forward' dims [1,1,3,3,1,3,3,0,1]: expected 10 dims");
  // tf32 only changes GEMM and convolution math.
  CHECK(bench_precision_applies("gemm", "tf32"));
  CHECK(bench_precision_applies("conv2d_backward_data", "tf32"));
  CHECK_FALSE(bench_precision_applies("relu", "tf32"));
  CHECK(bench_precision_applies("relu", "fp16"));
}

TEST_CASE("a GEMM timing is a row of 2*m*n*k FLOPs and every operand once") {
  const CalibrationRow r = bench_row(timing("gemm", {128, 32, 96}, "fp16", 5000), "h100-sxm-80gb");
  CHECK(r.device == "h100-sxm-80gb");
  CHECK(r.kernel == "gemm");
  CHECK(r.category == KindCategory::matmul);
  CHECK(r.m == 128);
  CHECK(r.n == 32);
  CHECK(r.k == 96);
  CHECK(r.flops == 2 * 128 * 32 * 96);                    // 786,432
  CHECK(r.bytes == (128 * 96 + 96 * 32 + 128 * 32) * 2);  // A, B, C at 2 bytes: 38,912
  CHECK(r.time_ns == 5000);
  CHECK(r.source == "bench-ops test");
  CHECK(r.shape == "M=128 N=32 K=96 NN");
}

TEST_CASE("a conv timing is the row DeepBench's converter makes of the same shape") {
  // DeepBench's conv.csv columns W,H,C,N,K,S,R,pad_w,pad_h,stride_w,stride_h for N=4 C=1 H=161
  // W=700 K=32 R=5 S=20 pad 0 stride 2; bench-ops dims have one pad and one stride, so R=S=5 here.
  const std::string deepbench =
      "gpu,precision,source,W,H,C,N,K,S,R,pad_w,pad_h,stride_w,stride_h,forward_ms,backward_data_ms,"
      "backward_filter_ms,forward_algorithm\nV100,fp32,x,700,161,1,4,32,5,5,0,0,2,2,0.1,0.2,0.3,\n";
  const std::vector<CalibrationRow> expected = convert_deepbench_conv(deepbench, "c.csv");
  REQUIRE(expected.size() == 3);
  for (const CalibrationRow& e : expected) {
    const CalibrationRow r =
        bench_row(timing(e.kernel, {4, 1, 161, 700, 32, 5, 5, 0, 2, 1}, "fp32", 7), "v100-16gb");
    CHECK(r.kernel == e.kernel);
    CHECK(r.m == e.m);
    CHECK(r.n == e.n);
    CHECK(r.k == e.k);
    CHECK(r.flops == e.flops);
    CHECK(r.bytes == e.bytes);
    CHECK(r.shape == e.shape);
  }
  // P = (161-5)/2+1 = 79, Q = (700-5)/2+1 = 348: forward m = 4*79*348, n = 32, k = 1*5*5.
  CHECK(expected[0].m == 4 * 79 * 348);
  CHECK(expected[0].k == 25);
}

TEST_CASE("an op-kind timing is the kernel the calibrated source looks up for that op") {
  // layernorm over [64,128] in fp32: y (8192) + mean (64) + rstd (64) = 8320 output elements; 8
  // FLOPs per element; bytes = x + gamma + beta read, y + mean + rstd written, 4 bytes each.
  const CalibrationRow ln = bench_row(timing("layernorm", {64, 128}, "fp32", 900), "cpu");
  CHECK(ln.category == KindCategory::norm);
  CHECK(ln.m == 8320);
  CHECK(ln.n == 1);
  CHECK(ln.k == 1);
  CHECK(ln.flops == 8 * 64 * 128);
  CHECK(ln.bytes == (8192 + 128 + 128 + 8192 + 64 + 64) * 4);
  CHECK(ln.shape == "rows=64 cols=128");

  // The same op in a graph, as the zoo builds it: op_kernels prices it with the same sample.
  GraphBuilder b("g", DType::f16);
  const TensorId x = b.add_input("x", {256, 96}, TensorRole::input, FuseAxis::stack);
  b.op(OpKind::relu, "r", {x});
  const Graph g = std::move(b).finish();
  const KernelSample s = op_kernels(g, g.ops.front()).front().sample;
  const CalibrationRow relu = bench_row(timing("relu", {256, 96}, "fp16", 900), "a100-40gb");
  CHECK(relu.kernel == "relu");
  CHECK(relu.category == KindCategory::elementwise);
  CHECK(relu.m == s.m);
  CHECK(relu.flops == static_cast<int64_t>(s.flops));
  CHECK(relu.bytes == static_cast<int64_t>(s.bytes));
  CHECK(relu.bytes == 2 * 256 * 96 * 2);  // read x, write y, 2 bytes each

  const CalibrationRow bn = bench_row(timing("batchnorm2d", {2, 8, 8, 8}, "bf16", 900), "a100-40gb");
  CHECK(bn.category == KindCategory::norm);
  CHECK(bn.m == 2 * 8 * 8 * 8 + 8 + 8);  // y, save_mean, save_invstd
  CHECK(bn.shape == "N=2 C=8 H=8 W=8");
}

TEST_CASE("rows of the host CPU are read back, and refused by nothing but the fit") {
  const CalibrationRow r = bench_row(timing("add", {64, 128}, "fp32", 1200), std::string(kHostCpuDevice));
  const std::vector<CalibrationRow> back = parse_calibration_csv(calibration_csv_text({r}), "cpu.csv");
  REQUIRE(back.size() == 1);
  CHECK(back[0].device == "cpu");
  CHECK(back[0].time_ns == 1200);
  // Any other name outside the catalog is still refused.
  CHECK(error_of([&] {
          CalibrationRow bad = r;
          bad.device = "tpu";
          validate_calibration_row(bad);
        }).rfind("calibration row: field 'device' = 'tpu': not a catalog device", 0) == 0);
}

TEST_CASE("a GPU's bench-ops rows are host-paced: the wave fit keeps a kernel's rows >= 2 x its floor") {
  // Each launch sits between two events from the host (exec/bench_ops.cpp): the CPU's rows are its
  // own time, a GPU's read as the host's time per launch when the kernel is shorter.
  CHECK(bench_row(timing("relu", {64, 128}, "fp32", 900), std::string(kHostCpuDevice)).timing ==
        Timing::kernel);
  std::vector<CalibrationRow> rows;
  for (int64_t i = 1; i <= 20; ++i) {  // relu on [1024 i, 256]: 10 us (the host) up to 10 + 2.5 i us
    rows.push_back(
        bench_row(timing("relu", {1024 * i, 256}, "fp32", 10'000 + (i > 2 ? 2'500 * i : 0)), "h200"));
  }
  rows.push_back(bench_row(timing("gemm", {64, 64, 64}, "fp32", 28'000), "h200"));
  rows.push_back(bench_row(timing("gemm", {4096, 4096, 4096}, "fp32", 3'000'000), "h200"));
  CHECK(rows.front().timing == Timing::host_paced);
  const std::vector<CalibrationRow> back = parse_calibration_csv(calibration_csv_text(rows), "h200.csv");
  CHECK(back.front().timing == Timing::host_paced);
  CHECK(calibration_csv_text({rows.front()}).find(",host-paced,bench-ops test,") != std::string::npos);

  const WaveRows w = prepare_wave_rows(back);
  // One set per kernel of the device (the host's time per launch is the op's), none by grid.
  REQUIRE(w.sets.size() == 2);
  CHECK(w.sets[0] == std::pair<std::string, std::string>{"h200", "relu (host-paced)"});
  CHECK(w.sets[1] == std::pair<std::string, std::string>{"h200", "gemm (host-paced)"});
  // relu's floor: the median of its 2 smallest rows by work (10 % of 20), 10 us; kept from 20 us:
  // 10 + 2.5 i >= 20 from i = 4. gemm's floor is its smaller row, 28 us: 3 ms is kept.
  CHECK(w.set_floor_ns[0] == doctest::Approx(10'000.0));
  CHECK(w.set_floor_ns[1] == doctest::Approx(28'000.0));
  for (size_t i = 0; i < 20; ++i) CHECK(w.kernel_bound[i] == (i + 1 >= 4 ? 1 : 0));
  CHECK(w.kernel_bound[20] == 0);
  CHECK(w.kernel_bound[21] == 1);
  // No harness: a host-paced time is max(kernel, host), not their sum.
  for (char e : w.eager) CHECK(e == 0);
}

TEST_CASE("a depthwise conv timing is the kernel the calibrated source prices for a depthwise conv op") {
  // MobileNet's depthwise 3x3 on x[2,8,8,8] (groups 8, stride 1, pad 1) in fp16: each output sees its
  // own channel, so k = 1*3*3 and FLOPs 2*N*K*P*Q*(C/groups)*R*S = 2*2*8*8*8*9 = 18,432; bytes of x,
  // w[8,1,3,3] and y at 2 bytes: (1024 + 72 + 1024) * 2 = 4,240.
  const CalibrationRow r =
      bench_row(timing("conv2d_forward", {2, 8, 8, 8, 8, 3, 3, 1, 1, 8}, "fp16", 900), "a100-40gb");
  CHECK(r.variant == "grouped");
  CHECK(r.m == 2 * 8 * 8);
  CHECK(r.n == 8);
  CHECK(r.k == 9);
  CHECK(r.flops == 18'432);
  CHECK(r.bytes == 4'240);
  CHECK(r.shape == "N=2 C=8 H=8 W=8 K=8 R=3 S=3 pad=1x1 stride=1x1 groups=8");
  const CalibrationRow filter =
      bench_row(timing("conv2d_backward_filter", {2, 8, 8, 8, 8, 3, 3, 1, 1, 8}, "fp16", 900), "a100-40gb");
  CHECK(filter.m == 8);
  CHECK(filter.n == 9);
  CHECK(filter.k == 128);

  // The same convolution in a graph, as the zoo builds it (zoo/mobilenet.cpp): op_kernels prices its
  // one kernel with the same sample and shape class.
  GraphBuilder b("g", DType::f16);
  const TensorId x = b.add_input("x", {2, 8, 8, 8}, TensorRole::input, FuseAxis::stack);
  const TensorId w = b.add_weight("w", {8, 1, 3, 3}, FuseAxis::dim0);
  b.op(OpKind::conv2d, "dw", {x, w},
       {{"stride", std::vector<int64_t>{1, 1}},
        {"padding", std::vector<int64_t>{1, 1}},
        {"groups", int64_t{8}}});
  const Graph g = std::move(b).finish();
  const std::vector<OpKernel> kernels = op_kernels(g, g.ops.front());
  REQUIRE(kernels.size() == 1);
  CHECK(kernels.front().variant == r.variant);
  CHECK(kernels.front().sample.m == r.m);
  CHECK(kernels.front().sample.n == r.n);
  CHECK(kernels.front().sample.flops == doctest::Approx(static_cast<double>(r.flops)));
  CHECK(kernels.front().sample.bytes == doctest::Approx(static_cast<double>(r.bytes)));
}
