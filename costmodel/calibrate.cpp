#include "costmodel/calibrate.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_held_out_csv.hpp"
#include "support/distinct.hpp"
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

// Each file read once: one given twice (by another path, or inside a folder given too, or as an
// input and a --refine-only input) weighed its rows twice in the fit and counted them twice.
void check_files_once(const std::vector<std::string>& files, const std::vector<std::string>& refine_files) {
  std::vector<std::string> given = files;
  given.insert(given.end(), refine_files.begin(), refine_files.end());
  if (const auto twice = support::first_repeated_file(given)) {
    const auto role = [&](size_t i) { return i < files.size() ? "input" : "--refine-only input"; };
    throw Error(
        fmt::format("calibrate: {} '{}' is read already as {} '{}' (folders expanded); give each file once",
                    role(twice->second), given[twice->second], role(twice->first), given[twice->first]));
  }
}

// "YYYY-MM-DD", a day of the calendar: the date written into profiles and models.
void check_date(const std::string& date) {
  int year = 0;
  unsigned month = 0, day = 0;
  const auto number = [&](size_t from, size_t n, auto& value) {
    const char* end = date.data() + from + n;
    const auto [stop, error] = std::from_chars(date.data() + from, end, value);
    return error == std::errc() && stop == end && date[from] >= '0' && date[from] <= '9';
  };
  const bool ok =
      date.size() == 10 && date[4] == '-' && date[7] == '-' && number(0, 4, year) && number(5, 2, month) &&
      number(8, 2, day) && year >= 1 &&
      std::chrono::year_month_day{std::chrono::year{year}, std::chrono::month{month}, std::chrono::day{day}}
          .ok();
  if (!ok) throw Error(fmt::format("calibrate: --date '{}' is not a date YYYY-MM-DD (2026-11-29)", date));
}

// --out-dir: a writable folder, or one its nearest existing parent, a writable folder, can hold.
void check_output_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::path existing = std::filesystem::absolute(dir, ec);
  while (!std::filesystem::exists(existing, ec) && existing.has_relative_path())
    existing = existing.parent_path();
  if (!std::filesystem::is_directory(existing, ec)) {
    throw Error(fmt::format("calibrate: cannot write --out-dir '{}': '{}' is not a folder", dir.string(),
                            existing.string()));
  }
  if (::access(existing.c_str(), W_OK) != 0) {
    throw Error(fmt::format("calibrate: cannot write --out-dir '{}': folder '{}': {}", dir.string(),
                            existing.string(), std::strerror(errno)));
  }
}

void make_output_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw Error(
        fmt::format("calibrate: cannot create --out-dir folder '{}': {}", dir.string(), ec.message()));
  }
}

// --score: a model that prices none of the inputs' kernels scores nothing (a model with no groups, or
// none for these kernels' GPUs and categories): an error, not empty tables.
void check_some_priced(const WaveRows& rows, const WaveHeldOut& scored, const WaveModel& model,
                       const CalibrateOptions& options) {
  if (std::find(scored.scored.begin(), scored.scored.end(), 1) != scored.scored.end()) return;
  std::set<std::string> devices;
  for (const CalibrationRow& r : rows.rows) devices.insert(r.device);
  throw Error(fmt::format(
      "calibrate --waves --score: no kernel of the inputs is priced by the model: {} ({} groups, {} "
      "refinements) prices none of the {} rows of {} (GPUs: {})",
      options.wave_model.empty() ? std::string("the shipped wave model") : "'" + options.wave_model + "'",
      model.groups.size(), model.refinements.size(), rows.rows.size(), fmt::join(options.inputs, ", "),
      fmt::join(devices, ", ")));
}

// The --waves options that go together, checked before anything is read.
void check_wave_options(const CalibrateOptions& options) {
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
  if (options.score && (options.leave_one_out || !options.output.empty() || !options.fidelity.empty() ||
                        !options.refine_only.empty())) {
    throw Error(
        "calibrate --waves --score prices the inputs by a fitted model: it takes --wave-model and "
        "--held-out-csv, not -o, --leave-one-out, --fidelity or --refine-only");
  }
  if (!options.score && !options.wave_model.empty())
    throw Error("calibrate --waves: --wave-model needs --score");
}

