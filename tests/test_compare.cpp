// Predicted against measured: per-run relative errors, statuses for what cannot be compared, and
// the summary (median and max of |error|) over the runs that can.
#include "experiments/compare.hpp"
#include "tests/support/result_records.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <vector>

using namespace mutwo::experiments;

namespace {

using mutwo::test::kGiB;
using mutwo::test::kMs;
using mutwo::test::measured;
using mutwo::test::predicted;

StoredRun stored(int64_t id, std::optional<PredictionRecord> p, std::optional<MeasurementRecord> m) {
  StoredRun s;
  s.run.id = id;
  s.run.kind = "run";
  s.run.model = "resnet18";
  s.run.models = 2;
  s.run.partition = "1,1";
  s.run.policy = "none";
  s.run.device = "cuda:0";
  s.prediction = std::move(p);
  s.measurement = std::move(m);
  return s;
}

}  // namespace

TEST_CASE("relative error is (predicted - measured) / measured, per figure") {
  // Step: predicted 110 ms, measured 100 ms -> +10.0 %. Peak: predicted 3 GiB, measured 4 GiB -> -25.0 %.
  const CompareReport r =
      compare_runs({stored(7, predicted(110 * kMs, 3 * kGiB), measured(100 * kMs, 4 * kGiB))});
  REQUIRE(r.rows.size() == 1);
  const CompareRow& row = r.rows[0];
  CHECK(row.run_id == 7);
  CHECK(row.kind == "run");
  CHECK(row.label == "resnet18 x2 [1,1] none on cuda:0");
  CHECK(row.status == "ok");
  CHECK(row.predicted_step_ns == 110 * kMs);
  CHECK(row.measured_step_ns == 100 * kMs);
  CHECK(row.predicted_peak_bytes == 3 * kGiB);
  CHECK(row.measured_peak_bytes == 4 * kGiB);
  REQUIRE(row.step_rel_error);
  CHECK(*row.step_rel_error == doctest::Approx(0.10).epsilon(1e-12));
  REQUIRE(row.peak_rel_error);
  CHECK(*row.peak_rel_error == -0.25);  // (3 - 4) / 4, exact in binary
  CHECK(r.summary.runs == 1);
  CHECK(r.summary.compared == 1);
  CHECK(r.summary.step.count == 1);
  CHECK(r.summary.step.median_abs == doctest::Approx(0.10).epsilon(1e-12));
  CHECK(r.summary.peak.max_abs == 0.25);
}

TEST_CASE("the summary takes the median and max of |error|; median of 3 is the middle value") {
  // Steps: 125 vs 100 ms -> +25 %; 50 vs 100 ms -> -50 %; 80 vs 80 ms -> 0 %.
  //   |errors| sorted 0, 0.25, 0.5 -> median 0.25, max 0.5.
  // Peaks: 7 vs 8 GiB -> -12.5 %; 9 vs 8 GiB -> +12.5 %; 3 vs 2 GiB -> +50 %.
  //   |errors| sorted 0.125, 0.125, 0.5 -> median 0.125, max 0.5.
  const CompareReport r = compare_runs({
      stored(1, predicted(125 * kMs, 7 * kGiB), measured(100 * kMs, 8 * kGiB)),
      stored(2, predicted(50 * kMs, 9 * kGiB), measured(100 * kMs, 8 * kGiB)),
      stored(3, predicted(80 * kMs, 3 * kGiB), measured(80 * kMs, 2 * kGiB)),
  });
  CHECK(*r.rows[0].step_rel_error == 0.25);
  CHECK(*r.rows[1].step_rel_error == -0.5);
  CHECK(*r.rows[2].step_rel_error == 0.0);
  CHECK(*r.rows[0].peak_rel_error == -0.125);
  CHECK(*r.rows[1].peak_rel_error == 0.125);
  CHECK(*r.rows[2].peak_rel_error == 0.5);
  CHECK(r.summary.compared == 3);
  CHECK(r.summary.step.count == 3);
  CHECK(r.summary.step.median_abs == 0.25);
  CHECK(r.summary.step.max_abs == 0.5);
  CHECK(r.summary.peak.median_abs == 0.125);
  CHECK(r.summary.peak.max_abs == 0.5);
}

