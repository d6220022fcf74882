#pragma once
// A device's calibration profile: the kernel-time model (calibration_fit.hpp) fitted per kernel and
// precision to measured kernel times (calibration_csv.hpp), with what it was fitted on and how well
// it fits; its JSON file (costmodel/profiles/<device>.json) and the profiles shipped in the binary.
//
// JSON ("format": "mutwo-calibration-profile", "version": 2; unknown fields are errors; version 1,
// which had no conv variants, is refused with a request to fit again):
//   {"format", "version", "device": "v100-16gb", "sm_count": 80, "fitted_on": "2025-01-31",
//    "method": "...", "inputs": ["deepbench_gemm.csv", ...],
//    "groups": [{"kernel": "gemm", "variant": "", "category": "matmul", "precision": "fp32", "rows": 160,
//                "tile_m": 128, "tile_n": 64, "compute": [a_launch, a_wave, a_flop, a_slot],
//                "memory": [b_launch, b_byte],
//                "error": {"median": 0.05, "mean": 0.09, "max": 0.47}}, ...]}
// Coefficients are in ns, ns per wave, ns per FLOP, ns per slot FLOP; ns, ns per byte. Groups are
// sorted by (kernel, variant, precision). "error" is the in-sample |predicted - measured| / measured.
//
// Groups. One model is fitted per (kernel, variant, precision): a conv kernel per shape class
// (conv_variant in calibration_csv.hpp), every other kernel once (variant ""). A conv variant with
// fewer than kMinVariantRows rows of its device, kernel and precision is fitted with the "general"
// ones instead: too few kernels to fit the model's 6 coefficients apart.
#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/calibration_fit.hpp"
#include "costmodel/device_spec.hpp"

namespace mutwo::costmodel {

inline constexpr size_t kMinVariantRows = 12;  // twice the kernel model's coefficients

struct KernelGroupFit {
  std::string kernel;   // "gemm", "conv2d_forward", an op kind
  std::string variant;  // conv kernels: conv_variant(); others: empty
  ir::KindCategory category = ir::KindCategory::matmul;
  std::string precision;  // "fp32", "tf32", "fp16", "bf16"
  int64_t rows = 0;       // measured kernels it was fitted on
  KernelModel model;
  ErrorSummary error;  // in-sample
};

struct CalibrationProfile {
  std::string device;  // catalog name
  int32_t sm_count = 0;
  std::string fitted_on;            // date of the fit, YYYY-MM-DD
  std::vector<std::string> inputs;  // the files fitted (as given)
  std::vector<KernelGroupFit> groups;

  // The group of (kernel, variant, precision), nullptr when the profile has none.
  const KernelGroupFit* find(std::string_view kernel, std::string_view variant, std::string_view precision) const;
  // The group that prices a kernel of this variant: its own, else the kernel's "general" one (a
  // variant too rare to fit apart, or not measured); nullptr when neither exists.
  const KernelGroupFit* pricing(std::string_view kernel, std::string_view variant, std::string_view precision) const;
};

// The group a row is fitted in, by the rules above.
struct CalibrationGroupKey {
  std::string device, kernel, variant, precision;
  auto operator<=>(const CalibrationGroupKey&) const = default;
};

// The catalog roofline of a math mode: fp32 -> FP32 peak, tf32 -> TF32 (FP32 without TF32 tensor
// cores), fp16/bf16 -> the half peak for matmul and conv, FP32 otherwise; HBM bandwidth.
Roofline catalog_roofline(const DeviceSpec& device, ir::KindCategory category, std::string_view precision);

// "device 'v100-16gb', kernel 'conv2d_forward' (3x3s1), precision 'fp32'" for messages.
std::string calibration_group_text(const CalibrationGroupKey& key);
// The rows (indices into `rows`) of each group, every device's.
std::map<CalibrationGroupKey, std::vector<size_t>> calibration_groups(const std::vector<CalibrationRow>& rows);

// Fits one group per (kernel, variant, precision) over the rows of `device` (others are ignored). Throws
// Error "no calibration rows for device 'x'; the inputs have rows for: a, b" when there are none.
CalibrationProfile fit_calibration_profile(const std::vector<CalibrationRow>& rows, const DeviceSpec& device,
                                           std::vector<std::string> inputs, std::string fitted_on);

// The samples of one group's rows (time in ns as double).
KernelSample to_sample(const CalibrationRow& row);

std::string calibration_profile_json(const CalibrationProfile& profile);  // 2-space indented, '\n' at the end
// Throws FormatError naming `file` and the field at fault.
CalibrationProfile parse_calibration_profile(std::string_view text, std::string_view file);
CalibrationProfile read_calibration_profile(const std::string& path);
void write_calibration_profile(const CalibrationProfile& profile, const std::string& path);

// The profiles shipped in the binary (costmodel/profiles/*.json, embedded at build time), parsed
// once, sorted by device name.
const std::vector<CalibrationProfile>& shipped_calibration_profiles();
// The profile that calibrates `device`, among `given` first, then the shipped ones: one whose
// device is `device.name`, else one fitted on a catalog device of the same chip with the same
// figures (same_chip, device_catalog.hpp: v100-32gb uses v100-16gb's). nullopt when none does.
std::optional<CalibrationProfile> find_calibration_profile(const DeviceSpec& device,
                                                           const std::vector<CalibrationProfile>& given = {});

}  // namespace mutwo::costmodel
