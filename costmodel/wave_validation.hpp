#pragma once
// How well the wave model (wave_model.hpp) prices GPUs it never saw: leave-one-GPU-out over every
// GPU of the measured rows, by kernel category and by duration; and the direct evidence for
// horizontal fusion, one batched GEMM against the same products run one at a time. Rendered as the
// "Kernel level" sections of docs/FIDELITY.md.
//
// Leave one GPU out. The rows are held out a chip at a time (DeviceSpec::chip: the V100 SXM2 of
// DeepBench and the V100 PCIe of NeuSight are one GPU to this test, as are a chip's other parts): the
// groups are fitted on every other chip's rows (fit_wave_groups) and price the held-out rows from
// their device's datasheet alone. An eager-op row's harness (the host's dispatch inside NeuSight's
// times, wave_fit.hpp) is the host's, not the GPU's: for a held-out set it is the set's floor (its
// smallest kernels' median time, a property of that machine's host) times the median harness / floor
// of the same source in the row's group on the training GPUs. Scored rows are the kernel-bound ones
// (wave_fit.hpp); error = |predicted - measured| / measured on the kernel's time (the measured time
// less the harness).
//
// Categories: "GEMM/linear" (gemm rows of one product), "bmm" (batched gemm rows), "conv", "norm",
// "softmax" (the reduction family), "elementwise". Duration bands by the measured kernel time:
// "< 20 us", "20-200 us", ">= 200 us".
//
// Fusion. NeuSight measured no batched product beside the same products one at a time, so pairs are
// matched: for each batched row (B = 2..64, kernel-bound) the closest other gemm row of the same
// device (kernel-bound) with at most B/2 products (B' = 1 included) whose m, n and k are each within
// 10 % of the batched row's (closest: the smallest largest log-ratio over m, n, k). Its time per
// product, scaled to the batched row's product by their FLOPs, stands for one of the B products run
// in a kernel of B' products: measured speed-up = B * t_B' / B' / t_B (how much cheaper a product is
// in the batch of B than in the batch of B'); predicted = the same ratio of the two prices, by the
// fit that held the device out.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/calibration_fit.hpp"
#include "costmodel/wave_fit.hpp"

namespace mutwo::costmodel {

struct WaveHeldOut {
  std::vector<char> scored;                 // per row
  std::vector<double> measured;             // per row: the measured kernel time (harness out), ns
  std::vector<double> predicted;            // per row: the held-out price, ns
  std::map<std::string, WaveModel> fits;    // chip -> the groups fitted without it
  std::map<HarnessKey, double> harness_ns;  // every eager-op set's held-out harness, per group
};
// Each fit on up to support::worker_threads(jobs) threads (fit_wave_groups). Throws Error when the rows
// hold fewer than two chips.
WaveHeldOut leave_one_gpu_out(const WaveRows& rows, int jobs = 0);

// Every row priced by one given model (a GPU's refinement where the model carries one for it,
// refinement_for), scored as leave_one_gpu_out scores a held-out GPU: kernel-bound rows, an eager-op set's
// harness its floor times the median harness / floor of the same source and group over the model's other GPUs
// (a set whose source the model's harness terms lack is not scored). `fits` stays empty. What `mutwo
// calibrate --waves
// --score` prints: how the shipped model prices a GPU's kernels that nothing in it was fitted on.
WaveHeldOut score_wave_model(const WaveRows& rows, const WaveModel& model);

std::string wave_category(const CalibrationRow& row);  // "GEMM/linear", "bmm", ...
// "NeuSight" (eager-op), "DeepBench" (kernel), "bench-ops" (host-paced)
std::string wave_dataset(const WaveRows& rows, size_t i);

struct WaveError {
  std::string device;   // "" in the all-GPU summaries
  std::string dataset;  // "NeuSight", "DeepBench"
  std::string group;    // a category, or a duration band
  ErrorSummary error;
  double signed_median = 0;  // of (predicted - measured) / measured
};
// Per (device, dataset, category), sorted; and per (category) over every held-out GPU.
std::vector<WaveError> held_out_by_category(const WaveRows& rows, const WaveHeldOut& held_out);
std::vector<WaveError> held_out_categories_overall(const WaveRows& rows, const WaveHeldOut& held_out);
// held_out_by_category (per_device) or held_out_categories_overall with each eager-op set's harness as
// the model fitted on every GPU has it for the row's group (the held-out price unchanged): a diagnostic of
// how much of the held-out error is the harness rule's, the measuring host's share, which no datasheet holds.
// Rows of a set `fitted` has no harness for are left out.
std::vector<WaveError> held_out_by_category_own_harness(const WaveRows& rows, const WaveHeldOut& held_out,
                                                        const WaveModel& fitted, bool per_device);
// Per (dataset, duration band) over every held-out GPU.
std::vector<WaveError> held_out_by_duration(const WaveRows& rows, const WaveHeldOut& held_out);

struct FusionPair {
  std::string device;
  int64_t batch = 1;          // B
  int64_t smaller_batch = 1;  // B'
  size_t batched_row = 0;
  size_t single_row = 0;
  double measured_speedup = 0;
  double predicted_speedup = 0;  // by the fit that held the GPU out (score_wave_model's: the scored model)
  double fitted_speedup = 0;     // by `fitted` (every GPU, refinements included: not independent)
};
// Pairs of a batched GEMM row and the closest row of the same GPU holding at most half its products
// (of equally close ones, the one holding the fewest);
// `fitted` is the model fitted on every row (wave_fidelity_markdown's).
std::vector<FusionPair> fusion_pairs(const WaveRows& rows, const WaveHeldOut& held_out,
                                     const WaveModel& fitted);

// The pairs of one device and batch bucket (B = 2-3, 4-7, 8-15, 16-31, 32-64): medians of the
// measured and predicted speed-ups and of the speed-up's error.
struct FusionSummary {
  std::string device;
  int64_t bucket = 2;  // its smallest B
  size_t pairs = 0;
  double measured = 0;
  double predicted = 0;
  double error = 0;
  double fitted = 0;
  double fitted_error = 0;
};
std::vector<FusionSummary> summarize_fusion(const std::vector<FusionPair>& pairs);
// The median error of the predicted (held-out) or fitted speed-up over every pair; nullopt for no
// pairs (a median of none is no 0 %).
std::optional<double> fusion_median_error(const std::vector<FusionPair>& pairs, bool fitted = false);

// The markdown of the wave model's sections, with the command that regenerates them.
std::string wave_fidelity_markdown(const WaveRows& rows, const WaveModel& model, const WaveHeldOut& held_out,
                                   const std::string& command);

inline constexpr std::string_view kWaveFidelityBegin = "<!-- begin: mutwo calibrate --waves -->";
inline constexpr std::string_view kWaveFidelityEnd = "<!-- end: mutwo calibrate --waves -->";

}  // namespace mutwo::costmodel
