// Simulator speed: instructions replayed per second on long synthetic swap schedules.
// Target (DESIGN: fast cost-model-driven exploration): >= 10 M instructions/s on one core.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"

namespace {

using namespace mutwo::ir;

// Op durations by phase: forward 100 us, backward 200 us; copies at 25 B/ns with 5 us latency.
class PhaseCostModel : public mutwo::costmodel::OpCostModel {
 public:
  PhaseCostModel() {
    device_.name = "bench-gpu";
    device_.memory_bytes = 0;
    device_.h2d_bytes_per_ns = 25.0;
    device_.d2h_bytes_per_ns = 25.0;
    device_.h2d_latency_ns = 5000;
    device_.d2h_latency_ns = 5000;
  }
  std::string_view name() const override { return "phase"; }
  int64_t op_duration_ns(const Graph&, const Op& op) const override {
    return op.phase == Phase::forward ? 100'000 : 200'000;
  }
  const mutwo::costmodel::DeviceSpec& device() const override { return device_; }

 private:
  mutwo::costmodel::DeviceSpec device_;
};

// A chain of `layers` layers, vDNN-style: forward F_i swaps its output a_i out and frees it once
// F_{i+1} has read it; backward B_i (reverse order) swaps a_i back in (prefetched one layer ahead),
// reads it and the incoming gradient g_{i+1}, and frees both. About 7 instructions per layer.
Schedule swap_chain(int32_t layers) {
  Schedule s;
  Graph& g = s.graph;
  auto tensor = [&](std::string name, int64_t bytes, TensorRole role) {
    Tensor t;
    t.id = static_cast<TensorId>(g.tensors.size());
    t.name = std::move(name);
    t.shape = {bytes};
    t.dtype = DType::u8;
    t.bytes = bytes;
    t.role = role;
    g.tensors.push_back(std::move(t));
    return g.tensors.back().id;
  };
  auto op = [&](std::string name, Phase phase, std::vector<TensorId> in, std::vector<TensorId> out) {
    Op o;
    o.id = static_cast<OpId>(g.ops.size());
    o.name = std::move(name);
    o.kind = phase == Phase::forward ? OpKind::opaque : OpKind::opaque_backward;
    o.phase = phase;
    o.inputs = std::move(in);
    o.outputs = std::move(out);
    o.workspace_bytes = 1 << 20;
    g.ops.push_back(std::move(o));
    return g.ops.back().id;
  };
  const auto n = static_cast<size_t>(layers);
  constexpr int64_t kActivationBytes = 1'000'000;  // 40 us each way at 25 B/ns + 5 us
  const TensorId x = tensor("x", kActivationBytes, TensorRole::input);
  std::vector<TensorId> a(n), grad(n + 1), w(n);
  std::vector<OpId> fwd(n), bwd(n);
  for (size_t i = 0; i < n; ++i) {
    w[i] = tensor("w" + std::to_string(i), 4096, TensorRole::weight);
    a[i] = tensor("a" + std::to_string(i), kActivationBytes, TensorRole::activation);
    fwd[i] = op("fwd" + std::to_string(i), Phase::forward, {i == 0 ? x : a[i - 1], w[i]}, {a[i]});
  }
  grad[n] = tensor("g_out", kActivationBytes, TensorRole::temporary);
  const OpId loss = op("loss", Phase::forward, {a[n - 1]}, {grad[n]});
  for (size_t i = n; i-- > 0;) {
    grad[i] = tensor("g" + std::to_string(i), kActivationBytes, TensorRole::temporary);
    bwd[i] = op("bwd" + std::to_string(i), Phase::backward, {a[i], grad[i + 1]}, {grad[i]});
  }
  link(g);

  auto add = [&](InstrKind kind, int32_t stream, int32_t what, std::vector<InstrId> waits) {
    Instruction in;
    in.id = static_cast<InstrId>(s.instructions.size());
    in.kind = kind;
    in.stream = stream;
    if (kind == InstrKind::compute) {
      in.op = what;
    } else {
      in.tensor = what;
    }
    in.waits = std::move(waits);
    s.instructions.push_back(std::move(in));
    return s.instructions.back().id;
  };
  std::vector<InstrId> out_of(n), free_of(n), in_of(n), bwd_at(n);
  for (size_t i = 0; i < n; ++i) {
    const InstrId f = add(InstrKind::compute, kComputeStream, fwd[i], {});
    out_of[i] = add(InstrKind::swap_out, kDeviceToHostStream, a[i], {f});
    if (i > 0) free_of[i - 1] = add(InstrKind::free, kComputeStream, a[i - 1], {out_of[i - 1]});
  }
  add(InstrKind::compute, kComputeStream, loss, {});
  free_of[n - 1] = add(InstrKind::free, kComputeStream, a[n - 1], {out_of[n - 1]});
  for (size_t i = n; i-- > 0;) {
    std::vector<InstrId> waits = {free_of[i]};
    if (i + 2 < n) waits.push_back(bwd_at[i + 2]);  // prefetch one layer ahead
    in_of[i] = add(InstrKind::swap_in, kHostToDeviceStream, a[i], std::move(waits));
    bwd_at[i] = add(InstrKind::compute, kComputeStream, bwd[i], {in_of[i]});
    add(InstrKind::free, kComputeStream, a[i], {});
    add(InstrKind::free, kComputeStream, grad[i + 1], {});
  }
  return s;
}

void run(benchmark::State& state, bool timeline, bool half_duplex) {
  const Schedule s = swap_chain(static_cast<int32_t>(state.range(0)));
  const PhaseCostModel model;
  mutwo::sim::SimOptions options;
  options.record_timeline = timeline;
  options.half_duplex = half_duplex;
  int64_t peak = 0;
  for (auto _ : state) {
    const mutwo::sim::Prediction p = mutwo::sim::simulate(s, model, options);
    peak = p.peak_bytes;
    benchmark::DoNotOptimize(p.step_time_ns);
  }
  state.counters["instructions"] = static_cast<double>(s.instructions.size());
  state.counters["peak_MB"] = static_cast<double>(peak) / 1e6;
  state.counters["instr/s"] =
      benchmark::Counter(static_cast<double>(s.instructions.size()) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}

void BM_SimulateSwapChain(benchmark::State& state) {
  run(state, false, false);
}
void BM_SimulateSwapChainHalfDuplex(benchmark::State& state) {
  run(state, false, true);
}
void BM_SimulateSwapChainTimeline(benchmark::State& state) {
  run(state, true, false);
}

// 142,857 layers * 7 = 1,000,000 instructions (+1 for the loss).
BENCHMARK(BM_SimulateSwapChain)->Arg(1000)->Arg(142857)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateSwapChainHalfDuplex)->Arg(142857)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimulateSwapChainTimeline)->Arg(142857)->Unit(benchmark::kMillisecond);

