// The wave model's validation (costmodel/wave_validation.hpp): fusion pairs of a batched GEMM and its
// products in smaller kernels, the held-out error scored with each GPU's own harness, and a harness per
// kernel group where one set of eager-op rows falls in two, a fitted model scored on new kernels, and the
// same fits on any number of threads.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_fit.hpp"
#include "costmodel/wave_held_out_csv.hpp"
#include "costmodel/wave_model.hpp"
#include "costmodel/wave_validation.hpp"
#include "support/error.hpp"
#include "tests/support/error_of.hpp"
#include "tests/support/wave_samples.hpp"

using namespace mutwo::costmodel;
using mutwo::ir::KindCategory;
using mutwo::test::error_of;
using mutwo::test::gemm_row;
using mutwo::test::gemm_sample;
using mutwo::test::wave_group;

TEST_CASE("fusion pairs: a batched GEMM against the closest row holding at most half its products") {
  // V100 rows priced by a known group train the fold that holds the A100 out; on the A100, times set by
  // hand: 8 products of 256^3 in 25 us, 5 of 256^3 in 24 us, 2 of 260^3 in 20 us, 1 of 300x256x256.
  const WaveGroupFit truth =
      wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 1.1, 0.2}, {1'500, 1.3, 0});
  std::vector<CalibrationRow> rows;
  const auto add = [&](const char* gpu, int64_t batch, int64_t m, int64_t n, int64_t k, double time_ns) {
    const KernelSample s = gemm_sample(batch, m, n, k);
    CalibrationRow r = gemm_row(gpu, s);
    if (time_ns == 0) {
      const DeviceSpec d = find_device(gpu);
      time_ns = predict_wave_ns(truth, wave_kernel("gemm", KindCategory::matmul, "", "fp32", s, d), d, 1.0);
    }
    r.time_ns = std::llround(time_ns);
    r.source = "test";
    rows.push_back(r);
  };
  for (int i = 0; i < 40; ++i) add("v100-pcie-32gb", 1 + i % 4, 128 + 64 * i, 512, 256 + 32 * i, 0);
  add("a100-pcie-40gb", 8, 256, 256, 256, 25'000);
  add("a100-pcie-40gb", 5, 256, 256, 256, 24'000);
  add("a100-pcie-40gb", 2, 260, 260, 260, 20'000);
  add("a100-pcie-40gb", 1, 300, 256, 256, 9'000);  // 17 % off in m: nobody's partner
  // An exact sweep of one product (kernel-sample.py --fusion-output): B = 4 is as close to B = 1 as
  // to B = 2 and pairs with the single product.
  add("a100-pcie-40gb", 1, 512, 512, 512, 30'000);
  add("a100-pcie-40gb", 2, 512, 512, 512, 40'000);
  add("a100-pcie-40gb", 4, 512, 512, 512, 60'000);
  const WaveRows w = prepare_wave_rows(rows);
  const WaveModel fitted = fit_wave_model(w, {{"synthetic"}, "2026-11-27", false});
  const std::vector<FusionPair> pairs = fusion_pairs(w, leave_one_gpu_out(w), fitted);
  std::vector<const FusionPair*> a100;
  for (const FusionPair& p : pairs) {
    if (p.device == "a100-pcie-40gb") a100.push_back(&p);
  }
  REQUIRE(a100.size() == 4);  // B = 8 and B = 5, each with the 2 x 260^3 row (B = 2 has no partner)
  // Per product of the B = 2 row scaled to 256^3: 10,000 ns * 256^3 / 260^3 = 9,545.51 ns.
  CHECK(a100[0]->batch == 8);
  CHECK(a100[0]->smaller_batch == 2);
  CHECK(a100[0]->measured_speedup == doctest::Approx(8 * 9'545.51 / 25'000).epsilon(1e-5));  // 3.0546
  CHECK(a100[1]->batch == 5);
  CHECK(a100[1]->measured_speedup == doctest::Approx(5 * 9'545.51 / 24'000).epsilon(1e-5));  // 1.9887
  CHECK(a100[2]->smaller_batch == 1);
  CHECK(a100[2]->measured_speedup == doctest::Approx(2 * 30'000.0 / 40'000));
  CHECK(a100[3]->batch == 4);
  CHECK(a100[3]->smaller_batch == 1);                                          // not 2
  CHECK(a100[3]->measured_speedup == doctest::Approx(4 * 30'000.0 / 60'000));  // 2.0, not 1.33
  for (const FusionPair* p : a100) {
    CHECK(p->predicted_speedup > 0);
    CHECK(p->fitted_speedup > 0);
  }
}

TEST_CASE(
    "the held-out error with each GPU's own harness: eager rows less the fitted harness, others as held "
    "out") {
  std::vector<CalibrationRow> rows;
  const auto add = [&](const char* gpu, const char* source, Timing timing, int64_t time_ns) {
    CalibrationRow r = gemm_row(gpu, gemm_sample(1, 512, 512, 512));
    r.time_ns = time_ns;
    r.timing = timing;
    r.source = source;
    rows.push_back(r);
  };
  add("v100-16gb", "neusight test", Timing::eager_op, 30'000);
  add("v100-16gb", "neusight test", Timing::eager_op, 50'000);
  add("a100-40gb", "test", Timing::kernel, 10'000);
  add("v100-16gb", "neusight other", Timing::eager_op, 70'000);  // no harness fitted: left out
  const WaveRows w = prepare_wave_rows(rows);
  WaveHeldOut h;
  h.scored = {1, 1, 1, 1};
  h.measured = {10'000, 30'000, 10'000, 50'000};  // the eager rows less the harness rule's 20 us
  h.predicted = {20'000, 40'000, 11'000, 50'000};
  WaveModel fitted;
  fitted.harness = {{"v100-16gb", "neusight test", 25'000, 5'000, {}}};  // no group: every group's
  const std::vector<WaveError> own = held_out_by_category_own_harness(w, h, fitted, false);
  REQUIRE(own.size() == 1);
  CHECK(own[0].group == "GEMM/linear");
  // (20 - 25) / 25 = -0.2, (40 - 45) / 45 = -0.1111, (11 - 10) / 10 = +0.1.
  CHECK(own[0].error.count == 3);
  CHECK(own[0].error.median == doctest::Approx(1.0 / 9));
  CHECK(own[0].error.mean == doctest::Approx((0.2 + 1.0 / 9 + 0.1) / 3));
  CHECK(own[0].signed_median == doctest::Approx(-1.0 / 9));
  // Under the harness rule the same rows err +1.0, +0.333, +0.1 and 0.
  const std::vector<WaveError> rule = held_out_categories_overall(w, h);
  REQUIRE(rule.size() == 1);
  CHECK(rule[0].error.median == doctest::Approx((1.0 / 3 + 0.1) / 2));
  // Per device: the V100's two eager rows apart from the A100's kernel row.
  const std::vector<WaveError> by_device = held_out_by_category_own_harness(w, h, fitted, true);
  REQUIRE(by_device.size() == 2);
  CHECK((by_device[0].device == "a100-40gb" && by_device[0].dataset == "DeepBench"));
  CHECK(by_device[0].signed_median == doctest::Approx(0.1));
  CHECK((by_device[1].device == "v100-16gb" && by_device[1].dataset == "NeuSight"));
  CHECK(by_device[1].signed_median == doctest::Approx((-0.2 - 1.0 / 9) / 2));
}

TEST_CASE("a set whose rows fall in two groups keeps a harness per group, fitted and held out") {
  // NeuSight-like softmax rows on three GPUs, timed as eager ops: the warp kernel's rows hold 5 us of
  // harness, the block kernel's 20 us (as if the host's share differed by kernel), both priced by one
  // known memory rate (HBM only: the L2 rate is set high so that it never wins).
  WaveGroupFit truth = wave_group({"reduction", "", ""}, {}, {}, {0, 1.6, 5.0});
  truth.fixed_cost_fitted = false;
  std::vector<CalibrationRow> rows;
  for (const char* gpu : {"a100-40gb", "v100-16gb", "t4"}) {
    const DeviceSpec device = find_device(gpu);
    for (int i = 0; i < 60; ++i) {
      const bool warp = i % 2 == 0;
      CalibrationRow r;
      r.device = gpu;
      r.precision = "fp32";
      r.kernel = "softmax";
      r.category = KindCategory::reduction;
      r.row_elements = warp ? 512 : 2048;
      r.bytes = (int64_t{16} << 20) * (1 + i);  // 16 MiB to 960 MiB
      r.m = r.bytes / 8;
      KernelSample s;
      s.bytes = static_cast<double>(r.bytes);
      s.row_elements = r.row_elements;
      const double price = predict_wave_ns(
          truth, wave_kernel("softmax", KindCategory::reduction, "", "fp32", s, device), device, 1.0);
      r.time_ns = std::llround(price + (warp ? 5'000.0 : 20'000.0));
      r.timing = Timing::eager_op;
      r.source = "neusight softmax";
      rows.push_back(r);
    }
  }
  const WaveRows w = prepare_wave_rows(rows);
  // Fitted on every GPU: two harness entries per GPU, one per kernel's group.
  const WaveModel m = fit_wave_model(w, {{"synthetic"}, "2026-11-28", false});
  REQUIRE(m.harness.size() == 6);
  for (const HarnessFit& h : m.harness) {
    CHECK(h.harness_ns ==
          doctest::Approx(h.group.variant == kSoftmaxWarpVariant ? 5'000 : 20'000).epsilon(0.01));
  }
  // Held out: each group's harness from the other GPUs' ratio in that group, so within one GPU's set
  // (one floor) the two stand as 5 to 20.
  const WaveHeldOut held = leave_one_gpu_out(w);
  size_t t4_set = w.sets.size();
  for (size_t s = 0; s < w.sets.size(); ++s) {
    if (w.sets[s].first == "t4") t4_set = s;
  }
  REQUIRE(t4_set < w.sets.size());
  const double warp_h = held.harness_ns.at({t4_set, WaveGroupKey{"reduction", "warp", ""}});
  const double block_h = held.harness_ns.at({t4_set, WaveGroupKey{"reduction", "", ""}});
  CHECK(warp_h / block_h == doctest::Approx(0.25).epsilon(0.01));
}

TEST_CASE("the held-out CSV: one line per scored row, the harness taken out, the signed error") {
  std::vector<CalibrationRow> rows;
  const auto add = [&](const char* gpu, const char* source, Timing timing, int64_t batch, int64_t time_ns) {
    CalibrationRow r = gemm_row(gpu, gemm_sample(batch, 512, 256, 128));
    r.time_ns = time_ns;
    r.timing = timing;
    r.source = source;
    rows.push_back(r);
  };
  add("v100-16gb", "neusight test", Timing::eager_op, 1, 30'000);
  add("a100-40gb", "deepbench, test", Timing::kernel, 4, 10'000);
  add("v100-16gb", "neusight test", Timing::eager_op, 1, 9'000);  // not scored: left out
  const WaveRows w = prepare_wave_rows(rows);
  WaveHeldOut h;
  h.scored = {1, 1, 0};
  h.measured = {20'000, 10'000, 0};  // the eager row less a 10 us harness
  h.predicted = {15'000, 12'500, 0};
  const std::string csv = wave_held_out_csv(w, h);
  const std::string header(kWaveHeldOutCsvHeader);
  CHECK(csv ==
        header + "\n" +
            "v100-16gb,NeuSight,neusight test,GEMM/linear,gemm,,fp32,gemm (cuda),1,512,256,128,33554432,"
            "917504,30000,10000,20000,15000,-0.250000\n"
            "a100-40gb,DeepBench,\"deepbench, test\",bmm,gemm,,fp32,gemm batched (cuda),4,512,256,128,"
            "134217728,3670016,10000,0,10000,12500,0.250000\n");
  h.scored.pop_back();
  CHECK_THROWS_WITH_AS(wave_held_out_csv(w, h), doctest::Contains("cover 2 rows, the rows are 3"),
                       mutwo::Error);
}

TEST_CASE("scoring a fitted model: a GPU's refinement or its chip's, and the harness rule over other GPUs") {
  // The model: a cross-GPU gemm group; the H100's own one (twice the FLOP cost), which the H200 (the
  // same GH100 on other memory) takes; NeuSight-style harness terms of two other GPUs (0.4 and 0.5 of
  // their floors: 0.45 by the median) and of the H200 itself (0.9), which the rule must not use.
  WaveModel m;
  m.groups = {wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 1.1, 0.2}, {1'500, 1.3, 0})};
  WaveRefinement h100;
  h100.device = "h100-sxm-80gb";
  h100.groups = {wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 2.2, 0.4}, {1'500, 1.3, 0})};
  m.refinements = {h100};
  const WaveGroupKey gemm{"gemm", "", "cuda"};
  m.harness = {{"a100-40gb", "neusight test", 50'000, 20'000, gemm},
               {"v100-16gb", "neusight test", 40'000, 20'000, gemm},
               {"h200", "neusight test", 50'000, 45'000, gemm}};
  std::vector<CalibrationRow> rows;
  for (int i = 1; i <= 20; ++i) {
    CalibrationRow r = gemm_row("h200", gemm_sample(1, 256 * i, 1024, 1024));
    r.timing = Timing::eager_op;
    r.source = "neusight test";
    r.time_ns = 30'000 + 25'000 * i;
    rows.push_back(r);
  }
  // 4 products of row 8's shape (2048 x 1024 x 1024) in one kernel: a fusion pair with row 8.
  const WaveGroupKey batched{"gemm", "batched", "cuda"};
  m.harness.push_back({"a100-40gb", "neusight test", 50'000, 20'000, batched});
  m.harness.push_back({"v100-16gb", "neusight test", 40'000, 20'000, batched});
  CalibrationRow four = gemm_row("h200", gemm_sample(4, 2048, 1024, 1024));
  four.timing = Timing::eager_op;
  four.source = "neusight test";
  four.time_ns = 400'000;
  rows.push_back(four);
  CalibrationRow kernel = gemm_row("v100-16gb", gemm_sample(1, 2048, 2048, 2048));
  kernel.timing = Timing::kernel;
  kernel.source = "test";
  kernel.time_ns = 2'000'000;
  rows.push_back(kernel);
  const WaveRows w = prepare_wave_rows(rows);
  const WaveHeldOut h = score_wave_model(w, m);
  CHECK(h.fits.empty());
  REQUIRE(h.harness_ns.size() == 2);
  // The set's floor: the median of its 2 smallest rows, 55,000 and 80,000 ns; its harness 0.45 of that.
  CHECK(w.set_floor_ns[0] == 67'500);
  CHECK(h.harness_ns.at({0, gemm}) == doctest::Approx(30'375));
  const DeviceSpec h200 = find_device("h200");
  size_t scored = 0;
  for (size_t i = 0; i < 20; ++i) {
    // Kernel-bound from 2 x 67,500 ns: rows 5 ... 20.
    CHECK(h.scored[i] == (rows[i].time_ns >= 135'000 ? 1 : 0));
    if (!h.scored[i]) continue;
    ++scored;
    CHECK(h.measured[i] == doctest::Approx(static_cast<double>(rows[i].time_ns) - 30'375));
    CHECK(h.predicted[i] == doctest::Approx(predict_wave_ns(h100.groups[0], w.kernels[i], h200, 1.0)));
  }
  CHECK(scored == 16);
  // A V100 kernel: the cross-GPU group, its time as measured.
  CHECK(h.scored[21]);
  CHECK(h.measured[21] == 2'000'000);
  CHECK(h.predicted[21] ==
        doctest::Approx(predict_wave_ns(m.groups[0], w.kernels[21], find_device("v100-16gb"), 1.0)));
  // The pair, without folds, is priced by the scored model: the H100's group for both sides (the
  // batched kernel has no group of its own), its harness the batched group's rule.
  CHECK(h.harness_ns.at({0, batched}) == doctest::Approx(30'375));
  const std::vector<FusionPair> pairs = fusion_pairs(w, h, m);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].single_row == 7);
  CHECK(pairs[0].measured_speedup == doctest::Approx(4 * (230'000 - 30'375.0) / (400'000 - 30'375.0)));
  const double single = predict_wave_ns(h100.groups[0], w.kernels[7], h200, 1.0);
  CHECK(pairs[0].predicted_speedup == doctest::Approx(4 * single / h.predicted[20]));
  CHECK(pairs[0].predicted_speedup == doctest::Approx(pairs[0].fitted_speedup));
}

TEST_CASE("the fits give the same model and held-out prices on one thread and on several") {
  // Noisy kernels of single and batched products on three GPUs, some timed as eager ops: the tile
  // grid, the energy grid, the regimes and the harness all have choices to make, on 1 thread and on 3.
  const WaveGroupFit truth =
      wave_group({"gemm", "", "cuda"}, {128, 64}, {3'000, 900, 1.1, 0.2}, {1'500, 1.3, 0});
  std::vector<CalibrationRow> rows;
  std::mt19937 rng(23);
  std::uniform_int_distribution<int> dim(32, 2048);
  std::lognormal_distribution<double> noise(0.0, 0.15);
  for (const char* gpu : {"a100-pcie-40gb", "v100-pcie-32gb", "t4"}) {
    const DeviceSpec d = find_device(gpu);
    for (int i = 0; i < 120; ++i) {
      const KernelSample s = gemm_sample(i % 3 == 0 ? 1 + i % 16 : 1, dim(rng), dim(rng), dim(rng));
      CalibrationRow r = gemm_row(gpu, s);
      const bool eager = i % 4 == 0;
      const double price =
          predict_wave_ns(truth, wave_kernel("gemm", KindCategory::matmul, "", "fp32", s, d), d, 1.0);
      r.time_ns = std::llround(price * noise(rng) + (eager ? 20'000.0 : 0.0));
      r.timing = eager ? Timing::eager_op : Timing::kernel;
      r.source = eager ? "neusight test" : "test";
      rows.push_back(r);
    }
  }
  const WaveRows w = prepare_wave_rows(rows);
  const WaveModel one = fit_wave_model(w, {{"synthetic"}, "2026-11-30", true, 1});
  const WaveModel three = fit_wave_model(w, {{"synthetic"}, "2026-11-30", true, 3});
  CHECK(one.groups.size() >= 2);  // single and batched products
  CHECK(!one.refinements.empty());
  CHECK(wave_model_json(one) == wave_model_json(three));
  const WaveHeldOut held_one = leave_one_gpu_out(w, 1);
  const WaveHeldOut held_three = leave_one_gpu_out(w, 3);
  CHECK(held_one.scored == held_three.scored);
  CHECK(held_one.predicted == held_three.predicted);
  CHECK(held_one.harness_ns == held_three.harness_ns);
}

TEST_CASE("a wave model file with a coefficient no fit gives is refused naming the group and the term") {
  WaveModel m;
  m.fitted_on = "2026-11-29";
  m.groups = {wave_group({"gemm", "", "tensor"}, {256, 128}, {1, 2, 3, 4}, {5, 6, 7})};
  m.harness = {{"t4", "neusight add", 25'000, 14'000, {"elementwise", "", ""}}};
  m.energy_pj_per_flop = 17.5;
  const auto refusal = [](const WaveModel& bad) {
    try {
      parse_wave_model(wave_model_json(bad), "w.json");
      return std::string("read");
    } catch (const mutwo::FormatError& e) {
      return std::string(e.what());
    }
  };
  CHECK(refusal(m) == "read");
  WaveModel huge = m;
  huge.groups[0].compute[2] = 1e308;  // priced every kernel at inf
  CHECK(refusal(huge) ==
        "wave model 'w.json': groups 0 (gemm (tensor)): field 'compute'[2] (cf) = 1e+308 is more than 1e+06 "
        "(a millionth of the datasheet rate): not a fitted model");
  huge = m;
  huge.groups[0].memory[0] = 4e12;
  CHECK(
      refusal(huge) ==
      "wave model 'w.json': groups 0 (gemm (tensor)): field 'memory'[0] (d0) = 4e+12 is more than 3.6e+12 ns "
      "(an hour): not a fitted model");
  huge = m;
  huge.energy_pj_per_flop = 1e7;
  CHECK(
      refusal(huge) ==
      "wave model 'w.json': field 'energy_pj_per_flop' = 1e+07 is more than 1e+06 pJ per FLOP: not a fitted "
      "model");
  WaveModel negative = m;
  negative.harness[0].harness_ns = -1000;  // scored nothing, silently
  CHECK(refusal(negative) ==
        "wave model 'w.json': harness 0 (t4, 'neusight add', elementwise): field 'harness_ns' = -1000 must "
        "be >= 0 "
        "and at most 3.6e+12 ns (an hour)");
  negative = m;
  negative.harness[0].floor_ns = 0;
  CHECK(refusal(negative) ==
        "wave model 'w.json': harness 0 (t4, 'neusight add', elementwise): field 'floor_ns' = 0 must be > 0 "
        "and "
        "at most 3.6e+12 ns (an hour)");
  // The shipped model is within every bound, by orders of magnitude.
  CHECK_FALSE(shipped_wave_model().groups.empty());
}

TEST_CASE("no fusion pairs: no median error, not 0 %") {
  CHECK_FALSE(fusion_median_error({}).has_value());
  CHECK_FALSE(fusion_median_error({}, true).has_value());
  FusionPair p;
  p.measured_speedup = 2;
  p.predicted_speedup = 1.5;
  p.fitted_speedup = 2;
  CHECK(*fusion_median_error({p}) == 0.25);
  CHECK(*fusion_median_error({p}, true) == 0);
}

TEST_CASE("a wave model file refines each catalog device once, and gives each harness once") {
  // A second refinement of a device was never read, and a typo'd device fell back to the cross-GPU
  // groups unsaid; a repeated harness entry was read as one.
  WaveModel m;
  m.groups = {wave_group({"gemm", "", "tensor"}, {256, 128}, {1, 2, 3, 4}, {5, 6, 7})};
  m.refinements = {{"v100-16gb", m.groups}};
  m.harness = {{"t4", "neusight add", 25'000, 14'000, {"elementwise", "", ""}}};
  const std::string text = wave_model_json(m);
  CHECK_NOTHROW(parse_wave_model(text, "w.json"));
  WaveModel twice = m;
  twice.refinements.push_back(m.refinements[0]);
  CHECK(error_of([&] { parse_wave_model(wave_model_json(twice), "w.json"); }) ==
        "wave model 'w.json': refinement 1: field 'device' = 'v100-16gb' is refined already by an earlier "
        "refinement; give each device one");
  WaveModel typo = m;
  typo.refinements[0].device = "v100-16gb-typo";
  CHECK(error_of([&] { parse_wave_model(wave_model_json(typo), "w.json"); })
            .starts_with(
                "wave model 'w.json': refinement 0: field 'device' = 'v100-16gb-typo' is not a catalog "
                "device; valid: a10, "));
  WaveModel harness = m;
  harness.harness.push_back(m.harness[0]);
  CHECK(error_of([&] { parse_wave_model(wave_model_json(harness), "w.json"); }) ==
        "wave model 'w.json': harness 1 (t4, 'neusight add', elementwise): a harness of this device, source "
        "and "
        "group is given already; give each one once");
}
