#include "sim/host_mode.hpp"

#include <fmt/format.h>

#include "profiles/error.hpp"

namespace mutwo::sim {

std::string_view host_mode_name(HostMode mode) {
  switch (mode) {
    case HostMode::eager:
      return "eager";
    case HostMode::cuda_graph:
      return "cuda-graph";
    case HostMode::none:
      return "none";
  }
  return "?";
}

HostMode parse_host_mode(std::string_view name) {
  for (HostMode m : {HostMode::eager, HostMode::cuda_graph, HostMode::none}) {
    if (host_mode_name(m) == name) return m;
  }
  throw UnknownNameError(fmt::format("unknown host mode '{}'; valid: eager, cuda-graph, none", name));
}

}  // namespace mutwo::sim
