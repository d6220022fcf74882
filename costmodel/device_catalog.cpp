#include "costmodel/device_catalog.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/device_file.hpp"
#include "costmodel/link_rates.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

// Host dispatch under PyTorch eager, measured on a real training trace (tests/fixtures/kineto: HTA's
// V100 trace, ProfilerStep#105, 95.7 ms; computed with /usr/bin/python3 over its events):
// - forward: the main thread's 400 top-level aten ops have a median CPU span of 46.7 us and a
//   median gap to the next op (Python) of 8.5 us: 55.2 us per op;
// - backward: the autograd thread's 664 top-level ops, median span 10.9 us + gap 3.2 us: 14.1 us;
// - a swap's cudaMemcpyAsync: median 4.6 us over the trace's 1,600 calls;
// - a kernel launch alone (cudaLaunchKernel): median 5.2 us over its 4,350 calls.
// A tensor op issued from a Python loop: HTA's other V100-SXM2-32GB trace (tests/fixtures/kineto/
// v100_nccl_training.json.gz), whose five Optimizer.step#SGD.step spans each issue 404 aten::add_
// from torch.optim's per-parameter loop: median 27 us from one add_ to the next over the 2,015
// intervals (span 21 us, cudaLaunchKernel 6 us: the launch queue never blocked them).
// CUDA-graph replay: 0.5 us per kernel node (NVIDIA, "Getting Started with CUDA Graphs", 2019:
// 3.4 us per 2.9 us kernel replayed from a graph). The launch queue: 1,024 pending launches (the
// CUDA driver's default queue; a host that runs further ahead blocks in cudaLaunchKernel).
HostDispatch default_host_dispatch() {
  HostDispatch h;
  h.forward_op_ns = 55'200;
  h.backward_op_ns = 14'100;
  h.copy_issue_ns = 4'600;
  h.launch_ns = 5'200;
  h.python_op_ns = 27'000;
  h.graph_kernel_ns = 500;
  h.launch_queue_depth = 1024;
  h.source = "PyTorch eager, measured on HTA's V100 training trace (median per op)";
  return h;
}

// The host's optimizer update, fitted (scripts/fit-host-optimizer.py, relative least squares) on
// the adam_step ops of `mutwo profile --device cpu` of bert-base on the development host (an AMD
// EPYC VM slice, 2 threads, LibTorch 1.13.1, 2026-11-24; data: costmodel/measured/host_adam_cpu.csv).
// Checked on data not fitted: gpt2 +4.9 %, resnet18 -4.1 % of the measured optimizer time. No
// catalog GPU's own host was measured: a server host with more cores and memory channels updates
// faster, so the figure is a floor; `--host-optimizer-gbps` sets a measured host's rate.
HostOptimizer default_host_optimizer() {
  HostOptimizer h;
  h.per_op_ns = 13'920;
  h.bytes_per_ns = 24.759;
  h.large_bytes_per_ns = 6.378;
  h.large_from_bytes = int64_t{64} << 20;
  h.source =
      "LibTorch CPU Adam, measured on the development host (2 threads; costmodel/measured/host_adam_cpu.csv)";
  return h;
}

namespace {

// match_device's rules, in order: a product name (upper-cased) holding `model` and every non-empty
// `variant` is the catalog device `device`. Runtime names as torch.cuda.get_device_name() reports
// them: "NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe",
// "NVIDIA A100-SXM4-80GB", "Tesla V100-PCIE-32GB", "Tesla V100-SXM2-16GB", "NVIDIA L40S", ...
struct ProductRule {
  std::string_view model;
  std::array<std::string_view, 2> variants;
  std::string_view device;
};
constexpr std::array<ProductRule, 21> kProductRules{{
    {"H100", {"PCIE", ""}, "h100-pcie"},
    {"H100", {"", ""}, "h100-sxm-80gb"},
    {"H200", {"", ""}, "h200"},
    {"B200", {"", ""}, "b200"},
    {"A100", {"PCIE", "80GB"}, "a100-pcie-80gb"},
    {"A100", {"PCIE", ""}, "a100-pcie-40gb"},
    {"A100", {"80GB", ""}, "a100-80gb"},
    {"A100", {"", ""}, "a100-40gb"},
    {"V100", {"PCIE", "32GB"}, "v100-pcie-32gb"},
    {"V100", {"32GB", ""}, "v100-32gb"},
    {"V100", {"", ""}, "v100-16gb"},
    {"L40S", {"", ""}, "l40s"},
    {" L4 ", {"", ""}, "l4"},
    {" A10 ", {"", ""}, "a10"},
    {"4090", {"", ""}, "rtx4090"},
    {"3090", {"", ""}, "rtx3090"},
    {"P100", {"", ""}, "p100-pcie-16gb"},
    {"1080 TI", {"", ""}, "gtx1080ti"},
    {"TITAN XP", {"", ""}, "titan-xp"},
    {"TESLA T4", {"", ""}, "t4"},
    {"TESLA P4", {"", ""}, "p4"},
}};

bool positive_finite(double value) {
  return std::isfinite(value) && value > 0;
}

}  // namespace

