// The wave model's tile per kernel (wave_kernel.hpp, chooses_tile and tile_choices): which groups choose,
// which tiles a kernel may run, and the price at the quickest, derived by hand.
#include <doctest/doctest.h>

#include <vector>

#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_model.hpp"
#include "tests/support/wave_samples.hpp"

using namespace mutwo::costmodel;
using mutwo::ir::KindCategory;
using mutwo::test::gemm_sample;
using mutwo::test::wave_group;

namespace {

std::vector<std::pair<int, int>> sides(const std::vector<TileShape>& tiles) {
  std::vector<std::pair<int, int>> out;
  for (const TileShape& t : tiles) out.emplace_back(t.m, t.n);
  return out;
}

}  // namespace

TEST_CASE(
    "FP32 single products and convolutions choose a tile per kernel; batched and tensor-core groups do not") {
  CHECK(chooses_tile({"gemm", "", "cuda"}));
  CHECK(chooses_tile({"conv2d_forward", "3x3s1", "cuda"}));
  CHECK(chooses_tile({"conv2d_backward_filter", "", "cuda"}));
  CHECK_FALSE(chooses_tile({"gemm", "batched", "cuda"}));
  CHECK_FALSE(chooses_tile({"gemm", "", "tensor"}));
  CHECK_FALSE(chooses_tile({"conv2d_forward", "", "tensor"}));
  CHECK_FALSE(chooses_tile({"norm", "", ""}));
}

TEST_CASE("a kernel may run every candidate tile no larger than its group's, either way round") {
  using P = std::vector<std::pair<int, int>>;
  CHECK(sides(tile_choices({128, 64})) == P{{128, 64}, {64, 64}, {64, 32}, {32, 64}, {32, 32}});
  CHECK(sides(tile_choices({256, 128})) ==
        P{{256, 128}, {128, 128}, {128, 64}, {64, 128}, {64, 64}, {64, 32}, {32, 64}, {32, 32}});
  CHECK(sides(tile_choices({32, 32})) == P{{32, 32}});
}

TEST_CASE("a group that chooses prices a kernel at its quickest tile; a large one keeps the largest tile") {
  // A100 SXM 40GB: 108 SMs at 1.41 GHz, FP32 19,500 FLOP/ns. Group c = [0, 10,000 cycles per wave, 1, 1],
  // no memory cost, largest tile 128x128.
  const DeviceSpec a100 = find_device("a100-40gb");
  WaveGroupFit g = wave_group({"gemm", "", "cuda"}, {128, 128}, {0, 10'000, 1, 1}, {0, 0, 0});
  const double wave_ns = 10'000 / 1.41;  // 7,092.199 ns
  // 64 x 64 x 1024: 8,388,608 FLOPs, 430.185 ns at the peak; one tile of any size is one wave.
  const WaveKernel small =
      wave_kernel("gemm", KindCategory::matmul, "", "fp32", gemm_sample(1, 64, 64, 1024), a100);
  const double small_ns = 8'388'608 / 19'500.0;
  // One 128x128 tile: every slot of the wave counts, Fq = FLOPs x 108 x 16,384 / 4,096 = 432 x FLOPs.
  CHECK(predict_wave_ns(g, small, a100, 1.0) == doctest::Approx(wave_ns + small_ns + 432 * small_ns));
  // Choosing: 32x32 tiles (4 of them, still one wave) leave Fq = 108 x 1,024 / 4,096 = 27 x FLOPs;
  // 64x64 would be 108 x, 64x32 54 x. 7,092.199 + 430.185 + 11,614.996 = 19,137.380 ns.
  g.tile_choice = true;
  CHECK(predict_wave_ns(g, small, a100, 1.0) == doctest::Approx(19'137.380));
  // 4096 x 4096 x 64 (2,147,483,648 FLOPs, 110,127.366 ns): 128x128 tiles make 1,024 tiles in 10 waves,
  // Fq = 10 x 108 x 16,384 / 16,777,216 = 1.0546875 x FLOPs: 70,921.986 + 110,127.366 + 116,149.918 =
  // 297,199.27 ns; 128x64 runs 19 waves (355,221.7 ns), 32x32 152 (1.19 ms): the largest tile stays.
  const WaveKernel large =
      wave_kernel("gemm", KindCategory::matmul, "", "fp32", gemm_sample(1, 4096, 4096, 64), a100);
  CHECK(predict_wave_ns(g, large, a100, 1.0) == doctest::Approx(297'199.27));
}

TEST_CASE("tables print a choosing group's tile as the largest it may run") {
  WaveGroupFit g = wave_group({"gemm", "", "cuda"}, {128, 64}, {0, 0, 1, 0}, {0, 0, 0});
  CHECK(wave_tile_text(g) == "128x64");
  g.tile_choice = true;
  CHECK(wave_tile_text(g) == "<=128x64");
  CHECK(wave_tile_text(wave_group({"norm", "", ""}, {128, 64}, {0, 0, 0, 0}, {0, 1, 0})).empty());
}
