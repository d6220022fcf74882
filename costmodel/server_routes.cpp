#include "costmodel/server_routes.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

int32_t toward_host(const ServerSpec& s, int32_t link) {
  (void)s;
  return 1 + 2 * link;
}
int32_t away_from_host(const ServerSpec& s, int32_t link) {
  return s.links[static_cast<size_t>(link)].full_duplex ? 2 + 2 * link : 1 + 2 * link;
}

// Nodes from GPU g's node up to the root (the root included).
std::vector<int32_t> chain_up(const ServerSpec& s, int32_t gpu) {
  int32_t node = 0;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    if (s.nodes[i].kind == ServerNodeKind::gpu && s.nodes[i].gpu == gpu) node = static_cast<int32_t>(i);
  }
  std::vector<int32_t> chain;
  for (; node != -1; node = s.nodes[static_cast<size_t>(node)].parent) chain.push_back(node);
  return chain;
}

}  // namespace

ServerRoutes::ServerRoutes(const ServerSpec& s) : gpus_(s.gpu_count) {
  capacity_.push_back(s.host_memory_bytes_per_ns);
  names_.push_back("host memory");
  for (const ServerLink& link : s.links) {
    capacity_.push_back(link.bytes_per_ns);
    capacity_.push_back(link.full_duplex ? link.bytes_per_ns : 0);
    names_.push_back(link.full_duplex ? link.name + " (up)" : link.name);
    names_.push_back(link.full_duplex ? link.name + " (down)" : link.name + " (unused)");
  }
  const auto endpoints = static_cast<size_t>(gpus_ + 1);
  routes_.assign(endpoints * endpoints, {});
  auto at = [&](int32_t from, int32_t to) -> std::vector<int32_t>& {
    return routes_[static_cast<size_t>(from + 1) * endpoints + static_cast<size_t>(to + 1)];
  };
  for (int32_t g = 0; g < gpus_; ++g) {
    const std::vector<int32_t> chain = chain_up(s, g);
    std::vector<int32_t>& up = at(g, kHostEndpoint);
    for (size_t i = 0; i + 1 < chain.size(); ++i) up.push_back(toward_host(s, s.nodes[static_cast<size_t>(chain[i])].uplink));
    up.push_back(0);
    std::vector<int32_t>& down = at(kHostEndpoint, g);
    down.push_back(0);
    for (size_t i = chain.size() - 1; i-- > 0;) down.push_back(away_from_host(s, s.nodes[static_cast<size_t>(chain[i])].uplink));
  }
  for (int32_t a = 0; a < gpus_; ++a) {
    for (int32_t b = 0; b < gpus_; ++b) {
      if (a == b) continue;
      std::vector<int32_t>& r = at(a, b);
      if (!s.nvlink_of_gpu.empty()) {
        r = {toward_host(s, s.nvlink_of_gpu[static_cast<size_t>(a)]),
             away_from_host(s, s.nvlink_of_gpu[static_cast<size_t>(b)])};
        continue;
      }
      const std::vector<int32_t> ca = chain_up(s, a);
      const std::vector<int32_t> cb = chain_up(s, b);
      // The lowest common ancestor: the first node of a's chain that b's chain holds.
      size_t ia = 0;
      while (std::find(cb.begin(), cb.end(), ca[ia]) == cb.end()) ++ia;
      const auto ib = static_cast<size_t>(std::find(cb.begin(), cb.end(), ca[ia]) - cb.begin());
      for (size_t i = 0; i < ia; ++i) r.push_back(toward_host(s, s.nodes[static_cast<size_t>(ca[i])].uplink));
      for (size_t i = ib; i-- > 0;) r.push_back(away_from_host(s, s.nodes[static_cast<size_t>(cb[i])].uplink));
    }
  }
}

const std::vector<int32_t>& ServerRoutes::route(int32_t from, int32_t to) const {
  auto check = [&](int32_t endpoint, std::string_view field) {
    if (endpoint < kHostEndpoint || endpoint >= gpus_) {
      throw Error(fmt::format("transfer field '{}' = {} must be -1 (host) or a GPU index below {}", field,
                              endpoint, gpus_));
    }
  };
  check(from, "from");
  check(to, "to");
  if (from == to) throw Error(fmt::format("transfer from {} to itself", from == kHostEndpoint ? "the host" : fmt::format("GPU {}", from)));
  const auto endpoints = static_cast<size_t>(gpus_ + 1);
  return routes_[static_cast<size_t>(from + 1) * endpoints + static_cast<size_t>(to + 1)];
}

}  // namespace mutwo::costmodel
