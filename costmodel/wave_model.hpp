#pragma once
// The wave model: mutwo's default kernel price (cost source `waves`), a kernel model that knows the
// kernel's size and the machine, fitted on measured kernels of many GPUs at once (wave_fit.hpp) so
// that it prices a GPU with no measured kernels from its datasheet alone.
//
// Per group of kernels (wave_kernel.hpp: family, conv class, math class), with the kernel's
// features on the device:
//
//   t = max(c0 + cw * waves / (r f) + cf * flops / (r P) + cq * Fq / (r P)   compute: fill the SMs,
//              + cb * hbm_bytes / H,                                          and move what math cannot hide
//           d0 + dh * hbm_bytes / H + dl * l2_bytes / (S * f))                 memory: HBM or L2
//
// where waves and Fq are those of the group's tile, or, in a group that chooses a tile per kernel (FP32
// single products and convolutions: wave_kernel.hpp, chooses_tile), of the tile among tile_choices whose
// compute regime is the least (cuBLAS and cuDNN pick a tile per shape); r <= 1 is the share of the boost
// clock the board's power sustains under a long run of math (wave_kernel.hpp, sustained_clock_ratio), from
// its board power, its process and one energy per FLOP fitted with the coefficients.
//
// Coefficients are >= 0 and the same on every GPU: c0, d0 ns (a kernel's fixed cost on the GPU), cw
// cycles per wave (a tile's fill and drain), cf and cq the inverse efficiency of a full and of a
// quantized wave (1 / fraction of peak), cb the HBM passes over the operands paid on top of the math
// (FP32 groups only, wave_kernel.hpp; 0 for the tensor-core groups and any group of a file before
// version 6), dh the inverse fraction of HBM bandwidth, dl SM-cycles per
// byte from L2. What this says: a GEMM or convolution too small to fill the SMs pays whole waves
// (Fq, waves) and a tail wave; a bandwidth-bound kernel whose working set fits in L2 runs at the L2's
// rate, but never slower than streaming the same bytes from HBM (predict_wave_ns takes the cheaper:
// the fitted dl, in SM-cycles, prices L2 at 0.43 of the H200's HBM rate, where the lease measured
// 48 MB kernels at 0.80 of it; held out, the bound moved the elementwise median from 7.6 to 7.5 % and
// the mean from 10.1 to 9.4 %, docs/FIDELITY.md); every kernel pays a fixed cost. So k models fused into one
// kernel of k times the work cost less than k kernels exactly when the single ones leave SMs idle (HFTA, Wang
// et al., MLSys 2021).
//
// Refinements: a GPU that has measured kernels of a group may carry that group fitted on its own
// kernels (the same features and fit); it prices that GPU (and GPUs of the same chip with the same
// datasheet figures) in place of the cross-GPU group.
//
// Groups measured only as PyTorch ops timed from Python (timing eager-op: NeuSight's), whose fixed
// cost cannot be told from the host's dispatch inside the measurement, take kUnfittedFixedCostNs as
// c0 and d0 (fixed_cost_fitted false).
//
// JSON ("format": "mutwo-wave-model", "version": 6; unknown fields are errors; versions 1 to 5, written
// before the compute regime paid traffic beside the math, hold four compute terms and are read with cb 0;
// version 1, written before the power limit, is read with energy_pj_per_flop 0; versions 1 and 2, written
// before a harness was kept per group, with each harness entry for every group of its set; versions 1 to 3,
// written before a tile was chosen per kernel, with tile_choice false; versions 1 to 4, written before 3x3
// convolutions were priced as Winograd, with winograd false):
//   {"format", "version", "fitted_on", "method", "inputs": [...], "energy_pj_per_flop",
//    "groups": [{"family", "variant", "math", "tile_m", "tile_n", "tile_choice", "winograd",
//                "compute": [c0, cw, cf, cq, cb],
//                "memory": [d0, dh, dl], "fixed_cost_fitted", "rows", "devices": [...],
//                "error": {"median", "mean", "max"}}, ...],
//    "refinements": [{"device": "t4", "groups": [...]}, ...],
//    "harness": [{"device", "source", "family", "variant", "math", "floor_ns", "harness_ns"}, ...]}
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibration_fit.hpp"
#include "costmodel/device_spec.hpp"
#include "costmodel/wave_kernel.hpp"

