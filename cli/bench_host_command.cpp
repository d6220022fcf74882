// `mutwo bench-host`: times the host link (pinned host <-> device copies, each way alone and both at
// once, 4 KiB to 256 MiB) and the host's dispatch of a small ATen op, fits latency and bandwidth per
// way (costmodel/link_fit.hpp), prints them beside the matched catalog device's figures and writes
// everything as JSON with the date and the method: the measurement that puts a GPU's link and
// launch figures into the device catalog (issue 22, item 3), or into a run as --h2d-gbps/--d2h-gbps.
// The timing is the executor's (exec/bench_host.cpp); this file parses flags, fits and prints.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/link_fit.hpp"
#include "experiments/executor_loader.hpp"
#include "ir/bench_host.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::cli {
namespace {

struct BenchHostFlags {
  std::string device;  // empty: the executor's default
  std::vector<int64_t> sizes;
  int32_t warmup = 3;
  int32_t iters = 10;
  std::string output;
};

constexpr const char* kMethod =
    "mutwo bench-host: each size copied between a device buffer and a pinned host buffer, h2d and d2h "
    "on their own copy streams and both at once (released by one event), CUDA events from the start to "
    "the last end, median of the timed copies after warm-up; latency + bytes / bandwidth fitted per way "
    "by relative non-negative least squares; dispatch: a 1-element in-place add issued back to back, "
    "host steady_clock per call and the device's interval per kernel, medians";

nlohmann::json way_json(const costmodel::LinkWayFit& f) {
  return {{"gbps", f.gbps}, {"latency_ns", f.latency_ns}, {"mean_abs_rel_error", f.mean_abs_rel_error},
          {"samples", f.samples}};
}

void run_bench_host(const BenchHostFlags& flags) {
  support::check_output_paths({{"--output", flags.output}});  // before the link is timed
  const std::unique_ptr<ir::Executor> executor = experiments::load_executor("'mutwo bench-host'");
  const std::string device_name = flags.device.empty() ? executor->default_device() : flags.device;
  const ir::ExecDevice device = executor->open_device(device_name);
  ir::BenchHostOptions options;
  options.device = device_name;
  options.sizes_bytes = flags.sizes;
  options.warmup_iterations = flags.warmup;
  options.timed_iterations = flags.iters;
  ir::validate_bench_host(options);
  std::cout << fmt::format("timing the host link of {} ({}), {} warm-up + {} timed copies each, the median kept\n",
                           device.product, device_name, options.warmup_iterations, options.timed_iterations)
            << std::flush;
  const ir::HostBench bench = executor->bench_host(options);
  const costmodel::LinkFit fit = costmodel::fit_link(bench.copies);

  Table t({{"size", Align::right}, {"way", Align::left}, {"median", Align::right}, {"GB/s", Align::right}});
  for (const ir::LinkTiming& c : bench.copies) {
    const double moved = static_cast<double>(c.bytes) * (c.way == ir::CopyWay::both ? 2.0 : 1.0);
    t.add_row({human_bytes(c.bytes), std::string(ir::copy_way_name(c.way)), human_duration(c.time_ns),
               fmt::format("{:.2f}", moved / static_cast<double>(c.time_ns))});
  }
  std::cout << t.render();
  std::cout << fmt::format(
      "fit: h2d {:.2f} GB/s + {} latency (mean error {:.1f} %), d2h {:.2f} GB/s + {} (mean error {:.1f} %); "
      "both ways at once {:.2f}x one after another ({})\n",
      fit.h2d.gbps, human_duration(fit.h2d.latency_ns), 100 * fit.h2d.mean_abs_rel_error, fit.d2h.gbps,
      human_duration(fit.d2h.latency_ns), 100 * fit.d2h.mean_abs_rel_error, fit.duplex_speedup,
      fit.full_duplex ? "full duplex" : "half duplex");
  std::cout << fmt::format("dispatch: {} host time per small op, {} device interval per kernel back to back\n",
                           human_duration(bench.dispatch_ns), human_duration(bench.kernel_interval_ns));

  nlohmann::json j;
  j["format"] = "mutwo-bench-host";
  j["version"] = 1;
  j["date"] = today_utc();
  j["method"] = kMethod;
  j["device"] = device.device;
  j["product"] = bench.device_name;
  nlohmann::json copies = nlohmann::json::array();
  for (const ir::LinkTiming& c : bench.copies) {
    copies.push_back({{"way", ir::copy_way_name(c.way)},
                      {"bytes", c.bytes},
                      {"time_ns", c.time_ns},
                      {"min_ns", c.min_ns},
                      {"max_ns", c.max_ns},
                      {"samples", c.samples}});
  }
  j["copies"] = copies;
  j["fit"] = {{"h2d", way_json(fit.h2d)}, {"d2h", way_json(fit.d2h)}, {"duplex_speedup", fit.duplex_speedup},
              {"full_duplex", fit.full_duplex}};
  j["dispatch"] = {{"host_ns_per_op", bench.dispatch_ns}, {"device_ns_per_kernel", bench.kernel_interval_ns},
                   {"calls", bench.dispatch_calls}};
  std::string flags_line = fmt::format("--h2d-gbps {:.2f} --d2h-gbps {:.2f}{}", fit.h2d.gbps, fit.d2h.gbps,
                                       fit.full_duplex ? "" : " --half-duplex");
  if (device.is_cuda) {
    if (const auto matched = costmodel::match_device(device.product)) {
      const costmodel::DeviceSpec& d = costmodel::find_device(*matched);
      j["catalog"] = {{"name", d.name},
                      {"h2d_gbps", d.h2d_bytes_per_ns},
                      {"d2h_gbps", d.d2h_bytes_per_ns},
                      {"h2d_latency_ns", d.h2d_latency_ns},
                      {"d2h_latency_ns", d.d2h_latency_ns},
                      {"full_duplex", d.full_duplex},
                      {"launch_overhead_ns", d.launch_overhead_ns},
                      {"host_launch_ns", d.host.launch_ns}};
      std::cout << fmt::format(
          "catalog {}: h2d {:.2f} GB/s + {}, d2h {:.2f} GB/s + {}, {}; launch overhead {}, host launch {}\n", d.name,
          d.h2d_bytes_per_ns, human_duration(d.h2d_latency_ns), d.d2h_bytes_per_ns, human_duration(d.d2h_latency_ns),
          d.full_duplex ? "full duplex" : "half duplex", human_duration(d.launch_overhead_ns),
          human_duration(d.host.launch_ns));
    }
  }
  j["run_flags"] = flags_line;
  if (!flags.output.empty()) {
    support::write_file_atomic(flags.output, j.dump(2) + "\n", "bench-host JSON");
    std::cout << fmt::format("wrote {}; a run on this link: mutwo run ... {}\n", flags.output, flags_line);
  }
}

}  // namespace

void add_bench_host_command(CLI::App& app) {
  auto flags = std::make_shared<BenchHostFlags>();
  CLI::App* cmd = app.add_subcommand(
      "bench-host",
      "Time the host link (pinned copies each way and both at once) and the host's dispatch of a small op; fit "
      "latency and bandwidth per way");
  cmd->add_option("--device", flags->device, "cpu, cuda or cuda:N (default: cuda in a CUDA build, else cpu)");
  cmd->add_option("--sizes", flags->sizes, "Copy sizes in bytes, comma-separated (default: 4 KiB to 256 MiB, x4)")
      ->delimiter(',');
  cmd->add_option("--warmup", flags->warmup, "Untimed copies per size and way")
      ->check(CLI::Range(0, ir::kMaxBenchCopies))
      ->capture_default_str();
  cmd->add_option("--iters", flags->iters, "Timed copies per size and way, the median kept")
      ->check(CLI::Range(1, ir::kMaxBenchCopies))
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Write the measurements and the fit as JSON");
  cmd->callback([flags] { run_bench_host(*flags); });
}

}  // namespace mutwo::cli
