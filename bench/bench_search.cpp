// Search speed: the full partitions x policies search (every policy but checkmate) with the
// baselines, on the analytic cost model of an A100-40GB.
// Targets (issue 4): 8 bert-base at batch 16 < 1 s on one core; 32 bert-base < 10 s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "policies/model_array.hpp"
#include "policies/multiplex.hpp"
#include "policies/policy_registry.hpp"
#include "policies/search.hpp"
#include "policies/state_offload.hpp"

namespace {

using namespace mutwo;

// The search of `count` x `model` at `batch` on the analytic A100-40GB (limit 0: its memory), timed.
void time_search(benchmark::State& state, const char* model, int32_t count, int64_t batch, int64_t limit_bytes) {
  const std::unique_ptr<costmodel::OpCostModel> cost =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  policies::SearchConfig config;
  policies::ArchitectureCount a;
  a.model = model;
  a.count = count;
  a.config.batch_size = batch;
  config.architectures = {a};
  config.cost = cost.get();
  config.memory_limit_bytes = limit_bytes;
  int64_t plans = 0;
  for (auto _ : state) {
    const policies::SearchReport report = policies::run_search(config);
    plans = report.stats.plans;
    benchmark::DoNotOptimize(report.rows.data());
  }
  state.counters["plans"] = static_cast<double>(plans);
}

// state.range(0) bert-base models at batch 16; state.range(1) the memory limit in GiB (0: 40 GiB).
void BM_SearchBertBase(benchmark::State& state) {
  time_search(state, "bert-base", static_cast<int32_t>(state.range(0)), 16, state.range(1) << 30);
}
// The default `mutwo search` (8 x bert-base, 40 GiB) and a 2x-oversubscribed limit (14 GiB ~ half
// the fused-8 unoptimised peak of 28.9 GiB); 32 x bert-base at 40 GiB.
BENCHMARK(BM_SearchBertBase)->Args({8, 0})->Args({8, 14})->Args({32, 0})->Unit(benchmark::kMillisecond);

// μ-TWO's regime (issue 17): state.range(0) GPT-2 (124M) at batch 8 on an A100-40GB, whose
// weights, gradients and Adam state alone exceed the GPU from 20 models on. Target: 32 models < 10 s.
void BM_SearchGpt2(benchmark::State& state) {
  time_search(state, "gpt2", static_cast<int32_t>(state.range(0)), 8, 0);
}
BENCHMARK(BM_SearchGpt2)->Arg(24)->Arg(32)->Unit(benchmark::kMillisecond)->Iterations(1);

// One offloaded plan: state.range(0) GPT-2 at batch 8 as sub-arrays of 2, multiplexed, planned by
// state.range(1) (0 none, 1 mutwo) with the model state on the host, at 40 GiB.
void BM_OffloadPlanGpt2(benchmark::State& state) {
  const std::unique_ptr<costmodel::OpCostModel> cost =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  policies::ModelArray array;
  array.model = "gpt2";
  array.count = static_cast<int32_t>(state.range(0));
  array.config.batch_size = 8;
  const std::vector<ir::Graph> parts =
      policies::sub_array_steps(array, std::vector<int32_t>(static_cast<size_t>(array.count / 2), 2));
  const ir::Schedule base = policies::build_multiplexed_schedule(parts, *cost);
  const auto policy = policies::builtin_policies().create(state.range(1) == 0 ? "none" : "mutwo");
  policies::PolicyInput input;
  input.base = &base;
  input.cost = cost.get();
  input.memory_limit_bytes = int64_t{40} << 30;
  bool feasible = false;
  for (auto _ : state) {
    const policies::PolicyResult r = policies::plan_with_state_offload(*policy, input);
    feasible = r.feasible;
    benchmark::DoNotOptimize(r.step_time_ns);
  }
  state.counters["feasible"] = feasible ? 1 : 0;
}
BENCHMARK(BM_OffloadPlanGpt2)->Args({24, 0})->Args({24, 1})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
