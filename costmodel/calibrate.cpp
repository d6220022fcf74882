#include "costmodel/calibrate.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_held_out_csv.hpp"
#include "support/error.hpp"
#include "support/parallel_for.hpp"
#include "support/text_file.hpp"

namespace mutwo::costmodel {

namespace {

// Inputs as given, a folder replaced by its measurement files (*.csv and *.csv.gz below it, in path
// order).
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const std::string& input : inputs) {
    if (!std::filesystem::is_directory(input)) {
      out.push_back(input);
      continue;
    }
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(input)) {
      const std::string name = entry.path().filename().string();
      const auto ends = [&](std::string_view suffix) {
        return name.size() >= suffix.size() &&
               name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      };
      if (entry.is_regular_file() && (ends(".csv") || ends(".csv.gz")))
        files.push_back(entry.path().string());
    }
    if (files.empty())
      throw Error(fmt::format("calibrate: folder '{}' holds no *.csv or *.csv.gz file", input));
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

CalibrateResult run_wave_calibration(const CalibrateOptions& options, CalibrateResult result) {
  if (!options.output_dir.empty() || options.kfold > 0 || !options.device.empty()) {
    throw Error(
        "calibrate --waves fits one model across every GPU of the inputs: it takes -o, --leave-one-out and "
        "--fidelity, not --out-dir, --kfold or --device");
  }
  if (!options.fidelity.empty() && !options.leave_one_out) {
    throw Error("calibrate --waves: --fidelity needs --leave-one-out");
  }
  if (!options.held_out_csv.empty() && !options.leave_one_out && !options.score) {
    throw Error("calibrate --waves: --held-out-csv needs --leave-one-out or --score");
  }
  if (options.score) {
    if (options.leave_one_out || !options.output.empty() || !options.fidelity.empty() ||
        result.refine_only_rows > 0) {
      throw Error(
          "calibrate --waves --score prices the inputs by a fitted model: it takes --wave-model and "
          "--held-out-csv, not -o, --leave-one-out, --fidelity or --refine-only");
    }
    result.wave_rows = prepare_wave_rows(result.rows);
    result.wave_model =
        options.wave_model.empty() ? shipped_wave_model() : read_wave_model(options.wave_model);
    result.wave_held_out = score_wave_model(*result.wave_rows, *result.wave_model);
    if (!options.held_out_csv.empty()) {
      support::write_file_atomic(options.held_out_csv,
                                 wave_held_out_csv(*result.wave_rows, *result.wave_held_out), "held-out CSV");
      result.written.push_back(options.held_out_csv);
    }
    return result;
  }
  if (!options.wave_model.empty()) throw Error("calibrate --waves: --wave-model needs --score");
  std::vector<char> refine_only(result.rows.size(), 0);
  std::fill(refine_only.end() - static_cast<std::ptrdiff_t>(result.refine_only_rows), refine_only.end(), 1);
  result.wave_rows = prepare_wave_rows(result.rows, std::move(refine_only));
  WaveFitOptions fit;
  fit.inputs = options.inputs;
  for (const std::string& input : options.refine_only) fit.inputs.push_back("refine-only: " + input);
  fit.fitted_on = options.fitted_on;
  fit.jobs = options.jobs;
  result.wave_model = fit_wave_model(*result.wave_rows, fit);
  if (!options.output.empty()) {
    write_wave_model(*result.wave_model, options.output);
    result.written.push_back(options.output);
  }
  if (options.leave_one_out && result.refine_only_rows > 0) {
    // The leave-one-out validates the cross-GPU groups, which the refine-only rows are not in.
    std::vector<CalibrationRow> shared(
        result.rows.begin(), result.rows.end() - static_cast<std::ptrdiff_t>(result.refine_only_rows));
    result.wave_rows = prepare_wave_rows(std::move(shared));
  }
  if (options.leave_one_out) {
    result.wave_held_out = leave_one_gpu_out(*result.wave_rows, options.jobs);
    if (!options.held_out_csv.empty()) {
      support::write_file_atomic(options.held_out_csv,
                                 wave_held_out_csv(*result.wave_rows, *result.wave_held_out), "held-out CSV");
      result.written.push_back(options.held_out_csv);
    }
    if (!options.fidelity.empty()) {
      std::string existing;
      if (std::filesystem::exists(options.fidelity))
        existing = support::read_text_file(options.fidelity, "report");
      const std::string sections = wave_fidelity_markdown(*result.wave_rows, *result.wave_model,
                                                          *result.wave_held_out, options.command);
      support::write_file_atomic(
          options.fidelity, replace_marked_sections(existing, sections, kWaveFidelityBegin, kWaveFidelityEnd),
          "report");
      result.written.push_back(options.fidelity);
    }
  }
  return result;
}

}  // namespace

