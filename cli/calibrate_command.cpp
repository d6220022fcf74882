// `mutwo calibrate`: fits calibration profiles (the `calibrated` cost source) to measured kernel
// times and prints each fit's error; with --kfold, held-out and cross-GPU errors, and with
// --fidelity, regenerates those sections of docs/FIDELITY.md. The pipeline is costmodel/calibrate.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "costmodel/calibrate.hpp"
#include "support/percent.hpp"

namespace mutwo::cli {
namespace {

using support::percent;

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

void print_wave_errors(const std::string& title, const std::vector<costmodel::WaveError>& errors) {
  std::cout << title << "\n";
  Table table({{"device", Align::left},
               {"data", Align::left},
               {"group", Align::left},
               {"kernels", Align::right},
               {"median", Align::right},
               {"mean", Align::right},
               {"signed median", Align::right}});
  for (const costmodel::WaveError& e : errors) {
    table.add_row({e.device, e.dataset, e.group, std::to_string(e.error.count), percent(e.error.median),
                   percent(e.error.mean), support::signed_percent(e.signed_median)});
  }
  std::cout << table.render();
}

// The fusion pairs by device and batch: held out (the fold's price beside the model fitted on every GPU's)
// or scored (the scored model's price alone).
void print_fusion(const std::vector<costmodel::FusionPair>& pairs, bool held_out) {
  if (pairs.empty()) {
    std::cout
        << "fusion: no matched pairs (no batched GEMM of the inputs has a smaller one on its GPU within "
           "10 % in m, n and k): no median error\n";
    return;
  }
  std::cout << "fusion: one batched GEMM vs its products in smaller kernels (" << pairs.size()
            << " matched pairs):\n";
  std::vector<Table::Column> columns = {{"device", Align::left},
                                        {"B", Align::left},
                                        {"pairs", Align::right},
                                        {"measured", Align::right},
                                        {held_out ? "held out" : "predicted", Align::right},
                                        {"error", Align::right}};
  if (held_out) {
    columns.push_back({"fitted", Align::right});
    columns.push_back({"error", Align::right});
  }
  Table t(columns);
  for (const costmodel::FusionSummary& f : costmodel::summarize_fusion(pairs)) {
    std::vector<std::string> row = {f.device,
                                    std::to_string(f.bucket),
                                    std::to_string(f.pairs),
                                    fmt::format("{:.2f}x", f.measured),
                                    fmt::format("{:.2f}x", f.predicted),
                                    percent(f.error)};
    if (held_out) {
      row.push_back(fmt::format("{:.2f}x", f.fitted));
      row.push_back(percent(f.fitted_error));
    }
    t.add_row(row);
  }
  std::cout << t.render();
  std::cout << "fusion speed-up, median error: " << percent(*costmodel::fusion_median_error(pairs));
  if (held_out)
    std::cout << " held out, " << percent(*costmodel::fusion_median_error(pairs, true))
              << " fitted on every GPU";
  std::cout << "\n";
}

void print_wave(const costmodel::CalibrateResult& result) {
  const costmodel::WaveModel& m = *result.wave_model;
  std::cout << "wave model across GPUs (in-sample, kernel time):\n";
  Table table({{"group", Align::left},
               {"tile", Align::left},
               {"kernels", Align::right},
               {"GPUs", Align::right},
               {"compute [c0 cw cf cq cb]", Align::left},
               {"memory [d0 dh dl]", Align::left},
               {"median", Align::right},
               {"mean", Align::right}});
  for (const costmodel::WaveGroupFit& g : m.groups) {
    table.add_row({costmodel::wave_group_text(g.key), costmodel::wave_tile_text(g), std::to_string(g.rows),
                   std::to_string(g.devices.size()),
                   fmt::format("{:.0f} {:.0f} {:.3f} {:.3f} {:.3f}", g.fixed_cost_fitted ? g.compute[0] : -1,
                               g.compute[1], g.compute[2], g.compute[3], g.compute[4]),
                   fmt::format("{:.0f} {:.3f} {:.3f}", g.fixed_cost_fitted ? g.memory[0] : -1, g.memory[1],
                               g.memory[2]),
                   percent(g.error.median), percent(g.error.mean)});
  }
  std::cout << table.render();
  if (!m.refinements.empty()) {
    std::cout << "refined on their own kernels:";
    for (const costmodel::WaveRefinement& r : m.refinements)
      std::cout << fmt::format(" {} ({} groups)", r.device, r.groups.size());
    std::cout << "\n";
  }
  if (m.energy_pj_per_flop > 0) {
    std::cout << fmt::format(
        "power limit: {:.2f} pJ per FP32 FLOP on TSMC 16FF+; share of boost clock on math:",
        m.energy_pj_per_flop);
    for (const costmodel::DeviceSpec& d : result.wave_rows->devices) {
      std::cout << fmt::format(" {} {:.2f}", d.name, m.clock_ratio(d));
    }
    std::cout << "\n";
  } else {
    std::cout << "power limit: none (no board of these kernels fits better below its boost clock)\n";
  }
  if (result.wave_held_out) {
    const auto& rows = *result.wave_rows;
    const auto& held = *result.wave_held_out;
    print_wave_errors("held out a GPU at a time, per GPU and category:",
                      costmodel::held_out_by_category(rows, held));
    print_wave_errors("held out, per category over every GPU:",
                      costmodel::held_out_categories_overall(rows, held));
    print_wave_errors("held out, by measured kernel time:", costmodel::held_out_by_duration(rows, held));
    print_fusion(costmodel::fusion_pairs(rows, held, m), true);
  }
}

// --score: the given model's errors on the inputs' kernels.
void print_wave_score(const costmodel::CalibrateResult& result, const costmodel::CalibrateOptions& options) {
  const auto& rows = *result.wave_rows;
  const auto& scored = *result.wave_held_out;
  const std::string model = options.wave_model.empty() ? std::string("the shipped wave model")
                                                       : "the wave model " + options.wave_model;
  print_wave_errors(fmt::format("{} (fitted {}), per GPU and category:", model, result.wave_model->fitted_on),
                    costmodel::held_out_by_category(rows, scored));
  print_wave_errors("per category over every GPU:", costmodel::held_out_categories_overall(rows, scored));
  print_wave_errors("by measured kernel time:", costmodel::held_out_by_duration(rows, scored));
  const auto pairs = costmodel::fusion_pairs(rows, scored, *result.wave_model);
  if (!pairs.empty()) print_fusion(pairs, false);
}

void run(const costmodel::CalibrateOptions& options) {
  const costmodel::CalibrateResult result = costmodel::run_calibration(options);
  for (const std::string& note : result.notes) std::cout << note << "\n";
  if (options.score) {
    print_wave_score(result, options);
  } else if (result.wave_model) {
    print_wave(result);
  }
  for (const costmodel::CalibrationProfile& p : result.profiles) {
    std::vector<costmodel::GroupError> fit;
    for (const costmodel::KernelGroupFit& g : p.groups) {
      fit.push_back({p.device, g.variant.empty() ? g.kernel : fmt::format("{} ({})", g.kernel, g.variant),
                     g.precision, g.error});
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
      "Fit kernel models to measured kernel times (calibration CSV, DeepBench's and NeuSight's CSVs, "
      "profiler "
      "traces): a profile per GPU (the calibrated source), or with --waves the wave model across GPUs (the "
      "default source); print the fit's error");
  cmd->add_option(
         "inputs", opts->inputs,
         "Measured kernel times: calibration CSV files, DeepBench's or NeuSight's CSVs (a folder: every "
         "*.csv and *.csv.gz below it), or PyTorch profiler traces recorded with record_shapes")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("-o,--output", opts->output,
                  "Write the fitted profile (JSON) here (one device), or with --waves the wave model");
  cmd->add_option("--out-dir", opts->output_dir, "Write one profile per device, <dir>/<device>.json");
  cmd->add_option("--device", opts->device, "Fit only this catalog device");
  cmd->add_option("--date", opts->fitted_on,
                  "Date recorded in the profiles, YYYY-MM-DD (default: today, UTC)");
  cmd->add_option("--kfold", opts->kfold, "Also report K-fold held-out and cross-GPU errors")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--fidelity", opts->fidelity,
                  "Regenerate the kernel-level and cross-GPU sections of this report (docs/FIDELITY.md)");
  cmd->add_flag("--waves", opts->waves,
                "Fit the wave model (the default cost source) across every GPU of the inputs; -o writes it");
  cmd->add_flag("--leave-one-out", opts->leave_one_out,
                "With --waves: hold each GPU out in turn, fit on the others, price it from its datasheet");
  cmd->add_option(
      "--held-out-csv", opts->held_out_csv,
      "With --waves --leave-one-out: write every scored kernel's held-out price beside its measured "
      "time here (CSV)");
  cmd->add_option("--refine-only", opts->refine_only,
                  "With --waves: measured kernels (files or folders, read as the inputs are) that refine "
                  "their GPUs' groups only, outside the cross-GPU fit and the leave-one-out")
      ->check(CLI::ExistingPath);
  cmd->add_flag(
      "--score", opts->score,
      "With --waves: price the inputs' kernels by the shipped wave model (or --wave-model) and print "
      "its error per GPU and category, the harness by the leave-one-out's rule; fits nothing");
  cmd->add_option("--wave-model", opts->wave_model, "With --score: the wave model to score (JSON)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--jobs,-j", opts->jobs,
                  "Threads for reading the inputs and, with --waves, for the fits (0: one per hardware "
                  "thread); the model and every figure are the same on any number")
      ->check(CLI::Range(0, 4096));
  cmd->callback([opts, cmd] {
    // An empty --date is refused (run_calibration), not replaced by today.
    if (cmd->count("--date") == 0) opts->fitted_on = today_utc();
    std::string command = opts->waves ? "mutwo calibrate --waves --leave-one-out" : "mutwo calibrate";
    for (const std::string& input : opts->inputs) command += " " + input;
    if (!opts->refine_only.empty()) command += " --refine-only";
    for (const std::string& input : opts->refine_only) command += " " + input;
    if (!opts->waves) command += fmt::format(" --kfold {}", opts->kfold);
    if (!opts->device.empty()) command += " --device " + opts->device;
    command += " --fidelity " + opts->fidelity;
    opts->command = command;
    run(*opts);
  });
}

}  // namespace mutwo::cli
