#include "sim/host_mode.hpp"

#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.hpp"

namespace mutwo::sim {

std::string_view host_mode_name(HostMode mode) {
  switch (mode) {
    case HostMode::eager:
      return "eager";
    case HostMode::libtorch:
      return "libtorch";
    case HostMode::cuda_graph:
      return "cuda-graph";
    case HostMode::none:
      return "none";
  }
  return "?";
}

namespace {
constexpr std::array kModes{HostMode::eager, HostMode::libtorch, HostMode::cuda_graph, HostMode::none};
}

const std::vector<std::string>& host_mode_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (HostMode m : kModes) out.emplace_back(host_mode_name(m));
    return out;
  }();
  return names;
}

HostMode parse_host_mode(std::string_view name) {
  for (HostMode m : kModes) {
    if (host_mode_name(m) == name) return m;
  }
  throw UnknownNameError(fmt::format("unknown host mode '{}'; valid: {}", name, fmt::join(host_mode_names(), ", ")));
}

}  // namespace mutwo::sim
