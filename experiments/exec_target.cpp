#include "experiments/exec_target.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "support/error.hpp"

namespace mutwo::experiments {

ExecTarget resolve_exec_target(ir::Executor& executor, const std::string& device,
                               const std::string& memory_cap) {
  ExecTarget target;
  target.device = device.empty() ? executor.default_device() : device;
  const ir::ExecDevice opened = executor.open_device(target.device);
  target.product = opened.product;
  target.is_cuda = opened.is_cuda;
  target.total_memory_bytes = opened.total_memory_bytes;
  target.label = target.is_cuda ? fmt::format("{} {}", opened.device, target.product) : "cpu";
  if (target.is_cuda) target.catalog_gpu = costmodel::match_device(target.product);
  if (!memory_cap.empty()) {
    char* end = nullptr;
    const double fraction = std::strtod(memory_cap.c_str(), &end);
    if (end != nullptr && *end == '\0') {
      if (!(fraction > 0.0 && fraction <= 1.0)) {
        throw Error(
            fmt::format("--memory-cap {}: a fraction must be in (0, 1]; give a size such as 16GiB "
                        "otherwise",
                        memory_cap));
      }
      if (!target.is_cuda) {
        throw Error(
            fmt::format("--memory-cap {}: a fraction needs a CUDA device (of its memory); on the cpu give "
                        "a size such as 2GiB",
                        memory_cap));
      }
      target.cap_fraction = fraction;
      target.cap_bytes = static_cast<int64_t>(fraction * static_cast<double>(target.total_memory_bytes));
    } else {
      try {
        target.cap_bytes = costmodel::parse_memory_size(memory_cap);
      } catch (const Error& e) {
        throw Error(fmt::format("--memory-cap: {}", e.what()));
      }
      if (target.is_cuda) {
        target.cap_fraction = std::min(
            1.0, static_cast<double>(target.cap_bytes) / static_cast<double>(target.total_memory_bytes));
      }
    }
    // A cap of 0 bytes (0GiB, 0.0001KiB, 1e-300 of a device) would read as no cap at all.
    if (target.cap_bytes < 1) {
      throw Error(
          fmt::format("--memory-cap {}: caps the device at 0 bytes; give at least 1 byte", memory_cap));
    }
  }
  return target;
}

int64_t run_memory_limit(const ExecTarget& target, int64_t gpu_memory_bytes) {
  if (target.cap_bytes > 0 && (gpu_memory_bytes <= 0 || target.cap_bytes < gpu_memory_bytes))
    return target.cap_bytes;
  return gpu_memory_bytes;
}

}  // namespace mutwo::experiments