TEST_CASE("median of an even count is the mean of the two middle values") {
  // Steps: 101, 96, 120, 90 ms against 100 ms -> |errors| 0.01, 0.04, 0.2, 0.1;
  //   sorted 0.01, 0.04, 0.1, 0.2 -> median (0.04 + 0.1) / 2 = 0.07, max 0.2.
  const CompareReport r = compare_runs({
      stored(1, predicted(101 * kMs, kGiB), measured(100 * kMs, kGiB)),
      stored(2, predicted(96 * kMs, kGiB), measured(100 * kMs, kGiB)),
      stored(3, predicted(120 * kMs, kGiB), measured(100 * kMs, kGiB)),
      stored(4, predicted(90 * kMs, kGiB), measured(100 * kMs, kGiB)),
  });
  CHECK(r.summary.step.count == 4);
  CHECK(r.summary.step.median_abs == doctest::Approx(0.07).epsilon(1e-12));
  CHECK(r.summary.step.max_abs == doctest::Approx(0.2).epsilon(1e-12));
  // Equal peaks everywhere: every peak error 0.
  CHECK(r.summary.peak.median_abs == 0.0);
  CHECK(r.summary.peak.max_abs == 0.0);

  CHECK(median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(median({4.0, 1.0, 3.0, 2.0}) == 2.5);  // (2 + 3) / 2
  CHECK(median({5.0}) == 5.0);
  CHECK(median({}) == 0.0);
}

TEST_CASE("an OOM on either side is a status, never a number, and stays out of the summary") {
  const CompareReport r = compare_runs({
      stored(1, predicted(100 * kMs, kGiB), measured(200 * kMs, 2 * kGiB)),  // -50 %, -50 %
      stored(2, predicted(5 * kMs, 40 * kGiB, /*oom=*/true), measured(100 * kMs, kGiB)),
      stored(3, predicted(100 * kMs, kGiB), measured(0, 0, /*oom=*/true)),
      stored(4, predicted(5 * kMs, 40 * kGiB, true), measured(0, 0, true)),
  });
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[1].status == "predicted OOM");
  CHECK(r.rows[1].predicted_oom);
  CHECK_FALSE(r.rows[1].predicted_step_ns);
  CHECK_FALSE(r.rows[1].predicted_peak_bytes);
  CHECK(r.rows[1].measured_step_ns == 100 * kMs);  // the side that ran keeps its figures
  CHECK_FALSE(r.rows[1].step_rel_error);
  CHECK_FALSE(r.rows[1].peak_rel_error);

  CHECK(r.rows[2].status == "measured OOM");
  CHECK(r.rows[2].measured_oom);
  CHECK_FALSE(r.rows[2].measured_step_ns);
  CHECK_FALSE(r.rows[2].measured_peak_bytes);
  CHECK(r.rows[2].predicted_step_ns == 100 * kMs);
  CHECK_FALSE(r.rows[2].step_rel_error);

  CHECK(r.rows[3].status == "both OOM");
  CHECK_FALSE(r.rows[3].step_rel_error);

  // Only run 1 counts: median = max = 0.5 for both figures.
  CHECK(r.summary.runs == 4);
  CHECK(r.summary.compared == 1);
  CHECK(r.summary.step.count == 1);
  CHECK(r.summary.step.median_abs == 0.5);
  CHECK(r.summary.step.max_abs == 0.5);
  CHECK(r.summary.peak.max_abs == 0.5);
}

TEST_CASE("runs without a prediction or a measurement are listed and not compared") {
  StoredRun simulated = stored(1, predicted(100 * kMs, kGiB), std::nullopt);
  simulated.run.kind = "simulate";
  simulated.run.device = "";
  simulated.run.gpu = "h100-sxm-80gb";
  const CompareReport r = compare_runs({
      simulated,
      stored(2, std::nullopt, measured(100 * kMs, kGiB)),
      stored(3, std::nullopt, std::nullopt),
      stored(4, predicted(100 * kMs, kGiB, true), std::nullopt),
      stored(5, std::nullopt, measured(0, 0, true)),
  });
  CHECK(r.rows[0].status == "no measurement");
  CHECK(r.rows[0].label == "resnet18 x2 [1,1] none on h100-sxm-80gb");  // the catalog GPU when nothing ran
  CHECK(r.rows[0].predicted_step_ns == 100 * kMs);
  CHECK_FALSE(r.rows[0].measured_step_ns);
  CHECK_FALSE(r.rows[0].step_rel_error);
  CHECK(r.rows[1].status == "no prediction");
  CHECK(r.rows[1].measured_step_ns == 100 * kMs);
  CHECK(r.rows[2].status == "nothing stored");
  CHECK(r.rows[3].status == "predicted OOM, no measurement");
  CHECK(r.rows[4].status == "measured OOM, no prediction");
  CHECK(r.summary.runs == 5);
  CHECK(r.summary.compared == 0);
  CHECK(r.summary.step.count == 0);
  CHECK(r.summary.step.median_abs == 0.0);
  CHECK(r.summary.peak.count == 0);
}

TEST_CASE("a zero measured figure gives no relative error for that figure only") {
  // A CPU run may record no peak (0 B): the step error stands, the peak error is undefined.
  // Step: 90 vs 100 ms -> -10 %.
  const CompareReport r = compare_runs({stored(1, predicted(90 * kMs, kGiB), measured(100 * kMs, 0))});
  CHECK(r.rows[0].status == "ok");
  CHECK(r.rows[0].step_rel_error);
  CHECK_FALSE(r.rows[0].peak_rel_error);
  CHECK(r.summary.compared == 1);
  CHECK(r.summary.step.count == 1);
  CHECK(r.summary.peak.count == 0);
}

TEST_CASE("labels leave out what a run does not have") {
  RunRecord run;
  run.model = "schedule.json";
  CHECK(run_label(run) == "schedule.json");
  run.models = 3;
  run.policy = "dtr";
  CHECK(run_label(run) == "schedule.json x3 dtr");
  run.partition = "2,1";
  run.device = "cpu";
  CHECK(run_label(run) == "schedule.json x3 [2,1] dtr on cpu");
  CHECK(run_label(RunRecord{}).empty());
}

TEST_CASE("rows keep the order of the runs given") {
  const CompareReport r =
      compare_runs({stored(9, std::nullopt, std::nullopt), stored(2, std::nullopt, std::nullopt)});
  CHECK(r.rows[0].run_id == 9);
  CHECK(r.rows[1].run_id == 2);
  CHECK(compare_runs({}).rows.empty());
  CHECK(compare_runs({}).summary.runs == 0);
}
