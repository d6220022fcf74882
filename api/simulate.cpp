#include "api/simulate.hpp"

#include <fmt/format.h>

#include "sim/prediction_json.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"

namespace mutwo::api {

SimulateResult simulate(const SimulateRequest& request, const costmodel::OpCostModel& cost,
                        const costmodel::DeviceSpec& device) {
  ir::Schedule schedule;
  if (!request.policy.empty() || request.state_offload) {
    if (!request.source.schedule_file.empty())
      throw Error("--policy and --state-offload plan a model array (--model), not a --schedule file");
    if (device.memory_bytes <= 0)
      throw Error(fmt::format("--policy needs a memory limit; device '{}' has none", device.name));
    experiments::RunRequest run;
    run.source = request.source;
    run.policy = request.policy.empty() ? "none" : request.policy;
    run.order = request.order;
    run.state_offload = request.state_offload;
    run.optimizer_on = request.optimizer_on;
    run.wrap = request.wrap;
    run.allow_oom = true;
    schedule = experiments::plan_run(run, cost, device.memory_bytes).schedule;
  } else {
    schedule = experiments::plain_schedule(request.source);
  }
  return simulate_schedule(std::move(schedule), request, cost);
}

SimulateResult simulate_schedule(ir::Schedule schedule, const SimulateRequest& request,
                                 const costmodel::OpCostModel& cost) {
  if (request.wrap && request.iterations < 2)
    throw Error(fmt::format("--wrap merges iteration boundaries: it needs --iterations 2 or more, not {}",
                            request.iterations));
  SimulateResult out;
  out.schedule = std::move(schedule);
  sim::SimOptions options;
  options.record_timeline = request.record_timeline;
  options.host_mode = sim::parse_host_mode(request.host_mode);
  options.iterations = request.iterations;
  options.wrap_iterations = request.wrap;
  out.host_mode = options.host_mode;
  out.prediction = sim::simulate(out.schedule, cost, options);
  out.samples_per_step = ir::samples_per_step(out.schedule);
  return out;
}

nlohmann::json simulate_json(const ir::Schedule& schedule, const sim::Prediction& p, sim::HostMode host_mode,
                             const costmodel::DeviceSpec& device, const std::string& cost_source,
                             const std::string& cost_source_detail, const TracedStep* traced) {
  const int64_t samples = ir::samples_per_step(schedule);
  nlohmann::json j;
  j["schedule"] = {{"graph", schedule.graph.name},
                   {"policy", schedule.policy},
                   {"instructions", schedule.instructions.size()},
                   {"samples_per_step", samples}};
  nlohmann::json subs = nlohmann::json::array();
  for (const ir::SubArray& s : schedule.sub_arrays) subs.push_back({{"name", s.name}, {"width", s.width}});
  j["schedule"]["sub_arrays"] = subs;
  j["device"] = {{"name", device.name},
                 {"memory_bytes", device.memory_bytes},
                 {"h2d_bytes_per_ns", device.h2d_bytes_per_ns},
                 {"d2h_bytes_per_ns", device.d2h_bytes_per_ns},
                 {"full_duplex", device.full_duplex}};
  j["cost_source"] = cost_source;
  j["cost_source_detail"] = cost_source_detail;
  j["host_mode"] = sim::host_mode_name(host_mode);
  j["prediction"] = sim::prediction_to_json(p, schedule);
  if (traced != nullptr) {
    // The step the trace measured beside the prediction; error = (predicted - profiled) / profiled.
    j["profiled_step_ns"] =
        traced->profiled_step_ns > 0 ? nlohmann::json(traced->profiled_step_ns) : nlohmann::json(nullptr);
    j["trace_gpu_time_ns"] = traced->gpu_time_ns;
    j["trace_host_time_ns"] = traced->host_time_ns;
    j["replay_error"] = traced->profiled_step_ns > 0 && !p.oom
                            ? nlohmann::json(static_cast<double>(p.step_time_ns - traced->profiled_step_ns) /
                                             static_cast<double>(traced->profiled_step_ns))
                            : nlohmann::json(nullptr);
  }
  j["throughput_samples_per_s"] =
      p.oom || samples == 0
          ? nlohmann::json(nullptr)
          : nlohmann::json(static_cast<double>(samples) * 1e9 / static_cast<double>(p.step_time_ns));
  return j;
}

}  // namespace mutwo::api
