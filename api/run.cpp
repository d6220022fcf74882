#include "api/run.hpp"

#include "sim/host_mode.hpp"

namespace mutwo::api {

nlohmann::json run_json(const experiments::RunOutcome& out, const std::string& db) {
  const ir::Measurement& m = out.measurement;
  const sim::Prediction& prediction = out.prediction;
  nlohmann::json j;
  j["run_id"] = out.run_id ? nlohmann::json(*out.run_id) : nlohmann::json(nullptr);
  j["database"] = db.empty() ? nlohmann::json(nullptr) : nlohmann::json(db);
  j["schedule"] = {{"graph", out.schedule.graph.name},
                   {"policy", out.schedule.policy},
                   {"instructions", out.schedule.instructions.size()},
                   {"multiplexed", out.multiplexed},
                   {"model_state", out.schedule.host_state.empty() ? "device" : "host"},
                   {"optimizer", out.schedule.host_stream == ir::kNoStream ? "device" : "host"},
                   {"samples_per_step", out.samples_per_step}};
  j["device"] = out.target.label;
  j["gpu"] = out.cost.gpu.name;
  j["memory_limit_bytes"] = out.memory_limit_bytes;
  j["prediction"] = {{"step_time_ns", prediction.step_time_ns},
                     {"peak_bytes", prediction.peak_bytes},
                     {"oom", prediction.oom},
                     {"host_mode", sim::host_mode_name(out.host_mode)},
                     {"host_busy_ns", prediction.host_busy_ns},
                     {"host_bound_idle_ns", prediction.host_bound_idle_ns}};
  j["measurement"] = {{"step_time_ns", m.step_time_ns},
                      {"step_times_ns", m.step_times_ns},
                      {"peak_bytes", m.peak_bytes},
                      {"peak_source", m.peak_source},
                      {"accounted_peak_bytes", m.accounted_peak_bytes},
                      {"iterations", m.iterations},
                      {"wrapped", m.wrapped},
                      {"warmup_iterations", m.warmup_iterations},
                      {"oom", m.oom},
                      {"oom_message", m.oom_message},
                      {"first_losses", m.first_losses},
                      {"losses", m.losses}};
  return j;
}

}  // namespace mutwo::api
