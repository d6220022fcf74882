// Search speed: the full partitions x policies search (every policy but checkmate) with the
// baselines, on the analytic cost model of an A100-40GB.
// Targets (issue 4): 8 bert-base at batch 16 < 1 s on one core; 32 bert-base < 10 s.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "policies/search.hpp"

namespace {

using namespace mutwo;

// state.range(0) bert-base models at batch 16; state.range(1) the memory limit in GiB (0: 40 GiB).
void BM_SearchBertBase(benchmark::State& state) {
  const std::unique_ptr<costmodel::OpCostModel> cost =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  policies::SearchConfig config;
  policies::ArchitectureCount bert;
  bert.model = "bert-base";
  bert.count = static_cast<int32_t>(state.range(0));
  bert.config.batch_size = 16;
  config.architectures = {bert};
  config.cost = cost.get();
  config.memory_limit_bytes = state.range(1) << 30;
  int64_t plans = 0;
  for (auto _ : state) {
    const policies::SearchReport report = policies::run_search(config);
    plans = report.stats.plans;
    benchmark::DoNotOptimize(report.rows.data());
  }
  state.counters["plans"] = static_cast<double>(plans);
}
// The default `mutwo search` (8 x bert-base, 40 GiB) and a 2x-oversubscribed limit (14 GiB ~ half
// the fused-8 unoptimised peak of 28.9 GiB); 32 x bert-base at 40 GiB.
BENCHMARK(BM_SearchBertBase)->Args({8, 0})->Args({8, 14})->Args({32, 0})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
