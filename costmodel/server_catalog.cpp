#include "costmodel/server_catalog.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/link_rates.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

// Builds the PCIe tree top-down: host memory first, then switches and GPUs under their parents.
class TreeBuilder {
 public:
  explicit TreeBuilder(ServerSpec& s) : s_(s) {
    s_.nodes.push_back(ServerNode{"host", ServerNodeKind::host_memory, -1, -1, -1});
  }
  // A node under `parent`, joined by a full-duplex link of `gbps` per direction; returns its index.
  int32_t add(std::string name, ServerNodeKind kind, int32_t parent, double gbps) {
    const auto link = static_cast<int32_t>(s_.links.size());
    s_.links.push_back(ServerLink{name + "-" + s_.nodes[static_cast<size_t>(parent)].name, gbps, true});
    const int32_t gpu = kind == ServerNodeKind::gpu ? s_.gpu_count++ : -1;
    s_.nodes.push_back(ServerNode{std::move(name), kind, parent, link, gpu});
    return static_cast<int32_t>(s_.nodes.size() - 1);
  }
  // `switches` PCIe switches on the root, two GPUs each, every link at `gbps`.
  void switches_of_two(int switches, double gbps) {
    for (int sw = 0; sw < switches; ++sw) {
      const int32_t node = add(fmt::format("switch{}", sw), ServerNodeKind::pcie_switch, 0, gbps);
      add_gpu(node, gbps);
      add_gpu(node, gbps);
    }
  }
  int32_t add_gpu(int32_t parent, double gbps) {
    return add(fmt::format("gpu{}", s_.gpu_count), ServerNodeKind::gpu, parent, gbps);
  }
  // Every GPU's port into a switched NVLink fabric (NVSwitch), `gbps` per direction.
  void nvlink_fabric(double gbps) {
    for (int32_t g = 0; g < s_.gpu_count; ++g) {
      s_.nvlink_of_gpu.push_back(static_cast<int32_t>(s_.links.size()));
      s_.links.push_back(ServerLink{fmt::format("nvlink-gpu{}", g), gbps, true});
    }
  }

 private:
  ServerSpec& s_;
};

// Harmony's setting (Li et al., HotOS 2021, and its artifact github.com/msr-fiddle/harmony, whose
// runs bind 4 GTX 1080 Ti to one socket): four GPUs on PCIe 3.0 x16 each, behind one PCIe switch
// whose single x16 uplink reaches the CPU, so every GPU's host swaps squeeze through one root link,
// the bottleneck Harmony points at (the layout of single-root 4-GPU servers such as Supermicro's
// SYS-4029GP-TRT3: "only one PCIe x16 Gen 3 link between the CPU and the GPUs"). Peer copies stay
// inside the switch. Host memory: one socket of 4 DDR4-2400 channels, 4 x 19.2 = 76.8 GB/s (an
// 18-core Broadwell Xeon's; the artifact's NUMA map shows 18 cores per socket).
ServerSpec harmony_1080ti() {
  ServerSpec s;
  s.name = "4x-gtx1080ti";
  s.description = "4x GeForce GTX 1080 Ti 11GB, PCIe 3.0 x16 behind one switch, one x16 root link";
  s.gpu = "gtx1080ti";
  TreeBuilder t(s);
  const int32_t sw = t.add("switch0", ServerNodeKind::pcie_switch, 0, kPcie3PinnedGBps);
  for (int i = 0; i < 4; ++i) t.add_gpu(sw, kPcie3PinnedGBps);
  s.host_memory_bytes_per_ns = 76.8;
  s.copy_latency_ns = kCopyLatencyNs;
  s.source = "Harmony (HotOS 2021) testbed; single-root PCIe 3.0 layout; DDR4-2400 x4";
  return s;
}

