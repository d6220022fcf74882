// `mutwo calibrate`: fits calibration profiles (the `calibrated` cost source) to measured kernel
// times and prints each fit's error; with --kfold, held-out and cross-GPU errors, and with
// --fidelity, regenerates those sections of docs/FIDELITY.md. The pipeline is costmodel/calibrate.
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "costmodel/calibrate.hpp"

namespace mutwo::cli {
namespace {

std::string percent(double fraction) {
  return fmt::format("{:.1f} %", 100.0 * fraction);
}

void print_errors(const std::string& title, const std::vector<costmodel::GroupError>& errors) {
  std::cout << title << "\n";
  Table table({{"device", Align::left},
               {"group", Align::left},
               {"precision", Align::left},
               {"kernels", Align::right},
               {"median", Align::right},
               {"mean", Align::right},
               {"max", Align::right}});
  for (const costmodel::GroupError& g : errors) {
    table.add_row({g.device, g.group, g.precision, std::to_string(g.error.count), percent(g.error.median),
                   percent(g.error.mean), percent(g.error.max)});
  }
  std::cout << table.render();
}

void run(const costmodel::CalibrateOptions& options) {
  const costmodel::CalibrateResult result = costmodel::run_calibration(options);
  for (const std::string& note : result.notes) std::cout << note << "\n";
  for (const costmodel::CalibrationProfile& p : result.profiles) {
    std::vector<costmodel::GroupError> fit;
    for (const costmodel::KernelGroupFit& g : p.groups) {
      fit.push_back({p.device, g.variant.empty() ? g.kernel : fmt::format("{} ({})", g.kernel, g.variant), g.precision,
                     g.error});
    }
    print_errors(fmt::format("fit on {} (in-sample |predicted - measured| / measured):", p.device), fit);
  }
  if (!result.kfold_by_category.empty()) {
    print_errors(fmt::format("held out, {}-fold, per category:", options.kfold), result.kfold_by_category);
    print_errors(fmt::format("held out, {}-fold, per kernel:", options.kfold), result.kfold_by_kernel);
    std::cout << "cross-GPU (t_A * pred_B / pred_A):\n";
    Table table({{"from", Align::left},
                 {"to", Align::left},
                 {"precision", Align::left},
                 {"kernels", Align::right},
                 {"median", Align::right},
                 {"mean", Align::right},
                 {"B's profile mean", Align::right}});
    for (const costmodel::CrossGpuError& e : result.cross_gpu) {
      table.add_row({e.from, e.to, e.precision, std::to_string(e.habitat.count), percent(e.habitat.median),
                     percent(e.habitat.mean), percent(e.b_profile.mean)});
    }
    std::cout << table.render();
  }
  for (const std::string& path : result.written) std::cout << "wrote " << path << "\n";
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto opts = std::make_shared<costmodel::CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the calibrated cost source's kernel model to measured kernel times (calibration CSV, DeepBench "
      "gemm.csv/conv.csv) and print the fit's error");
  cmd->add_option("inputs", opts->inputs, "Measured kernel times: calibration CSV files, DeepBench's CSVs, or PyTorch profiler traces recorded with record_shapes")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", opts->output, "Write the fitted profile (JSON) here (one device)");
  cmd->add_option("--out-dir", opts->output_dir, "Write one profile per device, <dir>/<device>.json");
  cmd->add_option("--device", opts->device, "Fit only this catalog device");
  cmd->add_option("--date", opts->fitted_on, "Date recorded in the profiles (default: today, UTC)");
  cmd->add_option("--kfold", opts->kfold, "Also report K-fold held-out and cross-GPU errors")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--fidelity", opts->fidelity,
                  "Regenerate the kernel-level and cross-GPU sections of this report (docs/FIDELITY.md)");
  cmd->callback([opts, cmd] {
    if (opts->fitted_on.empty()) opts->fitted_on = today_utc();
    std::string command = "mutwo calibrate";
    for (const std::string& input : opts->inputs) command += " " + input;
    command += fmt::format(" --kfold {}", opts->kfold);
    if (!opts->device.empty()) command += " --device " + opts->device;
    command += " --fidelity " + opts->fidelity;
    opts->command = command;
    (void)cmd;
    run(*opts);
  });
}

}  // namespace mutwo::cli
