#include "costmodel/device_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/link_rates.hpp"
#include "costmodel/process_node.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"
#include "support/toml_reader.hpp"

namespace mutwo::costmodel {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

struct HostLink {
  std::string_view name;
  double pinned_gbps;
};
constexpr HostLink kHostLinks[] = {
    {"PCIe 3.0 x16", kPcie3PinnedGBps},
    {"PCIe 4.0 x16", kPcie4PinnedGBps},
    {"PCIe 5.0 x16", kPcie5PinnedGBps},
};

bool valid_device_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  });
}

class DeviceReader : public support::TomlReader {
 public:
  using TomlReader::TomlReader;

  // A number > 0 (or >= 0 when zero_ok) under `key`, which must be present.
  double figure(const toml::table& t, std::string_view key, bool zero_ok = false) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) fail(&t, key, "is missing");
    const double v = number(*n, std::string(key));
    if (zero_ok ? v < 0 : v <= 0) fail(n, key, fmt::format("= {} must be {}", v, zero_ok ? ">= 0" : "> 0"));
    return v;
  }
  std::optional<double> optional_figure(const toml::table& t, std::string_view key, bool zero_ok) const {
    if (t.get(key) == nullptr) return std::nullopt;
    return figure(t, key, zero_ok);
  }
  // figure() times `scale` (GiB -> bytes, us -> ns), rounded to the whole number the spec holds: refused
  // when that overflows int64 (1e15 GiB) or, unless zero_ok, rounds to 0 (1e-12 MiB of L2), naming the
  // file's value rather than the spec's wrapped one.
  int64_t scaled(const toml::table& t, std::string_view key, double scale, std::string_view unit,
                 bool zero_ok = false) const {
    const double given = figure(t, key, zero_ok);
    const double v = given * scale;  // inf past 1.8e308: the file's value is named, not inf / scale
    constexpr double kMax = 9.0e18;  // under int64's 9.22e18
    if (v > kMax) {
      fail(t.get(key), key,
           fmt::format("= {} is too large: {:.3g} {} overflow a 64-bit count", given, v, unit));
    }
    const auto whole = static_cast<int64_t>(std::llround(v));
    if (!zero_ok && whole == 0) fail(t.get(key), key, fmt::format("= {} rounds to 0", given));
    return whole;
  }
  int64_t optional_scaled(const toml::table& t, std::string_view key, double scale, std::string_view unit,
                          int64_t fallback) const {
    return t.get(key) == nullptr ? fallback : scaled(t, key, scale, unit, /*zero_ok=*/true);
  }
};

