#pragma once
// Trace mode of `mutwo simulate` (`mutwo simulate --trace FILE`, `mutwo.simulate(trace=FILE)`): the
// step one measured trace recorded (a mutwo trace, a PyTorch profiler trace, a DTR log, or an
// execution trace with the profiler trace of its step) replayed as it ran (each op on its stream,
// its host time and syncs), priced by the cost source from that replay (the measured source: each
// op's own durations), and planned by a policy at the device's memory when one is asked.
#include <string>

#include "api/simulate.hpp"
#include "costmodel/cost_setup.hpp"

namespace mutwo::api {

struct TraceSimulation {
  SimulateResult result;
  TracedStep traced;               // the trace's own step, printed beside the prediction
  std::string cost_source_detail;  // OpCostModel::describe of the model that priced the replay
};

// `inputs.traces` holds the one step (costmodel::read_cost_inputs of `setup`, traces_are_step);
// `cost` is the setup's model on `device`. The request's source is not read; its policy plans the
// replay, and an empty host_mode is eager, or none where the replay is priced by the trace's own
// durations and the trace measured no host side (a DTR log, a CPU profile); iterations 0 is 1 (the
// trace's one profiled step). Throws Error when there is not exactly one trace, or state offload
// is asked (it plans a model array).
TraceSimulation simulate_trace(SimulateRequest request, const costmodel::CostSetup& setup,
                               const costmodel::CostInputs& inputs, const costmodel::DeviceSpec& device,
                               const costmodel::OpCostModel& cost);

}  // namespace mutwo::api
