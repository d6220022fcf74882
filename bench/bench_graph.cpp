// Graph-building speed: model zoo + autodiff (+ horizontal fusion) for one training step.
// Target: bert-large at batch 32 builds its training step in < 50 ms (search and sweeps rebuild
// graphs for every configuration they visit).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "io/trace_file.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

namespace {

using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

// build_model + build_training_step, timed together; reports ms per step graph.
void build_step(benchmark::State& state, const std::string& model, int64_t batch_size, int32_t width) {
  ModelConfig config;
  config.batch_size = batch_size;
  config.width = width;
  const OptimizerConfig adam;
  int64_t ops = 0;
  for (auto _ : state) {
    Graph step = build_training_step(build_model(model, config), adam);
    ops = static_cast<int64_t>(step.ops.size());
    benchmark::DoNotOptimize(step.ops.data());
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_BuildTrainingStep_BertLarge_B32(benchmark::State& state) {
  build_step(state, "bert-large", 32, 1);
}
void BM_BuildTrainingStep_BertBase_B16_x8(benchmark::State& state) {
  build_step(state, "bert-base", 16, 8);
}
void BM_BuildTrainingStep_ResNet50_B64(benchmark::State& state) {
  build_step(state, "resnet50", 64, 1);
}

// Trace files of the bert-large step: JSON text out, and parse + link + validate back in.
Trace bert_large_trace() {
  ModelConfig config;
  config.batch_size = 32;
  Trace trace;
  trace.graph = build_training_step(build_model("bert-large", config), OptimizerConfig{});
  return trace;
}

void BM_TraceToJson_BertLarge(benchmark::State& state) {
  const Trace trace = bert_large_trace();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = trace_to_json(trace);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

void BM_TraceFromJson_BertLarge(benchmark::State& state) {
  const std::string text = trace_to_json(bert_large_trace());
  for (auto _ : state) {
    Trace trace = trace_from_json(text);
    benchmark::DoNotOptimize(trace.graph.ops.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}

}  // namespace

BENCHMARK(BM_BuildTrainingStep_BertLarge_B32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildTrainingStep_BertBase_B16_x8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BuildTrainingStep_ResNet50_B64)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceToJson_BertLarge)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TraceFromJson_BertLarge)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
