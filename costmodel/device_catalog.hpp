#pragma once
// The device catalog: name -> DeviceSpec of the GPUs mutwo can simulate, with sourced numbers.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/device_spec.hpp"
#include "profiles/registry.hpp"

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

// One call registers every built-in GPU (V100, A100, H100, H200, RTX 4090 variants, and DeepBench's
// P100, T4, GTX 1080 Ti, TITAN Xp).
void register_builtin_devices(DeviceCatalog& catalog);
// A catalog with the built-ins, built once.
const DeviceCatalog& builtin_devices();
// A copy of a built-in device (to apply overrides to); throws UnknownNameError.
DeviceSpec find_device(std::string_view name);

// The catalog device a runtime product name denotes (torch.cuda.get_device_name(), as a measured
// trace records it), by case-insensitive substring rules, first match wins:
//   "H100" -> h100-sxm-80gb, "H200" -> h200, "A100" and "80GB" -> a100-80gb, other "A100" ->
//   a100-40gb, "V100" and "32GB" -> v100-32gb, other "V100" -> v100-16gb, "4090" -> rtx4090,
//   "P100" -> p100-pcie-16gb, "1080 Ti" -> gtx1080ti, "TITAN Xp" -> titan-xp, "Tesla T4" -> t4.
// "NVIDIA H100 80GB HBM3" -> h100-sxm-80gb; anything else ("cpu", other GPUs, "") -> nullopt.
std::optional<std::string> match_device(std::string_view product_name);

}  // namespace mutwo::costmodel