// A figure no GPU has is a typo (a TFLOPS in FLOPS), and the model prices it into nonsense: 1e4
// FP32 TFLOPS on an A100's 108 SMs gave a step 500 x slower through the power limit, 1e17 wrapped the
// clock. Peaks and bandwidth are bounded per SM per clock at twice the most a GPU reaches (the B200:
// 128 FP32 lanes x 2 per SM per clock, its 2,250 dense FP16 tensor TFLOPS at 148 SMs x 1.98 GHz =
// 7,678; NVIDIA Blackwell datasheet, costmodel/devices/b200.toml), and from below at a fraction of
// the least (the P4's FP16 at 1/64 of FP32: 4 per SM per clock; its 192 GB/s: 9 bytes).
void check_plausible(const DeviceReader& r, const toml::table& root, const DeviceSpec& d) {
  const double sm_clocks_per_ns = static_cast<double>(d.sm_count) * d.boost_clock_mhz / 1000.0;
  const auto per_sm_clock = [&](std::string_view key, double per_ns, double low, double high,
                                std::string_view unit) {
    if (per_ns == 0) return;  // tf32_tflops = 0: no TF32
    const double v = per_ns / sm_clocks_per_ns;
    if (v < low || v > high) {
      r.fail(
          root.get(key), key,
          fmt::format("= {:g} is {:.3g} {} per SM per clock (sm_count {} at boost_clock_mhz {}), outside the "
                      "[{:g}, {:g}] a GPU can have",
                      root.get(key)->value<double>().value_or(0), v, unit, d.sm_count, d.boost_clock_mhz, low,
                      high));
    }
  };
  per_sm_clock("fp32_tflops", d.fp32_flops_per_ns, 16, 512, "FLOP");
  per_sm_clock("tf32_tflops", d.tf32_flops_per_ns, 1, 16384, "FLOP");
  per_sm_clock("half_tflops", d.half_flops_per_ns, 1, 16384, "FLOP");
  per_sm_clock("fp64_tflops", d.fp64_flops_per_ns, 0.25, 16384, "FLOP");
  per_sm_clock("memory_gbps", d.hbm_bytes_per_ns, 0.5, 256, "bytes");
  // L2 per SM: 0.07 MiB (the P100, V100 and RTX 3090) to 0.83 (the L4) in the catalog's datasheets
  // (costmodel/devices/*.toml). [1/64, 2] MiB holds them and refuses a size in KiB written as MiB
  // (the A100's 40 MiB as 40960), with which every working set would fit and stream at the L2's rate.
  const double l2_mib_per_sm = static_cast<double>(d.l2_bytes) / kMiB / d.sm_count;
  if (l2_mib_per_sm < 1.0 / 64 || l2_mib_per_sm > 2) {
    r.fail(root.get("l2_cache_mib"), "l2_cache_mib",
           fmt::format("= {:g} is {:.3g} MiB per SM (sm_count {}), outside the [{:g}, 2] a GPU can have",
                       root.get("l2_cache_mib")->value<double>().value_or(0), l2_mib_per_sm, d.sm_count,
                       1.0 / 64));
  }
  // The host side: PCIe 5.0 x16 moves 64 GB/s a way and NVLink-C2C 450 (Grace Hopper); a copy starts
  // and a kernel launches in microseconds (2-10, docs/FIDELITY.md's measurements).
  const auto at_most = [&](std::string_view key, double value, double high, std::string_view unit) {
    if (root.get(key) != nullptr && value > high) {
      r.fail(root.get(key), key, fmt::format("= {:g} is over the {:g} {} a GPU can have", value, high, unit));
    }
  };
  at_most("h2d_gbps", d.h2d_bytes_per_ns, 1000, "GB/s");
  at_most("d2h_gbps", d.d2h_bytes_per_ns, 1000, "GB/s");
  at_most("copy_latency_us", d.h2d_latency_ns / 1000.0, 1000, "us");
  at_most("launch_overhead_us", d.launch_overhead_ns / 1000.0, 1000, "us");
  // Boards draw 50 W (the P4's low setting) to 1,000 W (the B200): 5 to 5,000 W is a board.
  if (d.board_power_w != 0 && (d.board_power_w < 5 || d.board_power_w > 5000)) {
    r.fail(root.get("board_power_w"), "board_power_w",
           fmt::format("= {:g} W is outside the [5, 5000] W a GPU board draws", d.board_power_w));
  }
}

}  // namespace

bool is_device_path(std::string_view gpu) {
  return gpu.find('/') != std::string_view::npos || (gpu.size() > 5 && gpu.substr(gpu.size() - 5) == ".toml");
}

