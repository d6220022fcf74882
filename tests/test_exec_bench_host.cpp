// The executor's host-link and dispatch timings for `mutwo bench-host` on the CPU
// (exec/bench_host.cpp): every size is copied each way and both at once, in order, each timing a
// median between its fastest and slowest copy; the dispatch figures are positive; bad requests are
// refused naming the field. On the CPU the "link" is a host memcpy, which the fit reads like any
// link. The CUDA counterpart is in test_exec_cuda.cpp.
#include "tests/support/torch_doctest.hpp"

#include <string>
#include <vector>

#include "costmodel/link_fit.hpp"
#include "exec/executor.hpp"
#include "ir/bench_host.hpp"
#include "support/error.hpp"
#include "tests/support/error_of.hpp"

namespace {

using namespace mutwo;

using mutwo::test::error_of;

}  // namespace

TEST_CASE("bench-host on the cpu: every size each way and both at once, in order; dispatch timed") {
  ir::BenchHostOptions options;
  options.sizes_bytes = {4096, 1 << 20, 8 << 20};
  options.warmup_iterations = 1;
  options.timed_iterations = 5;
  options.dispatch_calls = 50;
  const ir::HostBench b = exec::bench_host(options);
  CHECK(b.device_name == "cpu");
  REQUIRE(b.copies.size() == 9);
  const ir::CopyWay ways[] = {ir::CopyWay::h2d, ir::CopyWay::d2h, ir::CopyWay::both};
  for (size_t i = 0; i < b.copies.size(); ++i) {
    const ir::LinkTiming& t = b.copies[i];
    CAPTURE(i);
    CHECK(t.bytes == options.sizes_bytes[i / 3]);
    CHECK(t.way == ways[i % 3]);
    CHECK(t.samples == 5);
    CHECK(t.time_ns >= 1);
    CHECK(t.min_ns <= t.time_ns);
    CHECK(t.time_ns <= t.max_ns);
  }
  // A host memcpy of 8 MiB takes longer than one of 4 KiB.
  CHECK(b.copies[6].time_ns > b.copies[0].time_ns);
  CHECK(b.dispatch_calls == 50);
  CHECK(b.dispatch_ns >= 1);
  CHECK(b.kernel_interval_ns >= 1);
  // The fit reads it: a bandwidth and a latency per way.
  const costmodel::LinkFit fit = costmodel::fit_link(b.copies);
  CHECK(fit.h2d.gbps > 0);
  CHECK(fit.d2h.gbps > 0);
  CHECK(fit.duplex_speedup > 0);
}

TEST_CASE("bench-host refuses bad requests naming the field") {
  ir::BenchHostOptions options;
  options.sizes_bytes = {0};
  CHECK(error_of([&] { exec::bench_host(options); }) == "bench-host: size 0 B must be in 1 .. 17179869184 B (16 GiB)");
  // A latency and a bandwidth need two distinct sizes: refused before any copy is timed.
  options.sizes_bytes = {4096};
  CHECK(error_of([&] { exec::bench_host(options); }) ==
        "bench-host: one size (4096 B) fits no latency and bandwidth; give two or more");
  options.sizes_bytes = {8192, 4096, 8192};
  CHECK(error_of([&] { exec::bench_host(options); }) == "bench-host: size 8192 B is given twice");
  options.sizes_bytes = {4096, 8192};
  options.timed_iterations = 0;
  CHECK(error_of([&] { exec::bench_host(options); }) == "bench-host: timed iterations 0 must be >= 1");
  options.timed_iterations = ir::kMaxBenchCopies + 1;
  CHECK(error_of([&] { exec::bench_host(options); }) ==
        "bench-host: 3 warm-up and 1001 timed iterations: each must be at most 1000");
  options.timed_iterations = 3;
  options.dispatch_calls = 5000;
  CHECK(error_of([&] { exec::bench_host(options); }) ==
        "bench-host: dispatch calls 5000 must be in 1 .. 1000 (below the launch queue)");
  options.dispatch_calls = 10;
  options.device = "tpu";
  CHECK(error_of([&] { exec::bench_host(options); }).find("tpu") != std::string::npos);
}

TEST_CASE("bench-host refuses a size whose buffers do not fit the host's memory, before any copy") {
  // 16 GiB on a cpu holds four buffers of it: 64 GiB, past a 32 GiB host (2 pinned ones beside a GPU fit).
  const std::vector<int64_t> sizes = {4096, int64_t{16} << 30};
  CHECK(error_of([&] { ir::check_link_sizes_fit(sizes, 4, int64_t{32} << 30); }) ==
        "bench-host: size 17179869184 B needs 4 host buffers of it at once, 68719476736 B, more than the "
        "host's "
        "34359738368 B of memory");
  CHECK_NOTHROW(ir::check_link_sizes_fit(sizes, 2, int64_t{32} << 30));
  CHECK_NOTHROW(ir::check_link_sizes_fit({}, 4, 1));  // the default sizes: 256 MiB at most
}
