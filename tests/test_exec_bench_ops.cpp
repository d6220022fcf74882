// The executor's kernel timings for `mutwo bench-ops` on the CPU (exec/bench_ops.cpp): every
// kernel of ir/bench_ops.hpp runs, timings come in shape order with the median between the
// fastest and the slowest launch, and bad requests are refused naming what is wrong. The CUDA
// counterpart is in test_exec_cuda.cpp.
#include "tests/support/torch_doctest.hpp"

#include <string>
#include <vector>

#include "exec/executor.hpp"
#include "ir/bench_ops.hpp"
#include "support/error.hpp"
#include "tests/support/error_of.hpp"

namespace {

using namespace mutwo;

using mutwo::test::error_of;

}  // namespace

TEST_CASE("every bench kernel runs on the cpu, one fp32 timing per shape, in shape order") {
  ir::BenchOpsOptions options;
  options.device = "cpu";
  options.warmup_iterations = 0;
  options.timed_iterations = 3;
  for (const std::string& kernel : ir::bench_kernel_names()) {
    for (const ir::BenchShape& s : ir::default_bench_grid(kernel, true)) options.shapes.push_back(s);
  }
  const std::vector<ir::KernelTiming> timings = exec::bench_ops(options);
  REQUIRE(timings.size() == options.shapes.size());  // the cpu runs fp32 only: one timing a shape
  for (size_t i = 0; i < timings.size(); ++i) {
    const ir::KernelTiming& t = timings[i];
    CHECK(t.shape.kernel == options.shapes[i].kernel);
    CHECK(t.shape.dims == options.shapes[i].dims);
    CHECK(t.precision == "fp32");
    CHECK(t.samples == 3);
    CHECK(t.time_ns >= 1);
    // The median of three launches is the middle one.
    CHECK(t.min_ns <= t.time_ns);
    CHECK(t.time_ns <= t.max_ns);
  }
}

TEST_CASE("bench-ops refuses a precision the cpu does not run, bad counts and bad shapes") {
  ir::BenchOpsOptions options;
  options.device = "cpu";
  options.shapes = ir::default_bench_grid("gemm", true);
  options.precisions = {"bf16"};
  CHECK(error_of([&] { exec::bench_ops(options); }) ==
        "bench-ops: precision 'bf16' does not run on device 'cpu' (cpu); it runs: fp32");
  options.precisions = {"fp8"};
  CHECK(error_of([&] { exec::bench_ops(options); }) ==
        "unknown precision 'fp8'; valid: fp32, tf32, fp16, bf16");
  options.precisions = {};
  options.timed_iterations = 0;
  CHECK(error_of([&] { exec::bench_ops(options); }) == "bench-ops: timed iterations 0 must be >= 1");
  options.timed_iterations = 1;
  options.warmup_iterations = -1;
  CHECK(error_of([&] { exec::bench_ops(options); }) == "bench-ops: warm-up iterations -1 must be >= 0");
  options.warmup_iterations = ir::kMaxBenchLaunches + 1;  // a typo timing each shape for hours
  CHECK(error_of([&] { exec::bench_ops(options); }) ==
        "bench-ops: 1001 warm-up and 1 timed iterations: each must be at most 1000");
  options.warmup_iterations = 0;
  options.shapes = {{"softmax", {8}, ""}};
  CHECK(error_of([&] { exec::bench_ops(options); }) == "kernel 'softmax' dims [8]: expected 2 dims");
  options.shapes = {{"matmul", {8, 8, 8}, ""}};
  CHECK(error_of([&] { exec::bench_ops(options); }).rfind("unknown kernel 'matmul'; valid: gemm,", 0) == 0);
}
