#include "api/simulate_trace.hpp"

#include <memory>

#include "costmodel/cost_source_registry.hpp"
#include "policies/policy_registry.hpp"
#include "policies/trace_replay.hpp"
#include "support/error.hpp"

namespace mutwo::api {

TraceSimulation simulate_trace(SimulateRequest request, const costmodel::CostSetup& setup,
                               const costmodel::CostInputs& inputs, const costmodel::DeviceSpec& device,
                               const costmodel::OpCostModel& cost) {
  if (inputs.traces.size() != 1) {
    throw Error(
        "simulate: a single --trace is simulated itself (or an execution trace followed by the profiler "
        "trace of the same step); with several, give --model or --schedule");
  }
  policies::TraceReplay replay = policies::build_trace_replay(inputs.traces.front());
  TraceSimulation out;
  out.traced.profiled_step_ns = replay.trace.profiled_step_ns;
  for (int64_t ns : replay.trace.op_duration_ns) out.traced.gpu_time_ns += ns;
  for (int64_t ns : replay.trace.op_host_ns) out.traced.host_time_ns += ns;
  // The same inputs (calibration profiles too) with the replay's trace in place of the imported one;
  // a source that reads no durations (analytic, calibrated) prices the replayed ops itself.
  std::unique_ptr<costmodel::OpCostModel> replay_cost;
  if (costmodel::builtin_cost_sources().find(setup.cost_source).reads_measured_traces) {
    costmodel::CostInputs replayed = inputs;
    replayed.traces = {replay.trace};
    replay_cost = costmodel::make_cost_model(setup, replayed, device);
  }
  const costmodel::OpCostModel& model = replay_cost ? *replay_cost : cost;
  ir::Schedule schedule = std::move(replay.schedule);
  if (!request.policy.empty()) {
    // A policy plans the replayed step itself (its ops' own durations) at the device's memory.
    if (request.state_offload)
      throw Error("--state-offload plans a model array (--model), not a replayed --trace");
    const std::unique_ptr<policies::MemoryPolicy> policy =
        policies::builtin_policies().create(request.policy);
    policies::PolicyInput input;
    input.base = &schedule;
    input.cost = &model;
    input.memory_limit_bytes = device.memory_bytes;
    schedule = policy->plan(input).schedule;
  }
  // PyTorch eager by default (the catalog's host figures, or a trace's measured host side); a replayed
  // trace that measured no host side replays its GPU time alone.
  if (request.host_mode.empty()) {
    request.host_mode = replay_cost != nullptr && out.traced.host_time_ns <= 0 ? "none" : "eager";
  }
  if (request.iterations == 0) request.iterations = 1;
  out.result = simulate_schedule(std::move(schedule), request, model);
  out.cost_source_detail = model.describe(out.result.schedule.graph);
  return out;
}

}  // namespace mutwo::api
