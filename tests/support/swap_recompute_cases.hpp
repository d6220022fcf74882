#pragma once
// Hand-built cases shared by the swap-or-recompute policy suites (capuchin, mutwo): a cost model
// that prices ops from a table and copies at 1 B/ns, a tiny-graph builder, and two chains whose
// right answer (swap, recompute) is derived by hand below; small real steps on the analytic A100.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "tests/support/hand_graph.hpp"

namespace mutwo::test {

using costmodel::DeviceSpec;
using costmodel::OpCostModel;
using ir::DType;
using ir::Graph;
using ir::Op;
using ir::OpId;
using ir::OpKind;
using ir::Schedule;
using ir::Tensor;
using ir::TensorId;
using ir::TensorRole;

inline constexpr int64_t kMs = 1'000'000;  // ns
inline constexpr int64_t kUs = 1'000;

struct TinyGraph {
  Graph g;
  TensorId tensor(const std::string& name, int64_t bytes, TensorRole role) {
    return mutwo::test::add_byte_tensor(g, name, bytes, role);
  }
  void op(const std::string& name, std::vector<TensorId> in, TensorId out, int64_t workspace_bytes = 0) {
    Op o;
    o.id = static_cast<OpId>(g.ops.size());
    o.name = name;
    o.kind = OpKind::opaque;
    o.inputs = std::move(in);
    o.outputs = {out};
    o.workspace_bytes = workspace_bytes;
    o.recomputable = true;
    g.ops.push_back(o);
  }
};

// A(w) -> a (1,000,000 B); B1(w) -> b1; B2(b1) -> b2 with a 3,000,000 B workspace; B3(b2) -> b3;
// C(a, b3) -> c. Every op 1 ms; small tensors 512 B. a's window: after A (position 0) to C
// (position 4), 3 ms of compute (B1..B3); its copies take 1 ms each way (2 ms round trip).
// Memory (512 B blocks): w 512, a 1,000,448, workspace 3,000,320. Peak during B2:
// w + a + b1 + b2 + workspace = 512 + 1,000,448 + 512 + 512 + 3,000,320 = 4,002,304.
inline Schedule swap_chain() {
  TinyGraph t;
  const TensorId w = t.tensor("w", 512, TensorRole::weight);
  const TensorId a = t.tensor("a", 1'000'000, TensorRole::activation);
  const TensorId b1 = t.tensor("b1", 512, TensorRole::activation);
  const TensorId b2 = t.tensor("b2", 512, TensorRole::activation);
  const TensorId b3 = t.tensor("b3", 512, TensorRole::activation);
  const TensorId c = t.tensor("c", 512, TensorRole::activation);
  t.op("A", {w}, a);
  t.op("B1", {w}, b1);
  t.op("B2", {b1}, b2, 3'000'000);
  t.op("B3", {b2}, b3);
  t.op("C", {a, b3}, c);
  return policies::build_plain_schedule({t.g});
}

// A(w) -> a (2,000,000 B) 0.5 ms; B(w) -> b 0.1 ms with a 3,000,000 B workspace; C(a, b) -> c
// 0.1 ms. a's window is B alone (0.1 ms); its copies take 2 ms each way; recomputing A takes 0.5 ms.
// Peak during B: w + a + b + workspace = 512 + 2,000,384 + 512 + 3,000,320 = 5,001,728.
inline Schedule recompute_chain() {
  TinyGraph t;
  const TensorId w = t.tensor("w", 512, TensorRole::weight);
  const TensorId a = t.tensor("a", 2'000'000, TensorRole::activation);
  const TensorId b = t.tensor("b", 512, TensorRole::activation);
  const TensorId c = t.tensor("c", 512, TensorRole::activation);
  t.op("A", {w}, a);
  t.op("B", {w}, b, 3'000'000);
  t.op("C", {a, b}, c);
  return policies::build_plain_schedule({t.g});
}

inline sim::Prediction simulate_at(const Schedule& s, const OpCostModel& cost, int64_t limit) {
  sim::SimOptions o;
  o.memory_limit_bytes = limit;
  return sim::simulate(s, cost, o);
}

inline std::unique_ptr<OpCostModel> a100(double link_gbps = 0) {
  costmodel::DeviceOverrides o;
  if (link_gbps > 0) {
    o.h2d_gbps = link_gbps;
    o.d2h_gbps = link_gbps;
  }
  return costmodel::builtin_cost_sources().create(
      "analytic", costmodel::apply_overrides(costmodel::find_device("a100-40gb"), o));
}

struct RealCase {
  const char* what;
  Schedule base;
  double fraction;  // of the activation memory (peak - resident) the limit leaves
};

// resnet18 x2 (batch 32, 64 px: at batch 8 Adam's temporaries beside the resident state, not the
// activations, set the peak) and bert-base x2 (batch 4, 64 tokens). Weights, gradients and
// Adam state stay resident, so the limit is the resident bytes plus a fraction of the rest: 60 %
// for resnet18; 70 % for bert-base, whose floor is 61 %: the tied embedding's two 188 MB gradient
// parts (decoder backward, embedding backward) must both be on the device to be summed.
inline std::vector<RealCase> real_cases() {
  policies::ModelArray resnet;
  resnet.model = "resnet18";
  resnet.count = 2;
  resnet.config.batch_size = 32;
  resnet.config.image_size = 64;
  policies::ModelArray bert;
  bert.model = "bert-base";
  bert.count = 2;
  bert.config.batch_size = 4;
  bert.config.seq_len = 64;
  std::vector<RealCase> cases;
  cases.push_back(
      {"resnet18 x2", policies::build_plain_schedule(policies::sub_array_steps(resnet, {2})), 0.6});
  cases.push_back(
      {"bert-base x2", policies::build_plain_schedule(policies::sub_array_steps(bert, {2})), 0.7});
  return cases;
}

inline int64_t limit_for(const RealCase& c, const OpCostModel& cost) {
  const sim::Prediction none = simulate_at(c.base, cost, -1);
  return none.resident_bytes +
         static_cast<int64_t>(static_cast<double>(none.peak_bytes - none.resident_bytes) * c.fraction);
}

}  // namespace mutwo::test
