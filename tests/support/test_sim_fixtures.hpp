#pragma once
// Fixtures shared by tests/test_sim.cpp and tests/test_sim_host.cpp.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/memory_rule.hpp"
#include "ir/schedule.hpp"
#include "ir/schedule_check.hpp"
#include "sim/memory_simulator.hpp"
#include "sim/prediction_json.hpp"
#include "sim/simulator.hpp"
#include "sim/timeline_export.hpp"
#include "support/error.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "tests/support/hand_graph.hpp"

using namespace mutwo::ir;
using mutwo::costmodel::DeviceSpec;
using mutwo::costmodel::OpCostModel;
using mutwo::sim::MemorySimulator;
using mutwo::sim::Prediction;
using mutwo::sim::SimOptions;
using mutwo::sim::simulate;

using mutwo::test::FixedCostModel;

namespace {

constexpr int64_t kMs = 1'000'000;  // ns

// A hand-made graph: tensors with exact byte sizes, opaque ops with chosen inputs/outputs/workspace.
struct TestGraph {
  Graph g;
  TensorId tensor(const std::string& name, int64_t bytes, TensorRole role) {
    return mutwo::test::add_byte_tensor(g, name, bytes, role);
  }
  OpId op(const std::string& name, std::vector<TensorId> inputs, std::vector<TensorId> outputs,
          int64_t workspace_bytes = 0, Phase phase = Phase::forward) {
    Op o;
    o.id = static_cast<OpId>(g.ops.size());
    o.name = name;
    o.kind = OpKind::opaque;
    o.phase = phase;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    o.workspace_bytes = workspace_bytes;
    o.recomputable = true;
    g.ops.push_back(o);
    return o.id;
  }
};

struct ScheduleBuilder {
  Schedule s;
  explicit ScheduleBuilder(TestGraph tg) {
    link(tg.g);
    s.graph = std::move(tg.g);
    s.policy = "hand";
  }
  InstrId add(InstrKind kind, int32_t stream, int32_t op_or_tensor, std::vector<InstrId> waits = {}) {
    Instruction in;
    in.id = static_cast<InstrId>(s.instructions.size());
    in.kind = kind;
    in.stream = stream;
    if (kind == InstrKind::compute || kind == InstrKind::recompute) {
      in.op = op_or_tensor;
    } else {
      in.tensor = op_or_tensor;
    }
    in.waits = std::move(waits);
    s.instructions.push_back(in);
    return in.id;
  }
  InstrId compute(OpId op, std::vector<InstrId> waits = {}, int32_t stream = kComputeStream) {
    return add(InstrKind::compute, stream, op, std::move(waits));
  }
  InstrId recompute(OpId op, std::vector<InstrId> waits = {}) {
    return add(InstrKind::recompute, kComputeStream, op, std::move(waits));
  }
  InstrId swap_out(TensorId t, std::vector<InstrId> waits = {}) {
    return add(InstrKind::swap_out, kDeviceToHostStream, t, std::move(waits));
  }
  InstrId swap_in(TensorId t, std::vector<InstrId> waits = {}) {
    return add(InstrKind::swap_in, kHostToDeviceStream, t, std::move(waits));
  }
  InstrId free(TensorId t, int32_t stream, std::vector<InstrId> waits = {}) {
    return add(InstrKind::free, stream, t, std::move(waits));
  }
};

inline SimOptions with_timeline() {
  SimOptions o;
  o.record_timeline = true;
  return o;
}

inline const mutwo::sim::TimelineEvent& event_of(const Prediction& p, InstrId id) {
  for (const auto& ev : p.timeline.events) {
    if (ev.instruction == id) return ev;
  }
  FAIL("no timeline event for instruction " << id);
  return p.timeline.events.front();
}

// The memory test schedule (sizes chosen to exercise the 512 B rounding):
//   w weight 1000 B -> 1024, x input 100 B -> 512            resident at t=0: 1536
//   A(x, w) -> a 3000 B -> 3072, workspace 700 B -> 1024, 1 ms
//   B(a)    -> b 5000 B -> 5120, 1 ms
//   free a
//   C(b)    -> c 10 B -> 512, workspace 4000 B -> 4096, 1 ms
inline Schedule memory_schedule() {
  TestGraph tg;
  TensorId w = tg.tensor("w", 1000, TensorRole::weight);
  TensorId x = tg.tensor("x", 100, TensorRole::input);
  TensorId a = tg.tensor("a", 3000, TensorRole::activation);
  TensorId b = tg.tensor("b", 5000, TensorRole::activation);
  TensorId c = tg.tensor("c", 10, TensorRole::activation);
  OpId A = tg.op("A", {x, w}, {a}, 700);
  OpId B = tg.op("B", {a}, {b});
  OpId C = tg.op("C", {b}, {c}, 4000);
  ScheduleBuilder sb(std::move(tg));
  sb.compute(A);
  sb.compute(B);
  sb.free(a, kComputeStream);
  sb.compute(C);
  return sb.s;
}
inline FixedCostModel memory_model() {
  return FixedCostModel({{0, kMs}, {1, kMs}, {2, kMs}});
}

// A (1 ms) makes a (2,000,000 B); swap_out a after A; B (1 ms); free a (compute stream, waits the
// swap_out); swap_in a (waits the free); C (0.5 ms) reads a, waiting the swap_in. Ids: A 0, swap_out 1,
// B 2, free 3, swap_in 4, C 5.
inline Schedule swap_in_schedule() {
  TestGraph tg;
  TensorId x = tg.tensor("x", 512, TensorRole::input);
  TensorId a = tg.tensor("a", 2'000'000, TensorRole::activation);
  OpId A = tg.op("A", {x}, {a});
  OpId B = tg.op("B", {x}, {tg.tensor("b", 512, TensorRole::activation)});
  OpId C = tg.op("C", {a}, {tg.tensor("c", 512, TensorRole::activation)}, 0, Phase::backward);
  ScheduleBuilder sb(std::move(tg));
  InstrId ca = sb.compute(A);
  InstrId out = sb.swap_out(a, {ca});
  sb.compute(B);
  InstrId fr = sb.free(a, kComputeStream, {out});
  InstrId in = sb.swap_in(a, {fr});
  sb.compute(C, {in});
  return sb.s;
}
inline FixedCostModel swap_in_model() {
  return FixedCostModel({{0, kMs}, {1, kMs}, {2, kMs / 2}});
}

}  // namespace