CalibrateResult run_wave_calibration(const CalibrateOptions& options, CalibrateResult result) {
  if (options.score) {
    result.wave_rows = prepare_wave_rows(result.rows);
    result.wave_model =
        options.wave_model.empty() ? shipped_wave_model() : read_wave_model(options.wave_model);
    result.wave_held_out = score_wave_model(*result.wave_rows, *result.wave_model);
    check_some_priced(*result.wave_rows, *result.wave_held_out, *result.wave_model, options);
    if (!options.held_out_csv.empty()) {
      support::write_file_atomic(options.held_out_csv,
                                 wave_held_out_csv(*result.wave_rows, *result.wave_held_out), "held-out CSV");
      result.written.push_back(options.held_out_csv);
    }
    return result;
  }
  std::vector<char> refine_only(result.rows.size(), 0);
  std::fill(refine_only.end() - static_cast<std::ptrdiff_t>(result.refine_only_rows), refine_only.end(), 1);
  result.wave_rows = prepare_wave_rows(result.rows, std::move(refine_only));
  WaveFitOptions fit;
  fit.inputs = options.inputs;
  for (const std::string& input : options.refine_only) fit.inputs.push_back("refine-only: " + input);
  fit.fitted_on = options.fitted_on;
  fit.jobs = options.jobs;
  result.wave_model = fit_wave_model(*result.wave_rows, fit);
  if (options.leave_one_out && result.refine_only_rows > 0) {
    // The leave-one-out validates the cross-GPU groups, which the refine-only rows are not in.
    std::vector<CalibrationRow> shared(
        result.rows.begin(), result.rows.end() - static_cast<std::ptrdiff_t>(result.refine_only_rows));
    result.wave_rows = prepare_wave_rows(std::move(shared));
  }
  // Every figure computed before the first file is written: a failure leaves no output half done.
  std::string held_out_csv, fidelity;
  if (options.leave_one_out) {
    result.wave_held_out = leave_one_gpu_out(*result.wave_rows, options.jobs);
    if (!options.held_out_csv.empty())
      held_out_csv = wave_held_out_csv(*result.wave_rows, *result.wave_held_out);
    if (!options.fidelity.empty()) {
      std::string existing;
      if (std::filesystem::exists(options.fidelity))
        existing = support::read_text_file(options.fidelity, "report");
      const std::string sections = wave_fidelity_markdown(*result.wave_rows, *result.wave_model,
                                                          *result.wave_held_out, options.command);
      fidelity = replace_marked_sections(existing, sections, kWaveFidelityBegin, kWaveFidelityEnd);
    }
  }
  if (!options.output.empty()) {
    write_wave_model(*result.wave_model, options.output);
    result.written.push_back(options.output);
  }
  if (!options.held_out_csv.empty()) {
    support::write_file_atomic(options.held_out_csv, held_out_csv, "held-out CSV");
    result.written.push_back(options.held_out_csv);
  }
  if (!options.fidelity.empty()) {
    support::write_file_atomic(options.fidelity, fidelity, "report");
    result.written.push_back(options.fidelity);
  }
  return result;
}

}  // namespace

