// Kernels mutwo's own leases timed (calibrate --refine-only) refine their GPU's groups only, and a board of
// the same chip on other memory takes such a refinement's GEMM-like groups alone.
#include <doctest/doctest.h>

#include <random>

#include "costmodel/calibrate.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_fit.hpp"
#include "costmodel/wave_model.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/wave_samples.hpp"

using namespace mutwo::costmodel;
using mutwo::ir::KindCategory;
using mutwo::test::error_of;
using mutwo::test::gemm_row;
using mutwo::test::gemm_sample;
using mutwo::test::wave_group;

namespace {

// 200 GEMMs on `gpu`, priced by `truth` and timed back to back.
std::vector<CalibrationRow> timed(const char* gpu, const WaveGroupFit& truth, unsigned seed) {
  std::vector<CalibrationRow> rows;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dim(64, 4096);
  const DeviceSpec device = find_device(gpu);
  for (int i = 0; i < 200; ++i) {
    const KernelSample s = gemm_sample(1, dim(rng), dim(rng), dim(rng));
    CalibrationRow r = gemm_row(gpu, s);
    r.time_ns = std::llround(predict_wave_ns(
        truth, wave_kernel("gemm", KindCategory::matmul, "", "fp32", s, device), device, 1.0));
    r.timing = Timing::kernel;
    r.source = "test";
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("refine-only rows refine their GPU and leave the cross-GPU groups as the others fit them") {
  WaveGroupFit public_truth =
      wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 1.1, 0.2}, {1'500, 1.3, 0});
  public_truth.tile_choice = true;  // as the fit prices FP32 single products (chooses_tile)
  // The H100 runs the same GEMMs at half the rate: what no public GPU says.
  WaveGroupFit h100_truth =
      wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 2.2, 0.4}, {1'500, 1.3, 0});
  h100_truth.tile_choice = true;  // as the fit prices FP32 single products (chooses_tile)
  std::vector<CalibrationRow> rows = timed("a100-40gb", public_truth, 1);
  const std::vector<CalibrationRow> v100 = timed("v100-16gb", public_truth, 2);
  rows.insert(rows.end(), v100.begin(), v100.end());
  const WaveModel alone = fit_wave_model(prepare_wave_rows(rows), {{"public"}, "2026-11-29", true});
  const size_t shared = rows.size();
  const std::vector<CalibrationRow> h100 = timed("h100-sxm-80gb", h100_truth, 3);
  rows.insert(rows.end(), h100.begin(), h100.end());
  std::vector<char> refine_only(rows.size(), 0);
  std::fill(refine_only.begin() + static_cast<std::ptrdiff_t>(shared), refine_only.end(), 1);
  const WaveModel m = fit_wave_model(prepare_wave_rows(rows, refine_only), {{"public"}, "2026-11-29", true});
  REQUIRE(m.groups.size() == 1);
  // The cross-GPU group is the public rows' alone, to the digit.
  CHECK(m.groups[0].compute == alone.groups[0].compute);
  CHECK(m.groups[0].memory == alone.groups[0].memory);
  CHECK(m.groups[0].rows == 400);
  // The H100's refinement holds its own rate: 2.2 x FLOPs / peak, not the public 1.1.
  const RefinementMatch h = m.refinement_for(find_device("h100-sxm-80gb"));
  REQUIRE(h.refinement != nullptr);
  CHECK(h.refinement->device == "h100-sxm-80gb");
  CHECK_FALSE(h.compute_only);
  REQUIRE(h.refinement->groups.size() == 1);
  CHECK(h.refinement->groups[0].compute[2] == doctest::Approx(2.2).epsilon(0.01));
  CHECK(h.refinement->groups[0].rows == 200);
  // The flags come one per row, and a set is refine-only or not as a whole.
  CHECK(error_of([&] { prepare_wave_rows(rows, std::vector<char>(3, 0)); }) ==
        "wave rows: 3 refine-only flags for 600 rows");
  std::vector<char> split = refine_only;
  split[shared] = 0;
  CHECK(
      error_of([&] { prepare_wave_rows(rows, split); }) ==
      "wave rows: device 'h100-sxm-80gb' source 'test' is given both as a fitted input and as --refine-only; "
      "give each measurement once");
}

TEST_CASE("a board of the same chip on other memory takes a refinement's GEMM-like groups only") {
  WaveModel m;
  m.groups = {wave_group({"gemm", "", "cuda"}, {128, 128}, {1, 0, 1, 0}, {0, 1, 0}),
              wave_group({"elementwise", "", ""}, {128, 128}, {0, 0, 0, 0}, {2, 1, 1})};
  WaveRefinement h100;
  h100.device = "h100-sxm-80gb";
  h100.groups = {wave_group({"gemm", "", "cuda"}, {64, 64}, {4, 0, 1, 0}, {0, 1, 0}),
                 wave_group({"elementwise", "", ""}, {128, 128}, {0, 0, 0, 0}, {5, 1, 1})};
  m.refinements = {h100};
  const WaveGroupKey gemm{"gemm", "", "cuda"};
  const WaveGroupKey elementwise{"elementwise", "", ""};
  // The H100 itself: both of its groups.
  CHECK(m.group_for(gemm, find_device("h100-sxm-80gb")) == &m.refinements[0].groups[0]);
  CHECK(m.group_for(elementwise, find_device("h100-sxm-80gb")) == &m.refinements[0].groups[1]);
  // The H200: GH100 at the same SMs, clock, peaks, L2 and 700 W on HBM3e (4.8 against 3.35 TB/s): the
  // GEMMs are the H100's, streaming is the cross-GPU group's.
  const RefinementMatch h200 = m.refinement_for(find_device("h200"));
  CHECK(h200.refinement == &m.refinements[0]);
  CHECK(h200.compute_only);
  CHECK(m.group_for(gemm, find_device("h200")) == &m.refinements[0].groups[0]);
  CHECK(m.group_for(elementwise, find_device("h200")) == &m.groups[1]);
  // The H100 PCIe is GH100 with 114 SMs at 1.755 GHz: neither.
  CHECK(m.refinement_for(find_device("h100-pcie")).refinement == nullptr);
  CHECK(m.group_for(gemm, find_device("h100-pcie")) == &m.groups[0]);
  CHECK(same_compute_chip(find_device("h100-sxm-80gb"), find_device("h200")));
  CHECK_FALSE(same_chip(find_device("h100-sxm-80gb"), find_device("h200")));
  // The A100 SXM4 (400 W) and the PCIe card (250 W) differ in board power: not one compute chip.
  CHECK_FALSE(same_compute_chip(find_device("a100-80gb"), find_device("a100-pcie-40gb")));
}

TEST_CASE("calibrate --leave-one-out with --refine-only validates the public rows and ships the refinement") {
  // NeuSight's layer norms on five GPUs, the H100 lease's (27 kernel-bound rows of two samples) refine-only.
  CalibrateOptions options;
  options.waves = true;
  options.leave_one_out = true;
  options.fitted_on = "2026-11-29";
  options.inputs = {MUTWO_TEST_FIXTURES "/calibration/neusight/ln"};
  options.refine_only = {MUTWO_TEST_FIXTURES "/device/h100-2026-11-27/call2-kernels/ln",
                         MUTWO_TEST_FIXTURES "/device/h100-2026-11-27/call3-kernels-seed37/ln"};
  const CalibrateResult result = run_calibration(options);
  CHECK(result.rows.size() == 7'000 + 210);
  CHECK(result.refine_only_rows == 210);
  // The leave-one-out holds the five NeuSight GPUs' rows alone.
  REQUIRE(result.wave_rows);
  CHECK(result.wave_rows->rows.size() == 7'000);
  for (const DeviceSpec& d : result.wave_rows->devices) CHECK(d.name != "h100-sxm-80gb");
  REQUIRE(result.wave_held_out);
  CHECK(result.wave_held_out->fits.size() == 5);
  // The model carries the H100's norm group, fitted on its 27 rows, and the inputs say which were
  // refine-only.
  REQUIRE(result.wave_model);
  const RefinementMatch h100 = result.wave_model->refinement_for(find_device("h100-sxm-80gb"));
  REQUIRE(h100.refinement != nullptr);
  REQUIRE(h100.refinement->groups.size() == 1);
  CHECK(h100.refinement->groups[0].key == WaveGroupKey{"norm", "", ""});
  CHECK(h100.refinement->groups[0].rows == 27);
  CHECK(result.wave_model->inputs.back() == "refine-only: " MUTWO_TEST_FIXTURES
                                            "/device/h100-2026-11-27/call3-kernels-seed37/ln");
  // The H200 is another memory: a norm is the memory's, so it keeps the cross-GPU group.
  const RefinementMatch h200 = result.wave_model->refinement_for(find_device("h200"));
  CHECK(h200.compute_only);
  CHECK(result.wave_model->group_for({"norm", "", ""}, h200) == &result.wave_model->groups[0]);
  // Refine-only rows need the wave model.
  options.waves = false;
  options.leave_one_out = false;
  CHECK(error_of([&] { run_calibration(options); }) ==
        "calibrate: --refine-only needs --waves (it refines the wave model's groups)");
}

TEST_CASE("calibrate refuses a date that is not YYYY-MM-DD before it reads anything") {
  CalibrateOptions options;
  options.inputs = {"/nonexistent.csv"};  // never read: the date is checked first
  for (const std::string date : {"", "notadate", "2026-13-01", "2026-11-31", "26-11-29"}) {
    options.fitted_on = date;
    CHECK(error_of([&] { run_calibration(options); }) ==
          "calibrate: --date '" + date + "' is not a date YYYY-MM-DD (2026-11-29)");
  }
  options.fitted_on = "2024-02-29";  // a leap day
  CHECK(error_of([&] { run_calibration(options); }).find("--date") == std::string::npos);
}