// A common 8-GPU PCIe 4.0 box: A100 40GB PCIe cards (same peaks and HBM2 bandwidth as the SXM4
// 40GB part, NVIDIA A100 datasheet; catalog entry a100-40gb), two per PCIe 4.0 switch, each switch
// on its own x16 root port (4 switches, 2 per socket), no NVLink: peer copies between switches cross
// the root complex (both sockets' root complexes are one node here: the inter-socket link is not
// modelled). Host memory: 2 sockets x 8 DDR4-3200 channels x 25.6 GB/s = 409.6 GB/s (AMD EPYC 7002).
ServerSpec a100_pcie_8() {
  ServerSpec s;
  s.name = "8x-a100-pcie";
  s.description = "8x A100 40GB PCIe, 2 per PCIe 4.0 switch, 4 switches on x16 root ports";
  s.gpu = "a100-40gb";
  TreeBuilder t(s);
  t.switches_of_two(4, kPcie4PinnedGBps);
  s.host_memory_bytes_per_ns = 409.6;
  s.copy_latency_ns = kCopyLatencyNs;
  s.source = "A100 PCIe datasheet; PCIe 4.0 switch tree, 2 GPUs per switch; DDR4-3200 x16";
  return s;
}

// NVIDIA DGX A100 (DGX A100 User Guide, "Hardware Overview"): 8 A100-SXM4-40GB on an HGX A100 board
// with six NVSwitches, 600 GB/s NVLink per GPU both ways (300 per direction); four PCIe 4.0 switches,
// two GPUs (and two NICs) each, each switch on an x16 root port of the two AMD EPYC 7742 CPUs; 8 DDR4-3200
// channels per CPU: 2 x 204.8 = 409.6 GB/s.
ServerSpec dgx_a100() {
  ServerSpec s;
  s.name = "dgx-a100";
  s.description = "NVIDIA DGX A100 (8x A100-SXM4-40GB, NVSwitch, 4 PCIe 4.0 switches)";
  s.gpu = "a100-40gb";
  TreeBuilder t(s);
  t.switches_of_two(4, kPcie4PinnedGBps);
  t.nvlink_fabric(kNvlink3CopyGBps);
  s.host_memory_bytes_per_ns = 409.6;
  s.copy_latency_ns = kCopyLatencyNs;
  s.source = "DGX A100 user guide; HGX A100 NVLink 3 (600 GB/s bidirectional per GPU)";
  return s;
}

// An 8x H100 SXM node as NVIDIA's DGX H100 (DGX BasePOD reference architecture, "core components"):
// four NVSwitches, NVLink 4 at 900 GB/s per GPU both ways (450 per direction); PCIe 5.0 x16 per GPU to
// the two Intel Xeon Platinum 8480C (modelled as one x16 root link per GPU: DGX H100 routes each GPU
// through a ConnectX-7 rather than a shared GPU switch); 8 DDR5-4800 channels per CPU: 2 x 307.2 =
// 614.4 GB/s.
ServerSpec h100_sxm_8() {
  ServerSpec s;
  s.name = "8x-h100-sxm";
  s.description = "8x H100-SXM5-80GB (DGX H100 layout: NVSwitch, PCIe 5.0 x16 per GPU)";
  s.gpu = "h100-sxm-80gb";
  TreeBuilder t(s);
  for (int g = 0; g < 8; ++g) t.add_gpu(0, kPcie5PinnedGBps);
  t.nvlink_fabric(kNvlink4CopyGBps);
  s.host_memory_bytes_per_ns = 614.4;
  s.copy_latency_ns = kCopyLatencyNs;
  s.source = "DGX H100 reference architecture; NVLink 4 (900 GB/s bidirectional per GPU)";
  return s;
}

bool positive_finite(double value) {
  return std::isfinite(value) && value > 0;
}

}  // namespace

