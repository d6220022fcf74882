// The wave model's memory regime (costmodel/wave_model.hpp): bytes that sit in L2 cost no more than
// streaming them from HBM.
#include <doctest/doctest.h>

#include <algorithm>

#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_kernel.hpp"
#include "costmodel/wave_model.hpp"

namespace {

using namespace mutwo::costmodel;
using mutwo::ir::KindCategory;

WaveGroupFit elementwise(double dh, double dl) {
  WaveGroupFit g;
  g.key = {"elementwise", "", ""};
  g.tile = {128, 128};
  g.compute = {0, 0, 0, 0};
  g.memory = {0, dh, dl};
  return g;
}

}  // namespace

TEST_CASE("a kernel whose bytes sit in L2 costs no more than streaming them from HBM") {
  // The H200 (50 MB L2, 132 SMs at 1.98 GHz, 4,800 B/ns of HBM) with a group of dh = 1.25 and
  // dl = 0.157 SM-cycles per byte (the shipped elementwise group's figures): 48 MB in L2 would take
  // 48e6 x 0.157 / 261.36 = 28,834 ns, the same bytes from HBM 48e6 x 1.25 / 4,800 = 12,500 ns (the
  // lease measured 12.6 us for Adam's kernels of this size); 1 MB: 601 ns in L2, 260 from HBM.
  const WaveGroupFit g = elementwise(1.25, 0.157);
  const DeviceSpec h200 = find_device("h200");
  REQUIRE(h200.l2_bytes >= 48'000'000);
  for (const double bytes : {48e6, 1e6}) {
    KernelSample s;
    s.bytes = bytes;
    const double hbm = bytes * 1.25 / h200.hbm_bytes_per_ns;
    CHECK(predict_wave_ns(g, wave_kernel("relu", KindCategory::elementwise, "", "fp32", s, h200), h200,
                          1.0) == doctest::Approx(hbm));
  }
  // Where L2 is the cheaper, it is taken: dl = 0.001.
  const WaveGroupFit fast_l2 = elementwise(1.25, 0.001);
  KernelSample s;
  s.bytes = 1e6;
  CHECK(predict_wave_ns(fast_l2, wave_kernel("relu", KindCategory::elementwise, "", "fp32", s, h200), h200,
                        1.0) == doctest::Approx(1e6 * 0.001 / (132 * 1.98)));
}

TEST_CASE("fp16 without tensor cores runs at the FP32 rate where the chip's half math is slower") {
  // The GTX 1080 Ti's half rate is 1/64 of FP32 (0.18 against 11.34 TFLOP/s, its device file), and
  // fp16 GEMMs accumulate in FP32: priced at the half rate, a bert-base step in amp-fp16 took
  // 40x its fp32 time. The P100's FP16x2 (2x FP32) and the V100's tensor cores keep their peaks.
  KernelSample s;
  s.m = s.n = s.k = 1024;
  s.batch = 1;
  for (const char* gpu : {"gtx1080ti", "p100-pcie-16gb", "v100-16gb"}) {
    const DeviceSpec d = find_device(gpu);
    const WaveKernel w = wave_kernel("gemm", KindCategory::matmul, "", "fp16", s, d);
    CAPTURE(gpu);
    CHECK(w.peak_flops_per_ns == std::max(d.half_flops_per_ns, d.fp32_flops_per_ns));
    CHECK(w.peak_flops_per_ns >= d.fp32_flops_per_ns);
  }
  CHECK(find_device("gtx1080ti").half_flops_per_ns < find_device("gtx1080ti").fp32_flops_per_ns / 60);
}
