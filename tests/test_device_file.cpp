// Device descriptions in TOML: the built-in catalog is read from them, a user's file is accepted by
// path wherever a catalog name is, and a bad file is refused naming the file, line, key and value.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "costmodel/device_catalog.hpp"
#include "costmodel/device_file.hpp"
#include "support/error.hpp"

using namespace mutwo::costmodel;

namespace {

// The A100-40GB's file with one line replaced (or dropped when `replacement` is empty).
std::string a100_with(const std::string& key, const std::string& replacement) {
  std::string out;
  for (const auto& [stem, text] : shipped_device_texts()) {
    if (stem != "a100-40gb") continue;
    std::string rest(text);
    size_t pos = 0;
    while (pos < rest.size()) {
      const size_t end = rest.find('\n', pos);
      const std::string line = rest.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if (line.rfind(key + " ", 0) == 0) {
        if (!replacement.empty()) out += replacement + "\n";
      } else {
        out += line + "\n";
      }
      if (end == std::string::npos) break;
      pos = end + 1;
    }
  }
  return out;
}

std::string refusal(const std::string& text) {
  try {
    parse_device_toml(text, "gpu.toml");
  } catch (const mutwo::FormatError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("the catalog is the device files: the A100-40GB file gives the datasheet's figures") {
  const DeviceSpec a100 = find_device("a100-40gb");
  CHECK(a100.description == "NVIDIA A100-SXM4-40GB");
  CHECK(a100.chip == "GA100");
  CHECK(a100.memory_bytes == int64_t{40} << 30);
  CHECK(a100.sm_count == 108);
  CHECK(a100.boost_clock_mhz == 1410);
  CHECK(a100.l2_bytes == int64_t{40} << 20);
  CHECK(a100.fp32_flops_per_ns == doctest::Approx(19'500.0));
  CHECK(a100.tf32_flops_per_ns == doctest::Approx(156'000.0));
  CHECK(a100.half_flops_per_ns == doctest::Approx(312'000.0));
  CHECK(a100.hbm_bytes_per_ns == doctest::Approx(1'555.0));
  // "PCIe 4.0 x16" -> 25 GB/s pinned each way, 10 us per copy (link_rates.hpp); 4 us per kernel.
  CHECK(a100.h2d_bytes_per_ns == doctest::Approx(25.0));
  CHECK(a100.d2h_bytes_per_ns == doctest::Approx(25.0));
  CHECK(a100.h2d_latency_ns == 10'000);
  CHECK(a100.launch_overhead_ns == kLaunchOverheadNs);
  CHECK(a100.full_duplex);
  CHECK(a100.host.forward_op_ns == default_host_dispatch().forward_op_ns);
}

TEST_CASE("the GPUs issue 32 adds carry their datasheets' dense figures") {
  // L4: 30.3 FP32, 121 FP16 dense (242 sparse), 300 GB/s, 58 SMs, 48 MB L2.
  const DeviceSpec l4 = find_device("l4");
  CHECK(l4.half_flops_per_ns == doctest::Approx(121'000.0));
  CHECK(l4.hbm_bytes_per_ns == doctest::Approx(300.0));
  CHECK(l4.sm_count == 58);
  CHECK(l4.l2_bytes == int64_t{48} << 20);
  // H100 PCIe: 114 SMs at 1,755 MHz, 756.5 dense FP16 (1,513 sparse), PCIe 5.0.
  const DeviceSpec h100p = find_device("h100-pcie");
  CHECK(h100p.sm_count == 114);
  CHECK(h100p.boost_clock_mhz == 1755);
  CHECK(h100p.half_flops_per_ns == doctest::Approx(1'513'000.0 / 2));
  CHECK(h100p.h2d_bytes_per_ns == doctest::Approx(50.0));
  // P4: GP104's 20 SMs of 128 cores (NeuSight's config counts 40 of 64).
  CHECK(find_device("p4").sm_count == 20);
  // GTX 1080 Ti's 2,816 KB of L2 is fractional in MiB.
  CHECK(find_device("gtx1080ti").l2_bytes == 2816 * 1024);
  for (const char* name : {"l4", "a10", "l40s", "rtx3090", "a100-pcie-40gb", "a100-pcie-80gb",
                           "v100-pcie-32gb", "h100-pcie", "b200"}) {
    CAPTURE(name);
    CHECK(builtin_devices().contains(name));
  }
}

TEST_CASE("a device file is accepted by path where a catalog name is") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mutwo_test_device_file";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / "my-a100.toml";
  {
    std::ofstream out(file);
    out << a100_with("name", "name = \"my-a100\"");
  }
  CHECK(is_device_path(file.string()));
  CHECK(is_device_path("gpu.toml"));
  CHECK_FALSE(is_device_path("a100-40gb"));
  const DeviceSpec mine = find_device(file.string());
  CHECK(mine.name == "my-a100");
  CHECK(mine.sm_count == 108);
  CHECK_THROWS_WITH_AS(find_device((dir / "none.toml").string()),
                       doctest::Contains("cannot read device file"), mutwo::Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a bad device file is refused with the file, the line, the key and the value") {
  CHECK(refusal(a100_with("name", "name = \"a100-40gb\"")) == "accepted");
  // A missing key, an unknown key, a value out of range, a wrong type, an unknown link.
  CHECK(refusal(a100_with("sm_count", "")) == "gpu.toml:1: 'sm_count' is missing");
  CHECK(refusal(a100_with("sm_count", "sm_count = 108\nsm_cnt = 1"))
            .rfind("gpu.toml:12: 'sm_cnt' is not a known key here", 0) == 0);
  CHECK(refusal(a100_with("memory_gbps", "memory_gbps = 0")) == "gpu.toml:18: 'memory_gbps' = 0 must be > 0");
  CHECK(refusal(a100_with("tf32_tflops", "tf32_tflops = -1")) ==
        "gpu.toml:15: 'tf32_tflops' = -1 must be >= 0");
  CHECK(refusal(a100_with("sm_count", "sm_count = \"108\"")) ==
        "gpu.toml:11: 'sm_count' must be an integer, not a string");
  CHECK(refusal(a100_with("sm_count", "sm_count = 0")) ==
        "gpu.toml:11: 'sm_count' = 0 must be from 1 to 65536");
  CHECK(refusal(a100_with("host_link", "host_link = \"NVLink\"")) ==
        "gpu.toml:19: 'host_link' = 'NVLink' is not a known link; valid: PCIe 3.0 x16, PCIe 4.0 x16, PCIe "
        "5.0 x16");
  CHECK(refusal(a100_with("name", "name = \"A100\"")) ==
        "gpu.toml:4: 'name' = 'A100' must be lower-case letters, digits, '.', '_' or '-'");
  CHECK(refusal("name = \n").rfind("gpu.toml:1:", 0) == 0);  // not TOML
  // The power limit's figures: a process the table lacks, a board power of 0.
  CHECK(refusal(a100_with("process", "process = \"TSMC 3nm\"")) ==
        "gpu.toml:9: 'process' = 'TSMC 3nm' is not a known process; valid: TSMC 16FF+, TSMC 12FFN, TSMC N7, "
        "TSMC 4N, TSMC 4NP, Samsung 8N");
  CHECK(refusal(a100_with("board_power_w", "board_power_w = 0")) ==
        "gpu.toml:8: 'board_power_w' = 0 must be > 0");
  // Both may be left out: the device is then never power-limited (wave_kernel.hpp).
  const DeviceSpec unlimited = parse_device_toml(a100_with("board_power_w", ""), "gpu.toml");
  CHECK(unlimited.board_power_w == 0);
  CHECK(unlimited.process == "TSMC N7");
  // Figures the spec holds as whole bytes or ns: one that overflows a 64-bit count, or rounds to none, is
  // refused with the file's value (it used to reach the spec wrapped, as memory_bytes =
  // -9223372036854775808).
  CHECK(refusal(a100_with("memory_gib", "memory_gib = 1e15")) ==
        "gpu.toml:10: 'memory_gib' = 1000000000000000 is too large: 1.07e+24 bytes overflow a 64-bit count");
  CHECK(refusal(a100_with("l2_cache_mib", "l2_cache_mib = 1e-12")) ==
        "gpu.toml:13: 'l2_cache_mib' = 1e-12 rounds to 0");
  CHECK(refusal(a100_with("host_link", "host_link = \"PCIe 4.0 x16\"\ncopy_latency_us = 1e30")) ==
        "gpu.toml:20: 'copy_latency_us' = 1e+30 is too large: 1e+33 ns overflow a 64-bit count");
  CHECK(refusal(a100_with("memory_gib", "memory_gib = 1e300")) ==  // 1e300 GiB is inf bytes: named as given
        "gpu.toml:10: 'memory_gib' = 1e+300 is too large: inf bytes overflow a 64-bit count");
  CHECK(parse_device_toml(a100_with("memory_gib", "memory_gib = 8e9"), "gpu.toml").memory_bytes ==
        8'589'934'592'000'000'000);
  // Optional figures: a measured link and launch overhead.
  const DeviceSpec measured = parse_device_toml(
      a100_with("host_link", "host_link = \"PCIe 4.0 x16\"\nh2d_gbps = 22.5\nlaunch_overhead_us = 1.5"),
      "gpu.toml");
  CHECK(measured.h2d_bytes_per_ns == doctest::Approx(22.5));
  CHECK(measured.d2h_bytes_per_ns == doctest::Approx(25.0));
  CHECK(measured.launch_overhead_ns == 1'500);
}

TEST_CASE("a figure no GPU has is refused, per SM and clock, before the model prices it into nonsense") {
  // 1e4 FP32 TFLOPS on the A100's 108 SMs at 1,410 MHz gave a step 500 x slower through the power
  // limit; 1e17 wrapped the event clock. Twice the B200's per-SM rates still passes.
  CHECK(
      refusal(a100_with("fp32_tflops", "fp32_tflops = 1e4")) ==
      "gpu.toml:14: 'fp32_tflops' = 10000 is 6.57e+04 FLOP per SM per clock (sm_count 108 at boost_clock_mhz "
      "1410), outside the [16, 512] a GPU can have");
  CHECK(refusal(a100_with("fp32_tflops", "fp32_tflops = 77")) == "accepted");  // 506 per SM per clock
  CHECK(refusal(a100_with("fp32_tflops", "fp32_tflops = 1e-300")).find("outside the [16, 512]") !=
        std::string::npos);
  CHECK(refusal(a100_with("half_tflops", "half_tflops = 1e300")).find("'half_tflops' = 1e+300 is") !=
        std::string::npos);
  CHECK(refusal(a100_with("memory_gbps", "memory_gbps = 1e300")).find("bytes per SM per clock") !=
        std::string::npos);
  // L2 in KiB written as MiB (40960 for the A100's 40 MiB), or in MiB written as bytes.
  CHECK(refusal(a100_with("l2_cache_mib", "l2_cache_mib = 40960")) ==
        "gpu.toml:13: 'l2_cache_mib' = 40960 is 379 MiB per SM (sm_count 108), outside the [0.015625, 2] a "
        "GPU can have");
  CHECK(refusal(a100_with("l2_cache_mib", "l2_cache_mib = 0.04")).find("0.04 is 0.00037 MiB per SM") !=
        std::string::npos);
  CHECK(refusal(a100_with("l2_cache_mib", "l2_cache_mib = 216")) == "accepted");  // 2 MiB per SM
  CHECK(refusal(a100_with("board_power_w", "board_power_w = 1e-9")) ==
        "gpu.toml:8: 'board_power_w' = 1e-09 W is outside the [5, 5000] W a GPU board draws");
  CHECK(refusal(a100_with("host_link", "host_link = \"PCIe 4.0 x16\"\ncopy_latency_us = 1e15")) ==
        "gpu.toml:20: 'copy_latency_us' = 1e+15 is over the 1000 us a GPU can have");
  CHECK(refusal(a100_with("host_link", "host_link = \"PCIe 4.0 x16\"\nh2d_gbps = 1e300")) ==
        "gpu.toml:20: 'h2d_gbps' = 1e+300 is over the 1000 GB/s a GPU can have");
  for (const auto& file : shipped_device_texts()) {  // not a structured binding: INFO captures it
    INFO(file.first);
    CHECK_NOTHROW(parse_device_toml(file.second, file.first));
  }
}
