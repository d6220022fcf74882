#pragma once
// The calibrated kernel-time model and its least-squares fit (Eigen) to measured kernel times.
//
// A kernel of `batch` products of implicit-GEMM shape m x n x k (calibration_csv.hpp) runs as output
// tiles of tile_m x tile_n on `sms` streaming multiprocessors, one tile per SM at a time, in waves:
//
//   tiles   = batch * ceil(m / tile_m) * ceil(n / tile_n)
//   waves   = ceil(tiles / sms)
//   Fq      = flops * (waves * sms * tile_m * tile_n) / (batch * m * n)   FLOPs of every tile slot of every
//                                                                 wave, idle slots and padding included
//   compute = a_launch + a_wave * waves + a_flop * flops + a_slot * Fq
//   memory  = b_launch + b_byte * bytes
//   t_ns    = max(compute, memory)                                 (roofline: the binding resource)
//
// a_launch and b_launch are the per-kernel launch floors of a compute- and a bandwidth-bound kernel,
// a_wave the fill and drain of one wave, a_flop + a_slot the time per FLOP of a full wave
// (eff_max = 1 / ((a_flop + a_slot) * peak)), a_slot what each idle tile slot of a partly filled
// last wave costs (wave quantization), b_byte the time per byte moved. The achieved efficiency
// flops / (peak * (t - launch)) saturates at eff_max as the kernel grows: small kernels are dominated
// by the floor and by a partly idle last wave (Habitat, Yu et al., ATC'21, wave scaling; Williams et
// al., Roofline, CACM 2009).
//
// Fit. Each regime is linear in its coefficients. The max of two affine models is fitted by the
// alternating heuristic of Magnani & Boyd ("Convex piecewise-linear fitting", Optim. Eng. 2009):
// assign each kernel to a regime (first by the catalog roofline, flops / peak >= bytes / bandwidth),
// fit each regime by least squares on its kernels, reassign each kernel to the regime predicting
// the larger time, and repeat until no assignment changes (at most kMaxFitRounds rounds), keeping
// the coefficients of the round with the smallest objective. Each regime's least squares minimises
// the sum of squared relative errors sum_i ((x_i . c - t_i) / t_i)^2 -- ordinary least squares on
// the rows divided by t_i, solved by a column-pivoting Householder QR (Eigen) on unit-norm columns
// -- subject to c >= 0, by solving every subset of the terms and keeping the best solution whose
// coefficients are all >= 0 (exactly the non-negative least-squares optimum for so few terms). The
// tile is chosen per group from kTileCandidates by the same objective over the whole model; ties go
// to the earlier candidate. No parameter is set by hand.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace mutwo::costmodel {

struct TileShape {
  int32_t m = 128;
  int32_t n = 128;
};

// CUTLASS's threadblock tile shapes for SM70/SM75 GEMMs, largest first.
inline constexpr std::array<TileShape, 6> kTileCandidates{
    {{256, 128}, {128, 128}, {128, 64}, {64, 64}, {64, 32}, {32, 32}}};

inline constexpr int kMaxFitRounds = 30;
inline constexpr size_t kComputeTerms = 4;  // launch, wave, flop, slot
inline constexpr size_t kMemoryTerms = 2;   // launch, byte

// One kernel to price or to fit: shape, work and (for fitting) its measured time.
struct KernelSample {
  int64_t batch = 1;  // independent products (a batched GEMM's B)
  int64_t m = 1, n = 1, k = 1;
  double flops = 0;
  double bytes = 0;
  double time_ns = 0;          // measured (fitting); ignored when predicting
  int64_t row_elements = 0;    // a softmax's row (its last dim): which kernel PyTorch runs; 0: not one
  int64_t winograd_tiles = 0;  // a 3x3 stride-1 convolution's Winograd tiles (KernelWork); 0: not one
};

// ceil(batch * ceil(m / tile_m) * ceil(n / tile_n) / sms).
int64_t kernel_waves(int64_t m, int64_t n, TileShape tile, int32_t sms, int64_t batch = 1);
// The compute regime's terms {1, waves, flops, Fq}. Throws Error on batch, m, n, k < 1 or sms < 1.
std::array<double, kComputeTerms> compute_terms(const KernelSample& kernel, TileShape tile, int32_t sms);
// The memory regime's terms {1, bytes}.
std::array<double, kMemoryTerms> memory_terms(const KernelSample& kernel);

// A fitted kernel model: tile and coefficients (all >= 0).
struct KernelModel {
  TileShape tile;
  std::array<double, kComputeTerms> compute{};  // ns, ns per wave, ns per FLOP, ns per slot FLOP
  std::array<double, kMemoryTerms> memory{};    // ns, ns per byte
};

double predict_kernel_ns(const KernelModel& model, const KernelSample& kernel, int32_t sms);

// Summary of |predicted - measured| / measured over samples.
struct ErrorSummary {
  int64_t count = 0;
  double median = 0;  // of the absolute relative errors (even count: mean of the two middles)
  double mean = 0;
  double max = 0;
};
ErrorSummary relative_errors(const KernelModel& model, const std::vector<KernelSample>& samples, int32_t sms);
ErrorSummary summarize_errors(std::vector<double> absolute_relative_errors);

// The catalog roofline that seeds the regimes: peak FLOP/ns of the kernel's math mode and
// bandwidth in bytes/ns.
struct Roofline {
  double peak_flops_per_ns = 1;
  double bytes_per_ns = 1;
};

// The fit above for one tile. `where` names the group in errors: Error "<where>: no samples to
// fit", "<where>: sample i has time_ns = v, must be > 0".
KernelModel fit_kernel_model(const std::vector<KernelSample>& samples, TileShape tile, int32_t sms,
                             Roofline roofline, const std::string& where);
// The best fit over kTileCandidates.
KernelModel fit_kernel_model(const std::vector<KernelSample>& samples, int32_t sms, Roofline roofline,
                             const std::string& where);

}  // namespace mutwo::costmodel
