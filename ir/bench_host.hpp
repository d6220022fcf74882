#pragma once
// What `mutwo bench-host` asks the executor to time (Executor::bench_host): the host link (copies
// between pinned host memory and the device, each way alone and both at once) over a range of
// sizes, and the host's dispatch of one small ATen op and the device's interval between such
// kernels launched back to back. The device catalog's link and launch figures, measured on the
// GPU the runs use (issue 22, item 3). Torch-free: the CLI builds the request, exec/ runs it
// (exec/bench_host.cpp), costmodel/link_fit.hpp fits latency and bandwidth to the copies.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mutwo::ir {

// Which way a timed copy goes: host to device, device to host, or one of each at once on the two
// copy streams (the pair timed from the first one's start to the last one's end).
enum class CopyWay : uint8_t { h2d, d2h, both };
std::string_view copy_way_name(CopyWay way);  // "h2d", "d2h", "both"

// The most warm-up or timed copies per size and way: past it a typo would time one size for hours.
inline constexpr int32_t kMaxBenchCopies = 1000;

struct BenchHostOptions {
  std::string device = "cpu";        // "cpu", "cuda", "cuda:N"
  std::vector<int64_t> sizes_bytes;  // each copied every way; empty: default_link_sizes()
  int32_t warmup_iterations = 3;
  int32_t timed_iterations = 10;  // the median is kept
  int32_t dispatch_calls = 200;   // small ops per dispatch sample (below the launch queue's 1,024)
};

// One size, one way: the median of the timed copies.
struct LinkTiming {
  CopyWay way = CopyWay::h2d;
  int64_t bytes = 0;    // per copy (both: each way)
  int64_t time_ns = 0;  // median, >= 1
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  int32_t samples = 0;
};

struct HostBench {
  std::string device_name;         // the runtime's product name ("NVIDIA H100 80GB HBM3", "cpu")
  std::vector<LinkTiming> copies;  // sizes in order, each h2d, d2h, both
  // Host time of one small ATen op (an in-place add on a 1-element device tensor): dispatch and
  // launch, the median over timed samples of dispatch_calls calls each, per call.
  int64_t dispatch_ns = 0;
  // Device time per such kernel launched back to back (the step timer around dispatch_calls
  // launches, per launch): the launch interval the GPU sees, max(host issue, the GPU's own floor).
  int64_t kernel_interval_ns = 0;
  int32_t dispatch_calls = 0;
};

// 4 KiB to 256 MiB in powers of 4: latency-bound to bandwidth-bound copies.
std::vector<int64_t> default_link_sizes();
// Throws Error naming the field and value: a size < 1 or > 16 GiB, fewer than two distinct sizes (a
// latency and a bandwidth are fitted to them) or one given twice, iterations < 1 (warm-up < 0) or
// > kMaxBenchCopies, dispatch calls < 1 or > 1,000 (past the launch queue the host would block and
// time the GPU).
void validate_bench_host(const BenchHostOptions& options);

// Throws Error unless the largest size's host buffers fit the host's memory: each size holds
// `host_buffers` of its bytes on the host at once (the executor's: all four on the cpu, two pinned
// beside a GPU). A size past the host's memory got the process killed by the kernel's OOM killer.
void check_link_sizes_fit(const std::vector<int64_t>& sizes_bytes, int32_t host_buffers,
                          int64_t host_memory_bytes);

}  // namespace mutwo::ir
