#pragma once
// The `mutwo calibrate` pipeline: read measured kernel times (calibration_csv.hpp: the calibration
// format or DeepBench's CSVs), fit a profile per device (calibration_profile.hpp), write them, and
// optionally regenerate the kernel-level and cross-GPU sections of docs/FIDELITY.md.
#include <optional>
#include <string>
#include <vector>

#include "costmodel/calibration_profile.hpp"
#include "costmodel/calibration_validation.hpp"
#include "costmodel/wave_validation.hpp"

namespace mutwo::costmodel {

struct CalibrateOptions {
  std::vector<std::string>
      inputs;              // files, read by read_calibration_input (--device: a trace's GPU when unnamed)
  std::string device;      // fit only this catalog device; empty: every device in the inputs
  std::string output;      // -o: the profile file (needs a single device)
  std::string output_dir;  // --out-dir: <dir>/<device>.json for every device fitted
  std::string fitted_on;   // the date written into the profiles (YYYY-MM-DD)
  int kfold = 0;           // > 1: k-fold held-out errors as well
  std::string fidelity;    // a FIDELITY.md to regenerate the sections of (needs kfold)
  std::string command;     // the command line, quoted in the report
  // --waves: fit the wave model (wave_fit.hpp) across every GPU of the inputs instead of per-GPU
  // profiles; -o writes it; --leave-one-out validates it a GPU at a time (wave_validation.hpp), and
  // --fidelity then regenerates the wave model's sections of the report.
  bool waves = false;
  bool leave_one_out = false;
  std::string held_out_csv;  // --held-out-csv: every scored held-out row (wave_held_out_csv.hpp)
  // --refine-only: measured kernels (read as the inputs are) that refine their GPUs' groups only
  // (wave_fit.hpp); the cross-GPU groups and the leave-one-out are the inputs' alone.
  std::vector<std::string> refine_only;
  // --score: price the inputs by a wave model (wave_model, or the shipped one) and score it on them
  // (score_wave_model, wave_validation.hpp); fits nothing.
  bool score = false;
  std::string wave_model;
  int jobs =
      0;  // --jobs: threads for reading the inputs and the wave model's fits; 0: one per hardware thread
};

struct CalibrateResult {
  std::vector<CalibrationRow> rows;           // every row read (all devices; --refine-only's last)
  size_t refine_only_rows = 0;                // how many of them, at the end, are --refine-only's
  std::vector<std::string> notes;             // what each profiler trace yielded
  std::vector<CalibrationProfile> profiles;   // fitted, by device name
  std::vector<std::string> written;           // profile files written
  std::vector<GroupError> kfold_by_category;  // when kfold > 1
  std::vector<GroupError> kfold_by_kernel;
  std::vector<CrossGpuError> cross_gpu;
  std::optional<WaveRows> wave_rows;  // --waves
  std::optional<WaveModel> wave_model;
  std::optional<WaveHeldOut> wave_held_out;  // --leave-one-out
};

// Throws Error for no inputs, a file read twice (by two paths, a folder and a file in it, an input
// and a --refine-only input), -o with rows of several devices and no --device, --fidelity
// without --kfold, an unknown --device, rows of the host CPU (kHostCpuDevice) among those to fit,
// or what reading and fitting throw.
CalibrateResult run_calibration(const CalibrateOptions& options);

}  // namespace mutwo::costmodel