CalibrateResult run_calibration(const CalibrateOptions& options) {
  if (options.inputs.empty()) {
    throw Error(
        "calibrate: no input files (calibration CSV, DeepBench gemm.csv/conv.csv or a profiler trace)");
  }
  if (!options.waves && !options.held_out_csv.empty()) {
    throw Error("calibrate: --held-out-csv needs --waves --leave-one-out");
  }
  if (!options.waves && (options.score || !options.wave_model.empty())) {
    throw Error("calibrate: --score and --wave-model need --waves (they price by the wave model)");
  }
  if (!options.waves && !options.refine_only.empty()) {
    throw Error("calibrate: --refine-only needs --waves (it refines the wave model's groups)");
  }
  if (!options.waves && !options.fidelity.empty() && options.kfold < 2) {
    throw Error("calibrate: --fidelity needs --kfold K (K >= 2)");
  }
  CalibrateResult result;
  // Every file read on its own thread, the rows kept in the inputs' order (a bad file's error is the
  // first bad file's, as read one after another).
  const std::vector<std::string> files = expand_inputs(options.inputs);
  const std::vector<std::string> refine_files =
      options.refine_only.empty() ? std::vector<std::string>{} : expand_inputs(options.refine_only);
  std::vector<std::vector<CalibrationRow>> read(files.size() + refine_files.size());
  std::vector<std::string> notes(files.size());
  support::parallel_for(read.size(), options.jobs, [&](size_t f) {
    read[f] = f < files.size()
                  ? read_calibration_input(files[f], options.device, &notes[f])
                  : read_calibration_input(refine_files[f - files.size()], options.device, nullptr);
  });
  size_t shared_rows = 0;
  for (size_t f = 0; f < read.size(); ++f) {
    if (f < notes.size() && !notes[f].empty()) result.notes.push_back(std::move(notes[f]));
    if (f < files.size()) shared_rows += read[f].size();
    result.rows.insert(result.rows.end(), std::make_move_iterator(read[f].begin()),
                       std::make_move_iterator(read[f].end()));
  }
  result.refine_only_rows = result.rows.size() - shared_rows;
  if (options.waves) return run_wave_calibration(options, std::move(result));
  std::set<std::string> devices;
  for (const CalibrationRow& r : result.rows) devices.insert(r.device);
  if (!options.device.empty()) {
    if (options.device != kHostCpuDevice) {
      (void)builtin_devices().find(options.device);  // UnknownNameError for a name the catalog lacks
    }
    devices = {options.device};
  }
  if (devices.contains(std::string(kHostCpuDevice))) {
    throw Error(fmt::format(
        "calibrate: rows of device '{}' time the host CPU (mutwo bench-ops on a CPU): they do not "
        "calibrate a GPU, and profiles are fitted for catalog GPUs only; time the kernels on a CUDA "
        "device (mutwo bench-ops --device cuda){}",
        kHostCpuDevice, options.device.empty() ? ", or fit another device's rows with --device" : ""));
  }
  if (!options.output.empty() && devices.size() != 1) {
    throw Error(
        fmt::format("calibrate: -o writes one profile, the inputs have rows for {} devices ({}); name one "
                    "with --device or use --out-dir",
                    devices.size(), fmt::join(devices, ", ")));
  }
  if (!options.output.empty() || !options.output_dir.empty() || options.kfold < 2) {
    for (const std::string& device : devices) {
      result.profiles.push_back(
          fit_calibration_profile(result.rows, find_device(device), options.inputs, options.fitted_on));
    }
  }
  if (!options.output.empty()) {
    write_calibration_profile(result.profiles.front(), options.output);
    result.written.push_back(options.output);
  }
  if (!options.output_dir.empty()) {
    std::filesystem::create_directories(options.output_dir);
    for (const CalibrationProfile& p : result.profiles) {
      const std::string path = (std::filesystem::path(options.output_dir) / (p.device + ".json")).string();
      write_calibration_profile(p, path);
      result.written.push_back(path);
    }
  }
  if (options.kfold >= 2) {
    std::vector<CalibrationRow> selected;
    for (const CalibrationRow& r : result.rows) {
      if (devices.count(r.device)) selected.push_back(r);
    }
    const std::vector<double> predictions = kfold_predictions(selected, options.kfold);
    result.kfold_by_category = kfold_errors_by_category(selected, predictions);
    result.kfold_by_kernel = kfold_errors_by_kernel(selected, predictions);
    result.cross_gpu = cross_gpu_errors(selected, predictions);
    if (!options.fidelity.empty()) {
      std::string existing;
      if (std::filesystem::exists(options.fidelity))
        existing = support::read_text_file(options.fidelity, "report");
      const std::string sections = calibration_fidelity_markdown(selected, options.kfold, options.command);
      support::write_file_atomic(options.fidelity, replace_fidelity_sections(existing, sections), "report");
      result.written.push_back(options.fidelity);
    }
  }
  return result;
}

}  // namespace mutwo::costmodel
