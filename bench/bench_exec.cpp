// Executor speed on the CPU (the GPU figures come from scripts/device-check.sh): one training step
// of a test-scale array (4 models, two multiplexed sub-arrays of 2) through the Schedule
// interpreter, plain and with a swap/recompute plan at half the activations. No target in the
// issue: the figures show the interpreter's instruction rate with ATen's CPU kernels in it.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "exec/device_backend.hpp"
#include "exec/interpreter.hpp"
#include "policies/array_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace mutwo;

ir::Schedule schedule_of(const std::string& model, int64_t batch, const std::string& policy) {
  policies::ModelArray array;
  array.model = model;
  array.count = 4;
  array.config.batch_size = batch;
  const std::vector<ir::Graph> parts = policies::sub_array_steps(array, {2, 2});
  const auto cost = costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  sim::SimOptions unlimited;
  unlimited.memory_limit_bytes = -1;
  const sim::Prediction p = sim::simulate(policies::build_plain_schedule(parts), *cost, unlimited);
  const int64_t limit = p.resident_bytes + (p.peak_bytes - p.resident_bytes) / 2;
  return policies::plan_sub_arrays(parts, *policies::builtin_policies().create(policy), *cost, limit,
                                   policies::SubArrayOrder::multiplexed)
      .result.schedule;
}

void BM_ExecStep(benchmark::State& state, const std::string& model, int64_t batch,
                 const std::string& policy) {
  const ir::Schedule s = schedule_of(model, batch, policy);
  auto backend = exec::make_backend("cpu");
  exec::Interpreter interpreter(s, *backend);
  for (auto _ : state) {
    const exec::StepResult r = interpreter.step();
    if (r.oom) state.SkipWithError("out of memory");
  }
  state.counters["instructions"] = static_cast<double>(s.instructions.size());
  state.counters["instr/s"] = benchmark::Counter(static_cast<double>(s.instructions.size()),
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_ExecStep, bert_mini_none, std::string("bert-mini"), 2, std::string("none"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExecStep, bert_mini_capuchin, std::string("bert-mini"), 2, std::string("capuchin"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExecStep, resnet_mini_none, std::string("resnet-mini"), 16, std::string("none"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExecStep, resnet_mini_dtr, std::string("resnet-mini"), 16, std::string("dtr"))
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
