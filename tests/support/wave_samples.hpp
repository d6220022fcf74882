#pragma once
// Hand-made kernels and wave groups for the wave model's suites (test_wave_model, test_wave_validation).
#include <array>
#include <cstdint>
#include <utility>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/wave_model.hpp"

namespace mutwo::test {

// `batch` products of m x n x k in `element_bytes`-byte elements: FLOPs and bytes read and written.
inline costmodel::KernelSample gemm_sample(int64_t batch, int64_t m, int64_t n, int64_t k,
                                           int64_t element_bytes = 4) {
  costmodel::KernelSample s;
  s.batch = batch;
  s.m = m;
  s.n = n;
  s.k = k;
  s.flops = 2.0 * batch * m * n * k;
  s.bytes = static_cast<double>(element_bytes * batch * (m * k + k * n + m * n));
  return s;
}

// An fp32 GEMM row of `sample` timed on `gpu` (no time yet: the caller sets time_ns, timing, source).
inline costmodel::CalibrationRow gemm_row(const char* gpu, const costmodel::KernelSample& sample) {
  costmodel::CalibrationRow r;
  r.device = gpu;
  r.precision = "fp32";
  r.kernel = "gemm";
  r.category = ir::KindCategory::matmul;
  r.batch = sample.batch;
  r.m = sample.m;
  r.n = sample.n;
  r.k = sample.k;
  r.flops = static_cast<int64_t>(sample.flops);
  r.bytes = static_cast<int64_t>(sample.bytes);
  return r;
}

inline costmodel::WaveGroupFit wave_group(costmodel::WaveGroupKey key, costmodel::TileShape tile,
                                          std::array<double, 4> compute, std::array<double, 3> memory) {
  costmodel::WaveGroupFit g;
  g.key = std::move(key);
  g.tile = tile;
  std::copy(compute.begin(), compute.end(), g.compute.begin());
  g.memory = memory;
  return g;
}

}  // namespace mutwo::test
