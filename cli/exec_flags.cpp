#include "cli/exec_flags.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "exec/device_backend.hpp"
#include "profiles/error.hpp"

namespace mutwo::cli {

void add_exec_flags(CLI::App* cmd, ExecFlags& flags) {
#ifdef MUTWO_WITH_CUDA
  const char* default_device = "cuda";
#else
  const char* default_device = "cpu";
#endif
  cmd->add_option("--device", flags.device,
                  fmt::format("Where to execute: cpu, cuda, cuda:N (default: {})", default_device));
  cmd->add_option("--memory-cap", flags.memory_cap,
                  "Emulate a smaller device: a fraction of the CUDA device's memory (0.5) or a size "
                  "(16GiB; on the cpu enforced by accounting the step's tensors)");
  cmd->add_option("--seed", flags.seed, "Seed of the weights, inputs and dropout masks")
      ->capture_default_str();
}

ExecTarget resolve_exec_target(ExecFlags& flags, DeviceFlags& device_flags) {
  if (flags.device.empty()) {
#ifdef MUTWO_WITH_CUDA
    flags.device = "cuda";
#else
    flags.device = "cpu";
#endif
  }
  ExecTarget target;
  {
    const std::unique_ptr<exec::DeviceBackend> backend = exec::make_backend(flags.device);
    target.product = backend->name();
    target.is_cuda = backend->is_cuda();
    target.total_memory_bytes = backend->total_memory_bytes().value_or(0);
    target.label = target.is_cuda ? fmt::format("{} {}", backend->device().str(), target.product) : "cpu";
  }
  if (target.is_cuda && !device_flags.gpu_given) {
    if (const auto matched = costmodel::match_device(target.product)) device_flags.gpu = *matched;
  }
  if (!flags.memory_cap.empty()) {
    char* end = nullptr;
    const double fraction = std::strtod(flags.memory_cap.c_str(), &end);
    if (end != nullptr && *end == '\0') {
      if (!(fraction > 0.0 && fraction <= 1.0)) {
        throw Error(
            fmt::format("--memory-cap {}: a fraction must be in (0, 1]; give a size such as 16GiB "
                        "otherwise",
                        flags.memory_cap));
      }
      if (!target.is_cuda) {
        throw Error(
            fmt::format("--memory-cap {}: a fraction needs a CUDA device (of its memory); on the cpu give "
                        "a size such as 2GiB",
                        flags.memory_cap));
      }
      target.cap_fraction = fraction;
      target.cap_bytes = static_cast<int64_t>(fraction * static_cast<double>(target.total_memory_bytes));
    } else {
      target.cap_bytes = costmodel::parse_memory_size(flags.memory_cap);
      if (target.is_cuda) {
        target.cap_fraction = std::min(
            1.0, static_cast<double>(target.cap_bytes) / static_cast<double>(target.total_memory_bytes));
      }
    }
  }
  return target;
}

int64_t run_memory_limit(const ExecTarget& target, int64_t gpu_memory_bytes) {
  if (target.cap_bytes > 0 && (gpu_memory_bytes <= 0 || target.cap_bytes < gpu_memory_bytes))
    return target.cap_bytes;
  return gpu_memory_bytes;
}

}  // namespace mutwo::cli