DeviceSpec parse_device_toml(std::string_view text, std::string_view source) {
  const toml::table root = support::parse_toml(text, source);
  const DeviceReader r(source);
  // clang-format off
  r.reject_unknown(root, "",
                   {"name", "description", "chip", "board_power_w", "process", "memory_gib", "sm_count",
                    "boost_clock_mhz", "l2_cache_mib", "fp32_tflops", "tf32_tflops", "half_tflops",
                    "fp64_tflops", "memory_gbps", "host_link", "h2d_gbps", "d2h_gbps", "copy_latency_us",
                    "launch_overhead_us", "half_duplex"});
  // clang-format on
  DeviceSpec d;
  d.name = r.string(root, "", "name");
  if (!valid_device_name(d.name)) {
    r.fail(root.get("name"), "name",
           fmt::format("= '{}' must be lower-case letters, digits, '.', '_' or '-'", d.name));
  }
  d.description = r.string(root, "", "description");
  d.chip = r.optional_string(root, "", "chip").value_or("");
  d.memory_bytes = r.scaled(root, "memory_gib", kGiB, "bytes");
  const auto whole = [&](std::string_view key, int64_t max) {
    const toml::node* n = root.get(key);
    if (n == nullptr) r.fail(&root, key, "is missing");
    return r.integer(*n, std::string(key), 1, max);
  };
  d.sm_count = static_cast<int32_t>(whole("sm_count", 1 << 16));
  d.boost_clock_mhz = static_cast<int32_t>(whole("boost_clock_mhz", 100'000));
  d.l2_bytes = r.scaled(root, "l2_cache_mib", kMiB, "bytes");
  d.board_power_w = r.optional_figure(root, "board_power_w", false).value_or(0);
  d.process = r.optional_string(root, "", "process").value_or("");
  if (!d.process.empty() && find_process_node(d.process) == nullptr) {
    r.fail(root.get("process"), "process",
           fmt::format("= '{}' is not a known process; valid: {}", d.process, process_node_names()));
  }
  d.fp32_flops_per_ns = tflops_to_flops_per_ns(r.figure(root, "fp32_tflops"));
  d.tf32_flops_per_ns = tflops_to_flops_per_ns(r.figure(root, "tf32_tflops", /*zero_ok=*/true));
  d.half_flops_per_ns = tflops_to_flops_per_ns(r.figure(root, "half_tflops"));
  d.fp64_flops_per_ns = tflops_to_flops_per_ns(r.figure(root, "fp64_tflops"));
  d.hbm_bytes_per_ns = gbps_to_bytes_per_ns(r.figure(root, "memory_gbps"));
  d.host_link = r.string(root, "", "host_link");
  const HostLink* link = nullptr;
  for (const HostLink& l : kHostLinks) {
    if (l.name == d.host_link) link = &l;
  }
  if (link == nullptr) {
    r.fail(root.get("host_link"), "host_link",
           fmt::format("= '{}' is not a known link; valid: PCIe 3.0 x16, PCIe 4.0 x16, PCIe 5.0 x16",
                       d.host_link));
  }
  d.h2d_bytes_per_ns =
      gbps_to_bytes_per_ns(r.optional_figure(root, "h2d_gbps", false).value_or(link->pinned_gbps));
  d.d2h_bytes_per_ns =
      gbps_to_bytes_per_ns(r.optional_figure(root, "d2h_gbps", false).value_or(link->pinned_gbps));
  const int64_t latency_ns = r.optional_scaled(root, "copy_latency_us", 1000.0, "ns", kCopyLatencyNs);
  d.h2d_latency_ns = latency_ns;
  d.d2h_latency_ns = latency_ns;
  d.launch_overhead_ns = r.optional_scaled(root, "launch_overhead_us", 1000.0, "ns", kLaunchOverheadNs);
  d.full_duplex = true;  // every GPU has separate H2D and D2H copy engines
  if (const toml::node* h = root.get("half_duplex")) {
    const auto* b = h->as_boolean();
    if (b == nullptr) r.fail(h, "half_duplex", fmt::format("must be a boolean, not {}", r.type_name(*h)));
    d.full_duplex = !b->get();
  }
  check_plausible(r, root, d);
  d.host = default_host_dispatch();
  d.host_optimizer = default_host_optimizer();
  try {
    validate_device(d);
  } catch (const Error& e) {
    throw FormatError(fmt::format("{}: {}", source, e.what()));
  }
  return d;
}

DeviceSpec read_device_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw Error(fmt::format("cannot read device file '{}': {}", path,
                            std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  }
  return parse_device_toml(support::read_file_bytes(path, "device file"), path);
}

}  // namespace mutwo::costmodel