CalibrateResult run_calibration(const CalibrateOptions& options) {
  if (options.inputs.empty()) {
    throw Error(
        "calibrate: no input files (calibration CSV, DeepBench gemm.csv/conv.csv or a profiler trace)");
  }
  if (!options.waves && options.leave_one_out) {
    throw Error("calibrate: --leave-one-out needs --waves (it holds out each GPU of the wave model's fit)");
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
  if (options.waves) check_wave_options(options);
  check_date(options.fitted_on);
  const std::vector<std::string> files = expand_inputs(options.inputs);
  const std::vector<std::string> refine_files =
      options.refine_only.empty() ? std::vector<std::string>{} : expand_inputs(options.refine_only);
  check_files_once(files, refine_files);
  // Every output checked before anything is read, fitted or written; none of them an input.
  support::FlagPaths inputs;
  for (const std::string& f : files) inputs.emplace_back("input", f);
  for (const std::string& f : refine_files) inputs.emplace_back("--refine-only", f);
  inputs.emplace_back("--wave-model", options.wave_model);
  support::check_output_paths(
      {{"-o", options.output}, {"--fidelity", options.fidelity}, {"--held-out-csv", options.held_out_csv}},
      "calibrate: ", inputs);
  if (!options.output_dir.empty()) check_output_dir(options.output_dir);
  CalibrateResult result;
  // Every file read on its own thread, the rows kept in the inputs' order (a bad file's error is the
  // first bad file's, as read one after another).
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
  if (shared_rows == 0) {
    throw Error(fmt::format("calibrate: no rows in the inputs ({}): nothing to fit", fmt::join(files, ", ")));
  }
  if (!refine_files.empty() && result.refine_only_rows == 0) {
    throw Error(fmt::format("calibrate: no rows in the --refine-only inputs ({}): nothing to refine",
                            fmt::join(refine_files, ", ")));
  }
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
  std::vector<CalibrationRow> selected;  // the rows of the devices fitted, for --kfold
  if (options.kfold >= 2) {
    for (const CalibrationRow& r : result.rows) {
      if (devices.count(r.device)) selected.push_back(r);
    }
    check_kfold_groups(selected, options.kfold);
  }
  // --out-dir's files, known now that the devices are: checked before the fit, as the others were.
  std::vector<std::string> dir_paths;
  if (!options.output_dir.empty()) {
    std::vector<std::pair<std::string_view, std::string>> outputs = {{"-o", options.output},
                                                                     {"--fidelity", options.fidelity}};
    for (const std::string& device : devices) {
      dir_paths.push_back((std::filesystem::path(options.output_dir) / (device + ".json")).string());
      outputs.emplace_back("--out-dir", dir_paths.back());
    }
    if (std::filesystem::is_directory(options.output_dir))
      support::check_output_paths(outputs, "calibrate: ", inputs);
  }
  if (!options.output.empty() || !options.output_dir.empty() || options.kfold < 2) {
    for (const std::string& device : devices) {
      result.profiles.push_back(
          fit_calibration_profile(result.rows, find_device(device), options.inputs, options.fitted_on));
    }
  }
  // Every figure computed before the first file is written: a failure leaves no output half done.
  std::string fidelity;
  if (options.kfold >= 2) {
    const std::vector<double> predictions = kfold_predictions(selected, options.kfold);
    result.kfold_by_category = kfold_errors_by_category(selected, predictions);
    result.kfold_by_kernel = kfold_errors_by_kernel(selected, predictions);
    result.cross_gpu = cross_gpu_errors(selected, predictions);
    if (!options.fidelity.empty()) {
      std::string existing;
      if (std::filesystem::exists(options.fidelity))
        existing = support::read_text_file(options.fidelity, "report");
      const std::string sections = calibration_fidelity_markdown(selected, options.kfold, options.command);
      fidelity = replace_fidelity_sections(existing, sections);
    }
  }
  if (!options.output_dir.empty()) make_output_dir(options.output_dir);
  if (!options.output.empty()) {
    write_calibration_profile(result.profiles.front(), options.output);
    result.written.push_back(options.output);
  }
  for (size_t i = 0; i < dir_paths.size(); ++i) {
    write_calibration_profile(result.profiles[i], dir_paths[i]);
    result.written.push_back(dir_paths[i]);
  }
  if (!options.fidelity.empty()) {
    support::write_file_atomic(options.fidelity, fidelity, "report");
    result.written.push_back(options.fidelity);
  }
  return result;
}

}  // namespace mutwo::costmodel
