#pragma once
// The host link's figures fitted to `mutwo bench-host`'s copies (ir/bench_host.hpp): per way,
// time = latency + bytes / bandwidth (the rule transfer_duration_ns prices swaps by), by relative
// non-negative least squares over every size (costmodel/relative_nnls.hpp); and whether the two
// ways overlap (full duplex): one copy each way at once against the two one after another.
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/bench_host.hpp"

namespace mutwo::costmodel {

struct LinkWayFit {
  double gbps = 0;         // bandwidth, GB/s == bytes/ns
  int64_t latency_ns = 0;  // per copy
  double mean_abs_rel_error = 0;  // of the fit over the copies it was fitted to
  int samples = 0;
};

struct LinkFit {
  LinkWayFit h2d;
  LinkWayFit d2h;
  // At the largest size timed every way: (t_h2d + t_d2h) / t_both. 2: the ways overlap fully; 1:
  // they serialise (one copy engine).
  double duplex_speedup = 0;
  bool full_duplex = false;  // duplex_speedup >= 1.5
};

// Throws Error naming the way when it has fewer than 2 sizes, or when the fit finds no bandwidth
// (times that do not grow with the size).
LinkFit fit_link(const std::vector<ir::LinkTiming>& copies);

}  // namespace mutwo::costmodel
