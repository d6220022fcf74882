#include "ir/bench_host.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "ir/iterations.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"

namespace mutwo::ir {

std::string_view copy_way_name(CopyWay way) {
  switch (way) {
    case CopyWay::h2d:
      return "h2d";
    case CopyWay::d2h:
      return "d2h";
    case CopyWay::both:
      return "both";
  }
  return "?";
}

std::vector<int64_t> default_link_sizes() {
  std::vector<int64_t> out;
  for (int64_t b = int64_t{4} << 10; b <= int64_t{256} << 20; b *= 4) out.push_back(b);
  return out;
}

void validate_bench_host(const BenchHostOptions& o) {
  constexpr int64_t kMaxBytes = int64_t{16} << 30;
  for (int64_t b : o.sizes_bytes) {
    if (b < 1 || b > kMaxBytes) {
      throw Error(fmt::format("bench-host: size {} B must be in 1 .. {} B (16 GiB)", b, kMaxBytes));
    }
  }
  // Checked before the timing: the fit refused them only after every copy was timed.
  if (const auto twice = support::first_repeat(o.sizes_bytes)) {
    throw Error(fmt::format("bench-host: size {} B is given twice", o.sizes_bytes[twice->second]));
  }
  if (o.sizes_bytes.size() == 1) {
    throw Error(fmt::format("bench-host: one size ({} B) fits no latency and bandwidth; give two or more",
                            o.sizes_bytes[0]));
  }
  check_iterations(o.warmup_iterations, o.timed_iterations, kMaxBenchCopies, "bench-host");
  if (o.dispatch_calls < 1 || o.dispatch_calls > 1000) {
    throw Error(fmt::format("bench-host: dispatch calls {} must be in 1 .. 1000 (below the launch queue)",
                            o.dispatch_calls));
  }
}

void check_link_sizes_fit(const std::vector<int64_t>& sizes_bytes, int32_t host_buffers,
                          int64_t host_memory_bytes) {
  if (sizes_bytes.empty()) return;
  const int64_t largest = *std::max_element(sizes_bytes.begin(), sizes_bytes.end());
  if (largest > host_memory_bytes / host_buffers) {
    throw Error(
        fmt::format("bench-host: size {} B needs {} host buffers of it at once, {} B, more than the "
                    "host's {} B of memory",
                    largest, host_buffers, largest * host_buffers, host_memory_bytes));
  }
}

}  // namespace mutwo::ir