void validate_server(const ServerSpec& s) {
  auto fail = [&](const std::string& field, const std::string& value, std::string_view rule) {
    throw Error(fmt::format("server '{}': field '{}' = {} must be {}", s.name, field, value, rule));
  };
  if (s.name.empty()) throw Error("server with an empty name");
  if (!builtin_devices().contains(s.gpu)) fail("gpu", fmt::format("'{}'", s.gpu), "a catalog device");
  if (s.gpu_count < 1) fail("gpu_count", std::to_string(s.gpu_count), ">= 1");
  if (!positive_finite(s.host_memory_bytes_per_ns)) {
    fail("host_memory_bytes_per_ns", fmt::format("{}", s.host_memory_bytes_per_ns), "> 0");
  }
  if (s.copy_latency_ns < 0) fail("copy_latency_ns", std::to_string(s.copy_latency_ns), ">= 0");
  for (size_t i = 0; i < s.links.size(); ++i) {
    if (!positive_finite(s.links[i].bytes_per_ns)) {
      fail(fmt::format("links[{}].bytes_per_ns", i), fmt::format("{}", s.links[i].bytes_per_ns), "> 0");
    }
  }
  if (s.nodes.empty() || s.nodes[0].kind != ServerNodeKind::host_memory || s.nodes[0].parent != -1) {
    fail("nodes[0]", "not host memory", "the host memory root");
  }
  std::vector<int> seen(static_cast<size_t>(s.gpu_count), 0);
  for (size_t i = 1; i < s.nodes.size(); ++i) {
    const ServerNode& n = s.nodes[i];
    if (n.parent < 0 || static_cast<size_t>(n.parent) >= i) {
      fail(fmt::format("nodes[{}].parent", i), std::to_string(n.parent), "an earlier node");
    }
    if (s.nodes[static_cast<size_t>(n.parent)].kind == ServerNodeKind::gpu) {
      fail(fmt::format("nodes[{}].parent", i), std::to_string(n.parent), "a switch, root complex or host");
    }
    if (n.uplink < 0 || static_cast<size_t>(n.uplink) >= s.links.size()) {
      fail(fmt::format("nodes[{}].uplink", i), std::to_string(n.uplink), "a link index");
    }
    if (n.kind == ServerNodeKind::gpu) {
      if (n.gpu < 0 || n.gpu >= s.gpu_count) fail(fmt::format("nodes[{}].gpu", i), std::to_string(n.gpu), "a GPU index");
      if (seen[static_cast<size_t>(n.gpu)]++ != 0) fail(fmt::format("nodes[{}].gpu", i), std::to_string(n.gpu), "unique");
    }
  }
  for (int32_t g = 0; g < s.gpu_count; ++g) {
    if (seen[static_cast<size_t>(g)] == 0) fail("nodes", fmt::format("no node for GPU {}", g), "one node per GPU");
  }
  if (!s.nvlink_of_gpu.empty()) {
    if (s.nvlink_of_gpu.size() != static_cast<size_t>(s.gpu_count)) {
      fail("nvlink_of_gpu", std::to_string(s.nvlink_of_gpu.size()), "one link per GPU or none");
    }
    for (size_t g = 0; g < s.nvlink_of_gpu.size(); ++g) {
      const int32_t link = s.nvlink_of_gpu[g];
      if (link < 0 || static_cast<size_t>(link) >= s.links.size()) {
        fail(fmt::format("nvlink_of_gpu[{}]", g), std::to_string(link), "a link index");
      }
    }
  }
}

ServerCatalog::ServerCatalog() : Registry("server", validate_server) {}

void register_builtin_servers(ServerCatalog& catalog) {
  catalog.add(harmony_1080ti());
  catalog.add(a100_pcie_8());
  catalog.add(dgx_a100());
  catalog.add(h100_sxm_8());
}

const ServerCatalog& builtin_servers() {
  static const ServerCatalog catalog = [] {
    ServerCatalog c;
    register_builtin_servers(c);
    return c;
  }();
  return catalog;
}

ServerSpec find_server(std::string_view name) {
  return builtin_servers().find(name);
}

}  // namespace mutwo::costmodel
