// `mutwo bench-ops`: times single ATen kernels (cuBLAS/cuDNN on a CUDA device) of the zoo's op
// kinds at many shapes and writes them as calibration CSV rows (costmodel/README.md, "Calibration
// inputs") that `mutwo calibrate` fits. The kernels and the default grid are ir/bench_ops.hpp's,
// the timing is the executor's (exec/bench_ops.cpp), the rows costmodel/bench_rows.hpp's; this file
// parses flags, loads the executor and prints.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "costmodel/bench_rows.hpp"
#include "costmodel/calibration_csv.hpp"
#include "costmodel/device_catalog.hpp"
#include "experiments/executor_loader.hpp"
#include "ir/bench_ops.hpp"
#include "support/error.hpp"
#include "support/median.hpp"
#include "support/text_file.hpp"

namespace mutwo::cli {
namespace {

struct BenchOpsFlags {
  std::string device;                // empty: the executor's default (cuda in a CUDA build, else cpu)
  std::vector<std::string> kernels;  // names, "conv" for the three passes, "all"; empty: all
  std::vector<std::string> precisions;
  std::string gpu;  // the catalog device of a CUDA device's rows; empty: matched from its product name
  bool quick = false;
  int32_t warmup = -1;  // -1: 3, or 1 with --quick
  int32_t iters = -1;   // -1: 10, or 3 with --quick
  std::string output;
};

// The kernel names the flag asks for, in bench_kernel_names() order, each once.
std::vector<std::string> selected_kernels(const std::vector<std::string>& asked) {
  const std::vector<std::string>& all = ir::bench_kernel_names();
  if (asked.empty()) return all;
  std::vector<std::string> wanted;
  for (const std::string& name : asked) {
    if (name == "all") return all;
    if (name == "conv") {
      for (const std::string& k : all) {
        if (k.starts_with("conv2d_")) wanted.push_back(k);
      }
      continue;
    }
    try {
      ir::check_bench_kernel(name);
    } catch (const UnknownNameError&) {
      throw UnknownNameError(fmt::format(
          "unknown kernel '{}'; valid: {}, conv (the three conv2d passes), all", name, joined(all)));
    }
    wanted.push_back(name);
  }
  std::vector<std::string> out;
  for (const std::string& k : all) {
    if (std::find(wanted.begin(), wanted.end(), k) != wanted.end()) out.push_back(k);
  }
  return out;
}

// The precisions the flag asks for, each once in the order given: --precision fp32,fp32 timed every
// shape twice and wrote each row twice.
std::vector<std::string> selected_precisions(const std::vector<std::string>& asked) {
  const std::vector<std::string>& valid = costmodel::calibration_precisions();
  std::vector<std::string> out;
  for (const std::string& p : asked) {
    if (std::find(valid.begin(), valid.end(), p) == valid.end()) {
      throw UnknownNameError(fmt::format("unknown precision '{}'; valid: {}", p, joined(valid)));
    }
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

// The rows' device: "cpu" on the host, else the catalog entry of the CUDA device.
std::string row_device(const ir::ExecDevice& device, const std::string& gpu) {
  if (!device.is_cuda) {
    if (!gpu.empty()) {
      throw Error(
          fmt::format("bench-ops: --gpu {} names a CUDA device's catalog entry; rows timed on the cpu are "
                      "device '{}'",
                      gpu, costmodel::kHostCpuDevice));
    }
    return std::string(costmodel::kHostCpuDevice);
  }
  if (!gpu.empty()) return costmodel::find_device(gpu).name;  // throws naming the valid devices
  if (const auto matched = costmodel::match_device(device.product)) return *matched;
  throw Error(fmt::format(
      "bench-ops: the CUDA device '{}' is not in the catalog; name the catalog device its rows are "
      "for with --gpu (valid: {})",
      device.product, joined(costmodel::builtin_devices().names())));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void print_summary(const std::vector<costmodel::CalibrationRow>& rows) {
  struct Group {
    std::vector<int64_t> times;
    double best_flops_per_ns = 0;
    double best_bytes_per_ns = 0;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const costmodel::CalibrationRow& r : rows) {
    const auto key = std::make_pair(r.kernel, r.precision);
    if (!groups.contains(key)) order.push_back(key);
    Group& g = groups[key];
    g.times.push_back(r.time_ns);
    g.best_flops_per_ns =
        std::max(g.best_flops_per_ns, static_cast<double>(r.flops) / static_cast<double>(r.time_ns));
    g.best_bytes_per_ns =
        std::max(g.best_bytes_per_ns, static_cast<double>(r.bytes) / static_cast<double>(r.time_ns));
  }
  Table t({{"kernel", Align::left},
           {"precision", Align::left},
           {"shapes", Align::right},
           {"fastest", Align::right},
           {"median", Align::right},
           {"slowest", Align::right},
           {"best TFLOP/s", Align::right},
           {"best GB/s", Align::right}});
  for (const auto& key : order) {
    const Group& g = groups.at(key);
    t.add_row({key.first, key.second, std::to_string(g.times.size()),
               human_duration(*std::min_element(g.times.begin(), g.times.end())),
               human_duration(support::median(g.times, support::EvenMedian::lower_middle)),
               human_duration(*std::max_element(g.times.begin(), g.times.end())),
               fmt::format("{:.3f}", g.best_flops_per_ns / 1e3),  // FLOP/ns = GFLOP/s
               fmt::format("{:.1f}", g.best_bytes_per_ns)});      // bytes/ns = GB/s
  }
  std::cout << t.render();
}

void run_bench_ops(const BenchOpsFlags& flags) {
  const std::vector<std::string> kernels = selected_kernels(flags.kernels);
  const std::vector<std::string> precisions = selected_precisions(flags.precisions);
  // The output is checked before any kernel is timed: a bad path used to cost the whole grid.
  support::check_output_paths({{"--output", flags.output}});
  const std::unique_ptr<ir::Executor> executor = experiments::load_executor("'mutwo bench-ops'");
  const std::string device_name = flags.device.empty() ? executor->default_device() : flags.device;
  const ir::ExecDevice device = executor->open_device(device_name);
  const std::string rows_device = row_device(device, flags.gpu);
  if (!device.is_cuda) {
    std::cout << fmt::format(
        "timing on the cpu ({}): the rows' device is '{}'; CPU timings do not calibrate a GPU (mutwo "
        "calibrate "
        "refuses them): run bench-ops on a CUDA device for that\n",
        device.device, costmodel::kHostCpuDevice);
  }

  ir::BenchOpsOptions options;
  options.device = device_name;
  options.precisions = precisions;
  options.warmup_iterations = flags.warmup >= 0 ? flags.warmup : (flags.quick ? 1 : 3);
  options.timed_iterations = flags.iters >= 1 ? flags.iters : (flags.quick ? 3 : 10);
  std::cout << fmt::format("timing {} on {} ({}), {} warm-up + {} timed launches each, the median kept\n",
                           joined(kernels), device.product, rows_device, options.warmup_iterations,
                           options.timed_iterations);
  std::vector<costmodel::CalibrationRow> rows;
  for (const std::string& kernel : kernels) {
    options.shapes = ir::default_bench_grid(kernel, flags.quick);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<ir::KernelTiming> timings = executor->bench_ops(options);
    for (const ir::KernelTiming& t : timings) rows.push_back(costmodel::bench_row(t, rows_device));
    std::cout << fmt::format("  {}: {} shapes, {} timings in {:.1f} s\n", kernel, options.shapes.size(),
                             timings.size(), seconds_since(start))
              << std::flush;
  }
  support::write_file_atomic(flags.output, costmodel::calibration_csv_text(rows), "calibration CSV");
  print_summary(rows);
  if (device.is_cuda) {
    std::cout << fmt::format("wrote {} ({} rows; fit them: mutwo calibrate {} --device {} -o {}.json)\n",
                             flags.output, rows.size(), flags.output, rows_device, rows_device);
  } else {
    std::cout << fmt::format("wrote {} ({} rows of device '{}')\n", flags.output, rows.size(),
                             costmodel::kHostCpuDevice);
  }
}

}  // namespace

void add_bench_ops_command(CLI::App& app) {
  auto flags = std::make_shared<BenchOpsFlags>();
  CLI::App* cmd = app.add_subcommand("bench-ops",
                                     "Time the zoo's op kinds (GEMM, convolution passes, elementwise, norms, "
                                     "softmax) at many shapes through ATen "
                                     "and write calibration CSV rows for mutwo calibrate");
  cmd->add_option("--device", flags->device, "cpu, cuda or cuda:N (default: cuda in a CUDA build, else cpu)");
  cmd->add_option("--kernels", flags->kernels,
                  fmt::format("Kernels to time, comma-separated: {}, conv (the three passes), all (default)",
                              joined(ir::bench_kernel_names())))
      ->delimiter(',');
  cmd->add_option(
         "--precision", flags->precisions,
         "Precisions, comma-separated: fp32, tf32, fp16, bf16 (default: every one the device runs; the "
         "cpu runs fp32)")
      ->delimiter(',');
  cmd->add_option("--gpu", flags->gpu,
                  "Catalog device the rows are for (default: matched from the CUDA device's name)");
  cmd->add_flag("--quick", flags->quick, "A handful of tiny shapes per kernel, 1 warm-up + 3 timed launches");
  cmd->add_option("--warmup", flags->warmup, "Untimed launches per shape (default 3; 1 with --quick)")
      ->check(CLI::Range(0, ir::kMaxBenchLaunches));
  cmd->add_option("--iters", flags->iters,
                  "Timed launches per shape, the median kept (default 10; 3 with --quick)")
      ->check(CLI::Range(1, ir::kMaxBenchLaunches));
  cmd->add_option("-o,--output", flags->output, "Calibration CSV to write")->required();
  cmd->callback([flags] { run_bench_ops(*flags); });
}

}  // namespace mutwo::cli