// One training step of 8 fused bert-base (batch 16, seq 128, Adam) as the plain schedule, priced by
// the analytic model on a100-40gb. Target: < 5 ms per replay (cost-model evaluation included).
void BM_ReplayBertBaseX8(benchmark::State& state) {
  mutwo::policies::ModelArray array;
  array.model = "bert-base";
  array.count = 8;
  array.config.batch_size = 16;
  const Schedule s = mutwo::policies::build_plain_schedule(mutwo::policies::sub_array_steps(array, {8}));
  const std::unique_ptr<mutwo::costmodel::OpCostModel> model =
      mutwo::costmodel::builtin_cost_sources().create("analytic", mutwo::costmodel::find_device("a100-40gb"));
  mutwo::sim::SimOptions options;
  options.memory_limit_bytes = -1;  // the plain step of 8 needs more than 40 GB; time the whole replay
  int64_t step_ns = 0;
  for (auto _ : state) {
    const mutwo::sim::Prediction p = mutwo::sim::simulate(s, *model, options);
    step_ns = p.step_time_ns;
    benchmark::DoNotOptimize(p.peak_bytes);
  }
  state.counters["instructions"] = static_cast<double>(s.instructions.size());
  state.counters["predicted_step_ms"] = static_cast<double>(step_ns) / 1e6;
}
BENCHMARK(BM_ReplayBertBaseX8)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
