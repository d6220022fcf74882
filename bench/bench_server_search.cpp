// Server search speed (issue 21): `mutwo search --server` on the analytic cost model.
// Target: 16 bert-base (batch 16) over the 8 GPUs of 8x-a100-pcie < 10 s, at the GPUs' memory and
// at limits tight enough that every GPU's share swaps (5 GiB: lifted, its swaps sharing the links),
// offloads or runs as separate runs (4, 2 GiB).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/server_catalog.hpp"
#include "policies/server_search.hpp"

namespace {

using namespace mutwo;

void time_server_search(benchmark::State& state, const char* server, const char* model, int32_t count, int64_t batch,
                        int64_t seq_len, int64_t limit_bytes) {
  policies::ServerSearchConfig config;
  config.server = costmodel::find_server(server);
  const std::unique_ptr<costmodel::OpCostModel> cost =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device(config.server.gpu));
  policies::ArchitectureCount a;
  a.model = model;
  a.count = count;
  a.config.batch_size = batch;
  a.config.seq_len = seq_len;
  config.array.architectures = {a};
  config.array.cost = cost.get();
  config.array.memory_limit_bytes = limit_bytes;
  config.array.host_mode = sim::HostMode::eager;  // as `mutwo search` plans
  int64_t candidates = 0;
  int64_t searches = 0;
  for (auto _ : state) {
    const policies::ServerSearchReport report = policies::run_server_search(config);
    candidates = report.stats.candidates;
    searches = report.stats.gpu_searches;
    benchmark::DoNotOptimize(report.rows.data());
  }
  state.counters["server_schedules"] = static_cast<double>(candidates);
  state.counters["gpu_searches"] = static_cast<double>(searches);
}

// 16 bert-base over 8x A100 PCIe; state.range(0): the per-GPU limit in GiB (0: 40 GiB).
void BM_ServerSearch16BertBase(benchmark::State& state) {
  time_server_search(state, "8x-a100-pcie", "bert-base", 16, 16, 0, state.range(0) << 30);
}
BENCHMARK(BM_ServerSearch16BertBase)->Arg(0)->Arg(5)->Arg(4)->Arg(2)->Unit(benchmark::kMillisecond)->Iterations(1);

// One model over Harmony's server: GPT-2 XL (1.5B) at batch 1, sequence 512, every scheme x N x M x packs.
void BM_ServerSearchGpt2Xl(benchmark::State& state) {
  time_server_search(state, "4x-gtx1080ti", "gpt2-xl", 1, 1, 512, 0);
}
BENCHMARK(BM_ServerSearchGpt2Xl)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
