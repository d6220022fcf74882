#pragma once
// Fitting the wave model (wave_model.hpp) on measured kernels (calibration rows, calibration_csv.hpp)
// of many GPUs at once, and each GPU's refinement on its own kernels.
//
// Rows. Each row is priced on its catalog device (wave_kernel.hpp) and belongs to a set: its
// (device, source). A set of eager-op rows (a PyTorch op timed from Python, NeuSight's) holds the
// host's dispatch in every time, so the fit gives it a harness term h added outside the kernel's
// price (t = h + wave price); and such a time is max(kernel, the host's own time to reach the end
// event) + h, so only a set's kernel-bound rows are fitted: time >= 2 x the set's floor, the median
// time of its 10 % smallest rows by work (FLOPs + bytes); the harness is at most that floor (the
// smallest ops' time holds the harness and more). Host-paced rows (bench-ops on a GPU: each launch
// between two events) are max(kernel, the host's time per launch): their set is one kernel's rows
// of a device, and only its rows >= 2 x its floor are fitted, with no harness. Kernel-timed rows
// (DeepBench, profiler traces) are fitted as they are. Every set weighs the same in total (each row 1 / its
// set's fitted rows), so 16,000 NeuSight bmm rows of one GPU do not drown DeepBench's 160 GEMMs.
// A set whose rows fall in two groups (NeuSight's bmm: its B = 1 rows are single products; its softmax:
// two kernels) gets a harness in each group's fit, used for that group's rows; the model records each.
//
// Fit, per group: minimise sum_i w_i (price_i / t_i - 1)^2 over the coefficients (>= 0) and the
// harness terms (>= 0), by weighted non-negative least squares (nonnegative_least_squares_normal);
// the harness terms as floor - u with u >= 0; the max of the two regimes by the alternating fit of Magnani &
// Boyd (2009), seeded by the datasheet roofline (flops / peak >= bytes / bandwidth), at most kMaxFitRounds
// rounds, keeping the best; a gemm-like group's tile from kTileCandidates by the same objective (in a group
// that chooses a tile per kernel, chooses_tile, the largest, and each round gives every row the quickest tile
// up to it under the coefficients just fitted, as it gives it a regime). A group without kernel-timed rows
// fits no fixed cost (it cannot be told from the harness, nor from host-paced rows, whose smallest kernels
// sit under the host's floor: kUnfittedFixedCostNs).
//
// The power limit's energy per FLOP (wave_kernel.hpp, sustained_clock_ratio) is shared by every group:
// the gemm-like groups are fitted at 0 (no limit) and at kEnergyGridFirstPj ... kEnergyGridLastPj in
// steps of sqrt(2), then at 2^(+-1/4) and 2^(+-1/8) around the best, and the energy with the least
// summed objective is kept. It is identified by the boards that run out of power (the 70-75 W T4 and
// P4 beside 250-300 W boards of the same processes).
//
// A refinement is the same fit on one device's rows of a group, at the cross-GPU energy, kept when the
// group has at least kMinRefinementRows of them.
//
// Refine-only rows (mutwo calibrate --refine-only: kernels mutwo's own leases timed on a GPU) enter only
// their GPU's refinements, and their sets' harness terms are those refinements' fits: the cross-GPU
// groups, and the leave-one-GPU-out that validates them, stay those of the public data sets (DeepBench,
// NeuSight), so a GPU nobody measured is priced as before.
//
// The L2 rate (dl) of a bandwidth-bound group is its rows' to say only when one of them fits in L2;
// fitted without one it would be 0, and the group's kernels that fit in L2 would cost only the fixed
// cost. So such a group takes it from the group that would price its kernels without it (a variant's
// family "" group, then elementwise) where that one saw L2, and a refinement from the cross-GPU
// group: NeuSight's kernel-bound rows on the P100, P4, T4 and V100 PCIe all stream from HBM, and its
// warp-kernel softmaxes (reduction warp) on every GPU.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/wave_model.hpp"

namespace mutwo::costmodel {

inline constexpr size_t kMinRefinementRows = 24;
inline constexpr double kKernelBoundFloors = 2.0;  // an eager-op row is fitted when time >= 2 x floor
inline constexpr double kEnergyGridFirstPj = 4.0;  // pJ per FP32 FLOP on TSMC 16FF+
inline constexpr double kEnergyGridLastPj = 128.0;

// The rows with what the fit needs, computed once.
struct WaveRows {
  std::vector<CalibrationRow> rows;
  std::vector<WaveKernel> kernels;                        // per row, on its device
  std::vector<size_t> device_of;                          // per row, index into devices
  std::vector<DeviceSpec> devices;                        // catalog devices of the rows, in first-seen order
  std::vector<size_t> set_of;                             // per row, index into sets
  std::vector<std::pair<std::string, std::string>> sets;  // (device, source)
  std::vector<double> set_floor_ns;                       // per set
  std::vector<char> eager;                                // per row: timing eager-op
  std::vector<char> kernel_bound;  // per row: kernel-timed, or an eager-op row >= 2 x its floor
  // per row: refines its GPU only (fit_wave_model): in no cross-GPU group, so neither in the fit nor in
  // the leave-one-out that validates it
  std::vector<char> refine_only;
  std::vector<char> set_refine_only;  // per set: its rows are refine-only (a set is one or the other)
};
// Throws Error for a row on a device the catalog lacks (or the host CPU), or a precision the wave
// model does not price. `refine_only`: empty (no row), or a flag per row.
WaveRows prepare_wave_rows(std::vector<CalibrationRow> rows, std::vector<char> refine_only = {});

// An eager-op set's harness in one group's fit: (set index, group). A set whose rows fall in two groups
// (NeuSight's bmm: single and batched products; its softmax: the warp and the block kernel) has one in
// each.
using HarnessKey = std::pair<size_t, WaveGroupKey>;

// What a fit over some rows yields: the groups and each eager-op set's harness per group.
struct WaveGroupsFit {
  std::vector<WaveGroupFit> groups;
  std::map<HarnessKey, double> harness_ns;
  double energy_pj_per_flop = 0;  // the power limit's energy, fitted or given
};
// Fits every group over the kernel-bound rows with use[i] set, at the given energy per FLOP or, without
// one, with it fitted by the grid above; each group, and each tile of a gemm-like group's grid, on its
// own thread, up to support::worker_threads(jobs) at once (the same result on any number). Throws Error
// when no row is used.
WaveGroupsFit fit_wave_groups(const WaveRows& rows, const std::vector<char>& use,
                              std::optional<double> energy_pj_per_flop = std::nullopt, int jobs = 0);

// The measured kernel time of row i: its time, less the harness of its set in its group when it is eager-op.
double measured_kernel_ns(const WaveRows& rows, size_t i, const std::map<HarnessKey, double>& harness_ns);

struct WaveFitOptions {
  std::vector<std::string> inputs;  // recorded in the model
  std::string fitted_on;            // YYYY-MM-DD
  bool refinements = true;
  int jobs = 0;  // threads for the fits (fit_wave_groups); 0: one per hardware thread
};
// The cross-GPU groups over every row, the refinements, and the harness of every eager-op set.
WaveModel fit_wave_model(const WaveRows& rows, const WaveFitOptions& options);

}  // namespace mutwo::costmodel
