#include "experiments/compare.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "support/median.hpp"

namespace mutwo::experiments {
namespace {

std::optional<double> rel_error(const std::optional<int64_t>& predicted,
                                const std::optional<int64_t>& measured) {
  if (!predicted || !measured || *measured <= 0) return std::nullopt;
  return static_cast<double>(*predicted - *measured) / static_cast<double>(*measured);
}

std::string status_of(const StoredRun& run) {
  const bool p = run.prediction.has_value();
  const bool m = run.measurement.has_value();
  if (!p && !m) return "nothing stored";
  if (!p) return run.measurement->oom ? "measured OOM, no prediction" : "no prediction";
  if (!m) return run.prediction->oom ? "predicted OOM, no measurement" : "no measurement";
  if (run.prediction->oom && run.measurement->oom) return "both OOM";
  if (run.prediction->oom) return "predicted OOM";
  if (run.measurement->oom) return "measured OOM";
  return "ok";
}

ErrorSummary summarise(const std::vector<double>& abs_errors) {
  ErrorSummary s;
  s.count = static_cast<int>(abs_errors.size());
  if (abs_errors.empty()) return s;
  s.median_abs = median(abs_errors);
  s.max_abs = *std::max_element(abs_errors.begin(), abs_errors.end());
  return s;
}

}  // namespace

double median(std::vector<double> values) {
  return support::median(std::move(values), support::EvenMedian::mean_of_middles);
}

std::string run_label(const RunRecord& run) {
  std::string label = run.model;
  auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!label.empty()) label += ' ';
    label += part;
  };
  if (run.models > 0) add(fmt::format("x{}", run.models));
  if (!run.partition.empty()) add(fmt::format("[{}]", run.partition));
  add(run.policy);
  const std::string& device = run.device.empty() ? run.gpu : run.device;
  if (!device.empty()) add("on " + device);
  return label;
}

CompareReport compare_runs(const std::vector<StoredRun>& runs) {
  CompareReport report;
  std::vector<double> step_errors;
  std::vector<double> peak_errors;
  for (const StoredRun& stored : runs) {
    CompareRow row;
    row.run_id = stored.run.id;
    row.kind = stored.run.kind;
    row.label = run_label(stored.run);
    if (const auto& p = stored.prediction) {
      row.predicted_oom = p->oom;
      if (!p->oom) {
        row.predicted_step_ns = p->step_time_ns;
        row.predicted_peak_bytes = p->peak_bytes;
      }
    }
    if (const auto& m = stored.measurement) {
      row.measured_oom = m->oom;
      if (!m->oom) {
        row.measured_step_ns = m->step_time_ns;
        row.measured_peak_bytes = m->peak_bytes;
      }
    }
    row.status = status_of(stored);
    const bool ok = stored.prediction && stored.measurement && !row.predicted_oom && !row.measured_oom;
    if (ok) {
      row.step_rel_error = rel_error(row.predicted_step_ns, row.measured_step_ns);
      row.peak_rel_error = rel_error(row.predicted_peak_bytes, row.measured_peak_bytes);
      ++report.summary.compared;
      if (row.step_rel_error) step_errors.push_back(std::abs(*row.step_rel_error));
      if (row.peak_rel_error) peak_errors.push_back(std::abs(*row.peak_rel_error));
    }
    report.rows.push_back(std::move(row));
  }
  report.summary.runs = static_cast<int>(report.rows.size());
  report.summary.step = summarise(step_errors);
  report.summary.peak = summarise(peak_errors);
  return report;
}

}  // namespace mutwo::experiments
