#pragma once
// The device catalog: name -> DeviceSpec of the GPUs mutwo can simulate, with sourced numbers.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "costmodel/device_spec.hpp"
#include "support/registry.hpp"

namespace mutwo::costmodel {

// add validates the spec (validate_device) and throws Error on a duplicate name; find throws
// UnknownNameError "unknown device 'x'; valid: v100-16gb, ...".
class DeviceCatalog : public Registry<DeviceSpec> {
 public:
  DeviceCatalog();
  const std::vector<DeviceSpec>& devices() const { return entries(); }  // in registration order
};

// Throws Error naming the device and the field when a number is missing or out of range
// (every peak, bandwidth, the memory and SM count > 0; latencies and launch overhead >= 0;
// tf32_flops_per_ns may be 0 for GPUs without TF32 tensor cores).
void validate_device(const DeviceSpec& device);

// Per-kernel launch overhead as the GPU sees it under PyTorch eager: ~1 us of launch between
// back-to-back kernels (NVIDIA, "Getting Started with CUDA Graphs", 2019: 3.8 us per 2.9 us kernel
// when launched back to back) plus the framework's per-op dispatch, which shows on the GPU as a gap
// whenever kernels are short. 4 us total; a device file may set its own (launch_overhead_us).
inline constexpr int64_t kLaunchOverheadNs = 4'000;

// The host's figures every catalog GPU takes (they describe the host and PyTorch, not the GPU):
// PyTorch eager's dispatch measured on HTA's V100 trace, and the development host's CPU Adam.
HostDispatch default_host_dispatch();
HostOptimizer default_host_optimizer();

// One call registers every built-in GPU: the device files of costmodel/devices/*.toml
// (device_file.hpp), compiled in, in file-name order.
void register_builtin_devices(DeviceCatalog& catalog);
// {file stem, TOML text} of costmodel/devices/*.toml, generated at build time.
const std::vector<std::pair<std::string_view, std::string_view>>& shipped_device_texts();
// A catalog with the built-ins, built once.
const DeviceCatalog& builtin_devices();
// Whether two devices are one chip with the same figures, so that what was measured on one holds
// for the other (a calibration profile, a wave-model refinement): SM count, every peak and the
// memory bandwidth equal, and no two different chip names (v100-32gb is v100-16gb's; a100-40gb the
// A100-PCIE-40GB's).
bool same_chip(const DeviceSpec& a, const DeviceSpec& b);
// Whether two boards carry one chip at the same SM count, boost clock, peaks, L2 and board power, their
// memory aside (the H100 SXM and the H200): a wave-model refinement's compute terms, in cycles and
// shares of the peak, hold for both, and its memory terms are shares of each board's own bandwidth.
// Both must name the chip.
bool same_compute_chip(const DeviceSpec& a, const DeviceSpec& b);

// A copy of a built-in device (to apply overrides to), or the device a file describes when `name` is
// a path (is_device_path: it holds a '/' or ends in ".toml"; device_file.hpp). Throws
// UnknownNameError for an unknown name, Error/FormatError for a file that cannot be read or is bad.
DeviceSpec find_device(std::string_view name);

// The catalog device a runtime product name denotes (torch.cuda.get_device_name(), as a measured
// trace records it), by case-insensitive substring rules, first match wins:
//   "H100" and "PCIe" -> h100-pcie, other "H100" -> h100-sxm-80gb, "H200" -> h200, "B200" -> b200,
//   "A100", "PCIe" and "80GB" -> a100-pcie-80gb, "A100" and "PCIe" -> a100-pcie-40gb, "A100" and
//   "80GB" -> a100-80gb, other "A100" -> a100-40gb, "V100", "PCIe" and "32GB" -> v100-pcie-32gb,
//   "V100" and "32GB" -> v100-32gb, other "V100" -> v100-16gb, "L40S" -> l40s, the word "L4" -> l4, the word
//   "A10" -> a10, "4090" -> rtx4090, "3090" -> rtx3090, "P100" -> p100-pcie-16gb, "1080 Ti" ->
//   gtx1080ti, "TITAN Xp" -> titan-xp, "Tesla T4" -> t4, "Tesla P4" -> p4.
// "NVIDIA H100 80GB HBM3" -> h100-sxm-80gb; anything else ("cpu", other GPUs, "") -> nullopt.
std::optional<std::string> match_device(std::string_view product_name);

}  // namespace mutwo::costmodel