namespace mutwo::costmodel {

// The largest coefficients a model file may hold (parse_wave_model refuses more, naming the group, the
// field and the term): far beyond any fit (the shipped model's largest are c0 86 us, d0 131 us, cw 66k
// cycles, an inverse efficiency of 8.4, dl 1.4 cycles per byte, 17.4 pJ per FLOP), so only a corrupt or
// hand-made file meets them: a fixed cost, harness or floor of an hour; a wave or an L2 byte costing
// an hour of cycles at 1 GHz; cf, cq, cb and dh a millionth of the datasheet's peak or bandwidth; a
// microjoule per FLOP.
inline constexpr double kMaxWaveNs = 3.6e12;
inline constexpr double kMaxWaveCycles = 3.6e12;
inline constexpr double kMaxWaveInverseRate = 1e6;
inline constexpr double kMaxWaveEnergyPj = 1e6;

// A kernel's fixed cost on the GPU where the measurements cannot say it: the shortest elementwise
// kernels of HTA's V100 training trace run 1.70 us (5th percentile of 1,765 kernels named
// *elementwise*, tests/fixtures/kineto/v100_training_rank0.pt.trace.json.gz, checked by
// test_wave_model) and back-to-back kernels start 0.75 us apart (median of 4,346 queued pairs,
// scripts/kernel-gaps.py): 2.45 us.
inline constexpr double kUnfittedFixedCostNs = 1'700.0 + 750.0;

struct WaveGroupFit {
  WaveGroupKey key;
  TileShape tile;  // gemm-like groups; ignored otherwise
  // Each kernel runs the quickest of tile_choices(tile) (wave_kernel.hpp, chooses_tile); else `tile`.
  bool tile_choice = false;
  // Its kernels are priced as Winograd F(4x4, 3x3) runs them (wave_kernel.hpp, runs_winograd, as_priced).
  bool winograd = false;
  std::array<double, kWaveComputeTerms> compute{};
  std::array<double, kWaveMemoryTerms> memory{};
  bool fixed_cost_fitted = true;     // false: c0 = d0 = kUnfittedFixedCostNs
  int64_t rows = 0;                  // measured kernels fitted
  std::vector<std::string> devices;  // the GPUs they were measured on
  ErrorSummary error;                // in-sample, on the kernel's time (the harness taken out)
};

// The host's share of one (device, source) of eager-op measurements in one group's fit (wave_fit.hpp).
struct HarnessFit {
  std::string device;
  std::string source;
  double floor_ns = 0;    // median time of the source's smallest 10 % of kernels by work
  double harness_ns = 0;  // fitted: what every measurement of the source holds beyond its kernels
  WaveGroupKey group;     // the group of the source's kernels it was fitted with; empty family: every
                          // group (a version 1 or 2 file)
};

struct WaveRefinement {
  std::string device;
  std::vector<WaveGroupFit> groups;
};

// The refinement that prices a device, and whether only its GEMM-like groups hold there (a board of the
// same chip, clocks and peaks on another memory: same_compute_chip). Built from a refinement pointer, it
// holds whole.
struct RefinementMatch {
  const WaveRefinement* refinement = nullptr;
  bool compute_only = false;
  RefinementMatch() = default;
  RefinementMatch(const WaveRefinement* r) : refinement(r) {}  // NOLINT: a whole refinement, implicitly
  RefinementMatch(const WaveRefinement* r, bool compute) : refinement(r), compute_only(compute) {}
};

struct WaveModel {
  std::string fitted_on;                    // YYYY-MM-DD
  std::vector<std::string> inputs;          // the files fitted (as given)
  std::vector<WaveGroupFit> groups;         // across GPUs, sorted by key
  std::vector<WaveRefinement> refinements;  // sorted by device
  std::vector<HarnessFit> harness;
  // e of sustained_clock_ratio (wave_kernel.hpp), pJ per FP32 FLOP on TSMC 16FF+; 0: no power limit.
  double energy_pj_per_flop = 0;

  double clock_ratio(const DeviceSpec& device) const {
    return sustained_clock_ratio(device, energy_pj_per_flop);
  }

  // The group that prices `key` on `device`: the device's refinement (its own, else one of a device
  // with the same chip and figures), else the cross-GPU group; a conv class or batched GEMM without a
  // group of its own takes the family's "" group; a bandwidth-bound family without one takes "elementwise".
  // nullptr when none applies.
  const WaveGroupFit* group_for(const WaveGroupKey& key, const DeviceSpec& device) const;
  // The same with the device's refinement already looked up (refinement_for): what a cost source
  // asks for every kernel.
  const WaveGroupFit* group_for(const WaveGroupKey& key, RefinementMatch refinement) const;
  // The refinement that prices `device`: its own, else one of a catalog device with the same chip and
  // figures (same_chip), else, for GEMM-like groups only, one with the same chip, clocks and peaks on
  // another memory (same_compute_chip: what a bandwidth-bound kernel reaches is the memory's, and the
  // H200's HBM3e streams at a smaller share of its datasheet rate than the H100's HBM3, docs/VALIDATION.md);
  // none when no device matches.
  RefinementMatch refinement_for(const DeviceSpec& device) const;
};

// A group's tile as tables print it: "128x64", "<=128x64" where each kernel chooses up to it, "" for a
// bandwidth-bound group.
std::string wave_tile_text(const WaveGroupFit& group);

// One regime of the formula above on a kernel's features (compute: true for the first line), with
// kUnfittedFixedCostNs for a group without a fitted fixed cost.
double wave_regime_ns(const WaveGroupFit& group, const WaveFeatures& features, bool compute);
// t of the formula above, in ns (>= 0): the larger regime, at clock ratio r (WaveModel::clock_ratio).
double predict_wave_ns(const WaveGroupFit& group, const WaveKernel& kernel, const DeviceSpec& device,
                       double clock_ratio);

std::string wave_model_json(const WaveModel& model);  // 2-space indented, '\n' at the end
// Throws FormatError naming `file` and the field at fault (a group's or harness entry's coefficient:
// the group too), for a coefficient that is not finite, negative or past the bounds above, and a
// harness floor of 0.
WaveModel parse_wave_model(std::string_view text, std::string_view file);
WaveModel read_wave_model(const std::string& path);
void write_wave_model(const WaveModel& model, const std::string& path);

// The model shipped in the binary (costmodel/models/waves.json, embedded at build time), parsed
// once. Throws Error when the build has none.
const WaveModel& shipped_wave_model();

}  // namespace mutwo::costmodel
