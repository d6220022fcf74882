#include "cli/device_flags.hpp"

#include "cli/table.hpp"

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"

namespace mutwo::cli {

void add_device_flags(CLI::App* cmd, DeviceFlags& flags) {
  cmd->add_option("--gpu", flags.gpu, "Device: " + joined(costmodel::builtin_devices().names()))
      ->capture_default_str();
  cmd->add_option("--memory", flags.memory, "Memory limit, e.g. 16GiB, 40GB (default: the device's memory)");
  cmd->add_option("--h2d-gbps", flags.h2d_gbps,
                  "Host-to-device bandwidth in GB/s (default: the device's link)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--d2h-gbps", flags.d2h_gbps,
                  "Device-to-host bandwidth in GB/s (default: the device's link)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--half-duplex", flags.half_duplex, "One copy engine: the two directions serialise");
  cmd->add_option("--cost-source", flags.cost_source,
                  "Op cost source: " + joined(costmodel::builtin_cost_sources().names()))
      ->capture_default_str();
}

costmodel::DeviceSpec resolve_device(const DeviceFlags& flags) {
  costmodel::DeviceOverrides overrides;
  if (!flags.memory.empty()) overrides.memory_bytes = costmodel::parse_memory_size(flags.memory);
  if (flags.h2d_gbps > 0) overrides.h2d_gbps = flags.h2d_gbps;
  if (flags.d2h_gbps > 0) overrides.d2h_gbps = flags.d2h_gbps;
  if (flags.half_duplex) overrides.half_duplex = true;
  return costmodel::apply_overrides(costmodel::find_device(flags.gpu), overrides);
}

std::unique_ptr<costmodel::OpCostModel> make_cost_model(const DeviceFlags& flags,
                                                        const costmodel::DeviceSpec& device) {
  return costmodel::builtin_cost_sources().create(flags.cost_source, device);
}

}  // namespace mutwo::cli