void validate_device(const DeviceSpec& d) {
  auto fail = [&](std::string_view field, auto value, std::string_view rule) {
    throw Error(fmt::format("device '{}': field '{}' = {} must be {}", d.name, field, value, rule));
  };
  if (d.name.empty()) throw Error("device with an empty name");
  if (d.memory_bytes <= 0) fail("memory_bytes", d.memory_bytes, "> 0");
  if (!positive_finite(d.fp32_flops_per_ns)) fail("fp32_flops_per_ns", d.fp32_flops_per_ns, "> 0");
  if (!std::isfinite(d.tf32_flops_per_ns) || d.tf32_flops_per_ns < 0) {
    fail("tf32_flops_per_ns", d.tf32_flops_per_ns, ">= 0 (0 when the GPU has no TF32)");
  }
  if (!positive_finite(d.half_flops_per_ns)) fail("half_flops_per_ns", d.half_flops_per_ns, "> 0");
  if (!positive_finite(d.fp64_flops_per_ns)) fail("fp64_flops_per_ns", d.fp64_flops_per_ns, "> 0");
  if (!positive_finite(d.hbm_bytes_per_ns)) fail("hbm_bytes_per_ns", d.hbm_bytes_per_ns, "> 0");
  if (d.sm_count <= 0) fail("sm_count", d.sm_count, "> 0");
  if (d.boost_clock_mhz <= 0) fail("boost_clock_mhz", d.boost_clock_mhz, "> 0");
  if (d.l2_bytes <= 0) fail("l2_bytes", d.l2_bytes, "> 0");
  if (!positive_finite(d.h2d_bytes_per_ns)) fail("h2d_bytes_per_ns", d.h2d_bytes_per_ns, "> 0");
  if (!positive_finite(d.d2h_bytes_per_ns)) fail("d2h_bytes_per_ns", d.d2h_bytes_per_ns, "> 0");
  if (d.h2d_latency_ns < 0) fail("h2d_latency_ns", d.h2d_latency_ns, ">= 0");
  if (d.d2h_latency_ns < 0) fail("d2h_latency_ns", d.d2h_latency_ns, ">= 0");
  if (d.launch_overhead_ns < 0) fail("launch_overhead_ns", d.launch_overhead_ns, ">= 0");
  if (d.host.forward_op_ns < 0) fail("host.forward_op_ns", d.host.forward_op_ns, ">= 0");
  if (d.host.backward_op_ns < 0) fail("host.backward_op_ns", d.host.backward_op_ns, ">= 0");
  if (d.host.copy_issue_ns < 0) fail("host.copy_issue_ns", d.host.copy_issue_ns, ">= 0");
  if (d.host.launch_ns < 0) fail("host.launch_ns", d.host.launch_ns, ">= 0");
  if (d.host.python_op_ns < 0) fail("host.python_op_ns", d.host.python_op_ns, ">= 0");
  if (d.host.graph_kernel_ns < 0) fail("host.graph_kernel_ns", d.host.graph_kernel_ns, ">= 0");
  if (d.host.launch_queue_depth < 0) fail("host.launch_queue_depth", d.host.launch_queue_depth, ">= 0");
  if (d.host_optimizer.per_op_ns < 0) fail("host_optimizer.per_op_ns", d.host_optimizer.per_op_ns, ">= 0");
  if (!positive_finite(d.host_optimizer.bytes_per_ns)) {
    fail("host_optimizer.bytes_per_ns", d.host_optimizer.bytes_per_ns, "> 0");
  }
  if (!positive_finite(d.host_optimizer.large_bytes_per_ns)) {
    fail("host_optimizer.large_bytes_per_ns", d.host_optimizer.large_bytes_per_ns, "> 0");
  }
  if (d.host_optimizer.large_from_bytes < 0) {
    fail("host_optimizer.large_from_bytes", d.host_optimizer.large_from_bytes, ">= 0");
  }
}

DeviceCatalog::DeviceCatalog() : Registry("device", validate_device) {}

void register_builtin_devices(DeviceCatalog& catalog) {
  for (const auto& [stem, text] : shipped_device_texts()) {
    catalog.add(parse_device_toml(text, fmt::format("<builtin>/{}.toml", stem)));
  }
}

const DeviceCatalog& builtin_devices() {
  static const DeviceCatalog catalog = [] {
    DeviceCatalog c;
    register_builtin_devices(c);
    return c;
  }();
  return catalog;
}

bool same_chip(const DeviceSpec& a, const DeviceSpec& b) {
  return (a.chip.empty() || b.chip.empty() || a.chip == b.chip) && a.sm_count == b.sm_count &&
         a.fp32_flops_per_ns == b.fp32_flops_per_ns && a.tf32_flops_per_ns == b.tf32_flops_per_ns &&
         a.half_flops_per_ns == b.half_flops_per_ns && a.hbm_bytes_per_ns == b.hbm_bytes_per_ns;
}

bool same_compute_chip(const DeviceSpec& a, const DeviceSpec& b) {
  return !a.chip.empty() && a.chip == b.chip && a.sm_count == b.sm_count &&
         a.boost_clock_mhz == b.boost_clock_mhz && a.l2_bytes == b.l2_bytes &&
         a.board_power_w == b.board_power_w && a.fp32_flops_per_ns == b.fp32_flops_per_ns &&
         a.tf32_flops_per_ns == b.tf32_flops_per_ns && a.half_flops_per_ns == b.half_flops_per_ns;
}

DeviceSpec find_device(std::string_view name) {
  if (is_device_path(name)) return read_device_file(std::string(name));
  return builtin_devices().find(name);
}

std::optional<std::string> match_device(std::string_view product_name) {
  std::string upper = fmt::format(" {} ", product_name);  // " L4 " matches "NVIDIA L4", not "NVIDIA L40"
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  const auto holds = [&upper](std::string_view part) {
    return part.empty() || upper.find(part) != std::string::npos;
  };
  for (const ProductRule& rule : kProductRules) {
    if (holds(rule.model) && holds(rule.variants[0]) && holds(rule.variants[1]))
      return std::string(rule.device);
  }
  return std::nullopt;
}

}  // namespace mutwo::costmodel
