#pragma once
// How well the calibrated kernel model predicts kernels it was not fitted on: k-fold held-out
// error per device, kernel/category and precision, and cross-GPU error (a kernel measured on GPU A
// scaled to GPU B by the ratio of the two calibrated predictions, Habitat-style), rendered as the
// "Kernel level" and "Cross-GPU" sections of docs/FIDELITY.md.
//
// Split (deterministic): the rows of each group the profile fits (calibration_groups: device,
// kernel, conv variant, precision), in input order; row i
// of a group is held out in fold i % folds. Each fold fits the group on the other folds (the same
// fit as fit_calibration_profile) and predicts its held-out rows.
//
// Cross-GPU, for each ordered pair of devices (A, B) and precision: every row of B whose kernel,
// precision, shape (m, n, k, flops, bytes, shape text up to any " algo="; not the source: some
// sheets leave it blank) and occurrence index also appears on A;
//   habitat(B) = t_A * pred_B(row) / pred_A(row)
// where pred_B is B's k-fold held-out prediction (B's profile never saw the row) and pred_A comes
// from A's profile fitted on all of A's rows (A's measurement is the input). "B's profile" is
// pred_B alone, for comparison. Error = |predicted - t_B| / t_B.
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/calibration_fit.hpp"

namespace mutwo::costmodel {

// predictions[i] is row i's held-out prediction (ns). Throws Error for folds < 2, a row on a device
// the catalog lacks, or a group with fewer rows than folds.
std::vector<double> kfold_predictions(const std::vector<CalibrationRow>& rows, int folds);
// What kfold_predictions checks before it fits: Error "k-fold: folds = K must be >= 2", or
// "k-fold: device 't4', kernel 'gemm', precision 'fp16' has 160 rows, fewer than 1000 folds".
void check_kfold_groups(const std::vector<CalibrationRow>& rows, int folds);

struct GroupError {
  std::string device;
  std::string group;  // a category ("conv") or a kernel ("conv2d_forward")
  std::string precision;
  ErrorSummary error;
};
// Held-out errors per (device, category, precision) and per (device, kernel, precision), sorted.
std::vector<GroupError> kfold_errors_by_category(const std::vector<CalibrationRow>& rows,
                                                 const std::vector<double>& predictions);
std::vector<GroupError> kfold_errors_by_kernel(const std::vector<CalibrationRow>& rows,
                                               const std::vector<double>& predictions);

struct CrossGpuError {
  std::string from;  // A, measured
  std::string to;    // B, predicted
  std::string precision;
  ErrorSummary habitat;    // t_A * pred_B / pred_A
  ErrorSummary b_profile;  // pred_B (held out) on the same rows
};
std::vector<CrossGpuError> cross_gpu_errors(const std::vector<CalibrationRow>& rows,
                                            const std::vector<double>& predictions);

// What the analytic source (the default, and the only one for a GPU with no measured kernels)
// answers for each row: the row's kernel on its catalog device, at the peak of the row's math mode
// (catalog_roofline: fp32 on CUDA cores, tf32/fp16/bf16 GEMM and conv on tensor cores), the row's
// FLOPs and bytes, the category's efficiencies and the launch overhead (AnalyticCostModel::
// kernel_breakdown). Nothing is fitted. Throws UnknownNameError for a device the catalog lacks.
std::vector<double> analytic_predictions(const std::vector<CalibrationRow>& rows);

// Errors by the kernel's measured duration, for each source: the small kernels of small batches
// (HFTA's and mu-TWO's setting) apart from the large ones. `bucket` is "< 20 us", "20-200 us" or
// ">= 200 us"; `signed_median` the median of (predicted - measured) / measured (< 0: too fast).
struct DurationBucketError {
  std::string bucket;
  std::string source;  // "analytic", "calibrated (k-fold)"
  ErrorSummary error;
  double signed_median = 0;
};
std::vector<DurationBucketError> errors_by_duration(const std::vector<CalibrationRow>& rows,
                                                    const std::vector<double>& analytic,
                                                    const std::vector<double>& calibrated);

// The markdown of the two sections ("## Kernel level", "## Cross-GPU"), with the command that
// regenerates them.
std::string calibration_fidelity_markdown(const std::vector<CalibrationRow>& rows, int folds,
                                          const std::string& command);

// `document` with the text between kFidelityBegin and kFidelityEnd replaced by `sections` (markers
// kept); when the markers are absent, the sections (between markers) are appended. An empty
// document becomes "# mutwo fidelity report" and the sections.
inline constexpr std::string_view kFidelityBegin = "<!-- begin: mutwo calibrate --fidelity -->";
inline constexpr std::string_view kFidelityEnd = "<!-- end: mutwo calibrate --fidelity -->";
std::string replace_fidelity_sections(std::string_view document, std::string_view sections);
// The same for any pair of markers.
std::string replace_marked_sections(std::string_view document, std::string_view sections,
                                    std::string_view begin_marker, std::string_view end_marker);

}  // namespace mutwo::costmodel
