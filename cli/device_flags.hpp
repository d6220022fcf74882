#pragma once
// The device and cost-model flags `simulate` and `search` share (--gpu, --memory, --h2d-gbps,
// --d2h-gbps, --half-duplex, --cost-source), and turning them into a device and a cost model.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "costmodel/device_spec.hpp"
#include "costmodel/op_cost_model.hpp"

namespace mutwo::cli {

struct DeviceFlags {
  std::string gpu = "a100-40gb";
  std::string memory;   // "16GiB"; empty: the device's memory
  double h2d_gbps = 0;  // 0: the device's link
  double d2h_gbps = 0;
  bool half_duplex = false;
  std::string cost_source = "analytic";
};

// Adds the flags to a subcommand; help texts list the catalog's devices and cost sources.
void add_device_flags(CLI::App* cmd, DeviceFlags& flags);

// The catalog device with the flags' overrides; throws mutwo::Error naming a bad value.
costmodel::DeviceSpec resolve_device(const DeviceFlags& flags);

// The named cost source on that device; throws UnknownNameError listing the valid ones.
std::unique_ptr<costmodel::OpCostModel> make_cost_model(const DeviceFlags& flags,
                                                        const costmodel::DeviceSpec& device);

}  // namespace mutwo::cli
