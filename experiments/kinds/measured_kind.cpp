// Kind `measured`: nothing is run. Its table and figure read the runs `mutwo run` stored (one
// prediction and one measurement of the same schedule) and set predicted against measured step
// time: how far the simulator can be trusted on this GPU.
#include <fmt/format.h>

#include "experiments/kinds/array_point.hpp"
#include "experiments/results_db.hpp"

namespace mutwo::experiments {
namespace {

class MeasuredKind final : public ExperimentKind {
 public:
  std::string_view name() const override { return "measured"; }
  std::string_view description() const override {
    return "predicted against measured step time of the runs `mutwo run` stored (nothing is run)";
  }
  const std::vector<std::string_view>& sweep_keys() const override {
    static const std::vector<std::string_view> keys = {};
    return keys;
  }
  const std::vector<std::string_view>& figures() const override {
    static const std::vector<std::string_view> f = {"predicted_vs_measured"};
    return f;
  }
  void validate(const ExperimentSpec&) const override {}
  std::vector<Task> expand(const ExperimentSpec&) const override { return {}; }
  std::vector<ResultRow> run(const ExperimentSpec&, const Task&) const override { return {}; }

  CsvTable table(const ExperimentSpec&, const std::vector<StoredExperimentRow>&,
                 const ResultsDb& db) const override {
    CsvTable t;
    t.header = {"run_id",
                "created_at",
                "model",
                "models",
                "partition",
                "policy",
                "batch_size",
                "device",
                "gpu",
                "cost_source",
                "predicted_step_time_ns",
                "measured_step_time_ns",
                "error_pct",
                "predicted_peak_bytes",
                "measured_peak_bytes",
                "mutwo_version"};
    for (const StoredRun& s : db.runs()) {
      if (s.run.kind != "run" || !s.prediction || !s.measurement) continue;
      if (s.prediction->oom || s.measurement->oom || s.measurement->step_time_ns <= 0) continue;
      const RunRecord& r = s.run;
      const double error_pct = 100.0 *
                               static_cast<double>(s.prediction->step_time_ns - s.measurement->step_time_ns) /
                               static_cast<double>(s.measurement->step_time_ns);
      t.rows.push_back({std::to_string(r.id), r.created_at, r.model, std::to_string(r.models), r.partition,
                        r.policy, std::to_string(r.batch_size), r.device, r.gpu, r.cost_source,
                        std::to_string(s.prediction->step_time_ns),
                        std::to_string(s.measurement->step_time_ns), number_cell(error_pct),
                        std::to_string(s.prediction->peak_bytes), std::to_string(s.measurement->peak_bytes),
                        r.mutwo_version});
    }
    return t;
  }
};

}  // namespace

void register_measured_kind(ExperimentKindRegistry& registry) {
  registry.add(std::make_unique<MeasuredKind>());
}

}  // namespace mutwo::experiments
