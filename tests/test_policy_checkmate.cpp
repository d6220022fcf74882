// checkmate (Jain et al., MLSys 2020): the MILP finds the hand-derived optimal recompute cost on a
// small chain, its schedule validates and fits, infeasible and oversized inputs are refused with a
// clear note, and on small real training steps no other registered recompute-only policy recomputes
// less at the same limit.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "ir/graph_builder.hpp"
#include "ir/schedule_check.hpp"
#include "policies/checkmate_milp.hpp"
#include "policies/memory_policy.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/simulator.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "transforms/autodiff.hpp"

using namespace mutwo;
using namespace mutwo::ir;
using namespace mutwo::transforms;
using costmodel::DeviceSpec;
using costmodel::OpCostModel;
using policies::PolicyInput;
using policies::PolicyResult;

using mutwo::test::FixedCostModel;

namespace {

constexpr int64_t kMs = 1'000'000;  // ns
constexpr int64_t kMiB = 1 << 20;

// The chain x -> f0 -> a0 -> f1 -> a1 -> f2 -> a2 -> f3 -> a3, then b3(a3) -> g3, b2(g3, a1) -> g2,
// b1(g2, a0) -> g1, b0(g1, x) -> g0; every tensor 1 MiB, no persistent state. f0 4 ms, f1 1 ms,
// f2 2 ms, f3 8 ms, each b 1 ms.
struct Chain {
  Graph g;
  TensorId add_tensor(const std::string& name, TensorRole role) {
    Tensor t;
    t.id = static_cast<TensorId>(g.tensors.size());
    t.name = name;
    t.shape = {kMiB};
    t.dtype = DType::u8;
    t.bytes = kMiB;
    t.role = role;
    g.tensors.push_back(t);
    return t.id;
  }
  void add_op(const std::string& name, std::vector<TensorId> in, TensorId out, bool forward) {
    Op o;
    o.id = static_cast<OpId>(g.ops.size());
    o.name = name;
    o.kind = forward ? OpKind::opaque : OpKind::opaque_backward;
    o.phase = forward ? Phase::forward : Phase::backward;
    o.inputs = std::move(in);
    o.outputs = {out};
    o.recomputable = forward;
    g.ops.push_back(o);
  }
  Chain() {
    const TensorId x = add_tensor("x", TensorRole::input);
    std::vector<TensorId> a;
    for (int i = 0; i < 4; ++i) a.push_back(add_tensor("a" + std::to_string(i), TensorRole::activation));
    std::vector<TensorId> gr;
    for (int i = 0; i < 4; ++i) gr.push_back(add_tensor("g" + std::to_string(i), TensorRole::temporary));
    add_op("f0", {x}, a[0], true);
    add_op("f1", {a[0]}, a[1], true);
    add_op("f2", {a[1]}, a[2], true);
    add_op("f3", {a[2]}, a[3], true);
    add_op("b3", {a[3]}, gr[3], false);
    add_op("b2", {gr[3], a[1]}, gr[2], false);
    add_op("b1", {gr[2], a[0]}, gr[1], false);
    add_op("b0", {gr[1], x}, gr[0], false);
    link(g);
  }
};

const FixedCostModel& chain_cost() {
  static const FixedCostModel cost({{0, 4 * kMs},
                                    {1, 1 * kMs},
                                    {2, 2 * kMs},
                                    {3, 8 * kMs},
                                    {4, 1 * kMs},
                                    {5, 1 * kMs},
                                    {6, 1 * kMs},
                                    {7, 1 * kMs}});
  return cost;
}

PolicyResult plan(const policies::MemoryPolicy& policy, const Schedule& base, const OpCostModel& cost,
                  int64_t limit) {
  PolicyInput in;
  in.base = &base;
  in.cost = &cost;
  in.memory_limit_bytes = limit;
  return policy.plan(in);
}

sim::Prediction simulate_at(const Schedule& s, const OpCostModel& cost, int64_t limit) {
  sim::SimOptions o;
  o.memory_limit_bytes = limit;
  return sim::simulate(s, cost, o);
}

// A 4-layer MLP (linear + relu) with cross-entropy: a real training step small enough for the MILP,
// at a batch (1024) whose activations, not Adam's temporaries beside the weights, set the peak.
Graph tiny_mlp_step() {
  GraphBuilder b("tiny-mlp", DType::f32, 1, 1024);
  TensorId x = b.add_input("x", {1024, 256}, TensorRole::input, FuseAxis::stack);
  const TensorId labels = b.add_input("labels", {1024}, TensorRole::label, FuseAxis::stack, DType::i64);
  const std::vector<int64_t> dims{256, 512, 512, 512, 10};
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    const std::string n = "fc" + std::to_string(i);
    const TensorId w = b.add_weight(n + ".weight", {dims[i + 1], dims[i]}, FuseAxis::stack);
    const TensorId bias = b.add_weight(n + ".bias", {dims[i + 1]}, FuseAxis::stack);
    x = b.op(OpKind::linear, n, {x, w, bias});
    if (i + 2 < dims.size()) x = b.op(OpKind::relu, n + ".relu", {x});
  }
  b.add_op(OpKind::cross_entropy, "loss", {x, labels});
  return build_training_step(std::move(b).finish(), {});
}

// conv-bn-relu x2, global pool, linear, cross-entropy on 16x16 images.
Graph tiny_cnn_step() {
  GraphBuilder b("tiny-cnn", DType::f32, 1, 8);
  TensorId x = b.add_input("images", {8, 3, 16, 16}, TensorRole::input, FuseAxis::dim1);
  const TensorId labels = b.add_input("labels", {8}, TensorRole::label, FuseAxis::stack, DType::i64);
  int64_t channels = 3;
  for (int i = 0; i < 2; ++i) {
    const std::string n = "conv" + std::to_string(i);
    const TensorId w = b.add_weight(n + ".weight", {32, channels, 3, 3}, FuseAxis::dim0);
    x = b.op(OpKind::conv2d, n, {x, w},
             {{"stride", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1}}});
    const TensorId gamma = b.add_weight("bn" + std::to_string(i) + ".weight", {32}, FuseAxis::dim0);
    const TensorId beta = b.add_weight("bn" + std::to_string(i) + ".bias", {32}, FuseAxis::dim0);
    x = b.op(OpKind::batchnorm2d, "bn" + std::to_string(i), {x, gamma, beta}, {{"eps", 1e-5}});
    x = b.op(OpKind::relu, "relu" + std::to_string(i), {x});
    channels = 32;
  }
  x = b.op(OpKind::adaptive_avg_pool2d, "pool", {x});
  x = b.op(OpKind::flatten, "flatten", {x});
  const TensorId w = b.add_weight("fc.weight", {10, 32}, FuseAxis::stack);
  const TensorId bias = b.add_weight("fc.bias", {10}, FuseAxis::stack);
  x = b.op(OpKind::linear, "fc", {x, w, bias});
  b.add_op(OpKind::cross_entropy, "loss", {x, labels});
  return build_training_step(std::move(b).finish(), {});
}

}  // namespace

TEST_CASE("checkmate is registered with a description and its paper") {
  const policies::PolicyInfo& info = policies::builtin_policies().find("checkmate");
  CHECK(info.citation == "Jain et al., MLSys 2020");
  CHECK_FALSE(info.description.empty());
  CHECK(info.create()->name() == "checkmate");
}

TEST_CASE("checkmate finds the hand-derived optimal recompute cost of a chain") {
  const Schedule base = policies::build_plain_schedule({Chain().g});
  const auto policy = policies::make_checkmate_policy();
  // Plain peak 5 MiB: at f3, x a0 a1 a2 a3 are resident (and x a0 a1 a3 g3 at b3).
  CHECK(simulate_at(base, chain_cost(), -1).peak_bytes == 5 * kMiB);

  // Limit 4 MiB. b2 reads g3 and a1 and writes g2 while x stays for b0: with a0 also resident that is
  // 5 MiB, so a0 is dropped before b2 and rebuilt for b1 (>= f0 = 4 ms) -- unless a1 is absent at f3
  // and b3 too, but then a1 is rebuilt for b2 and a0 must still be absent there (>= 4 ms again).
  // Dropping a0 after f1 and recomputing f0 before b1 meets 4 MiB everywhere: optimum = 4 ms, not the
  // cheapest op (f1, 1 ms, which alone leaves 5 MiB at b2).
  const PolicyResult r = plan(*policy, base, chain_cost(), 4 * kMiB);
  REQUIRE(r.feasible);
  CHECK(r.schedule.policy == "checkmate");
  CHECK_NOTHROW(validate_schedule(r.schedule));
  const sim::Prediction p = simulate_at(r.schedule, chain_cost(), 4 * kMiB);
  CHECK_FALSE(p.oom);
  CHECK(p.peak_bytes == 4 * kMiB);
  CHECK(p.recompute_ns == 4 * kMs);             // one recompute of f0
  CHECK(p.step_time_ns == (15 + 4 + 4) * kMs);  // f 15 ms + b 4 ms + recompute 4 ms
  CHECK(r.note.find("MILP optimal") != std::string::npos);
  int recomputes = 0;
  for (const Instruction& in : r.schedule.instructions) {
    if (in.kind == InstrKind::recompute) {
      ++recomputes;
      CHECK(in.op == 0);  // f0
    }
  }
  CHECK(recomputes == 1);
}

TEST_CASE("checkmate keeps the plain schedule when it already fits") {
  const Schedule base = policies::build_plain_schedule({Chain().g});
  const PolicyResult r = plan(*policies::make_checkmate_policy(), base, chain_cost(), 5 * kMiB);
  REQUIRE(r.feasible);
  CHECK(simulate_at(r.schedule, chain_cost(), 5 * kMiB).recompute_ns == 0);
  CHECK(r.note == "fits without recomputation");
}

TEST_CASE("checkmate refuses a limit below the smallest possible peak") {
  const Schedule base = policies::build_plain_schedule({Chain().g});
  // At b1, g2 a0 g1 and x (needed by b0, never rebuilt) are resident: 4 MiB whatever is recomputed,
  // so 1 byte less cannot be met.
  const PolicyResult r = plan(*policies::make_checkmate_policy(), base, chain_cost(), 4 * kMiB - 1);
  CHECK_FALSE(r.feasible);
  CHECK(r.note.find("MILP infeasible") != std::string::npos);
  CHECK(r.step_time_ns == 0);
}

TEST_CASE("checkmate refuses graphs above its op limit") {
  const Schedule base = policies::build_plain_schedule({Chain().g});
  policies::CheckmateOptions o;
  o.max_ops = 7;
  const PolicyResult r = plan(*policies::make_checkmate_policy(o), base, chain_cost(), 4 * kMiB);
  CHECK_FALSE(r.feasible);
  CHECK(r.note == "graph too large for checkmate: 8 ops > limit 7");
}

TEST_CASE("checkmate rejects bad input naming the field") {
  const Schedule base = policies::build_plain_schedule({Chain().g});
  const auto policy = policies::make_checkmate_policy();
  CHECK_THROWS_WITH_AS(plan(*policy, base, chain_cost(), 0),
                       "policy 'checkmate': input field 'memory_limit_bytes' = 0 must be > 0", Error);
  policies::CheckmateOptions o;
  o.milp.time_limit_s = 0;
  CHECK_THROWS_WITH_AS(policies::make_checkmate_policy(o), "checkmate: option 'time_limit_s' = 0 must be > 0",
                       Error);
}

TEST_CASE("checkmate recomputes no more than any other recompute-only policy on small training steps") {
  const auto cost = costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  const auto checkmate = policies::make_checkmate_policy();
  for (const Graph& step : {tiny_mlp_step(), tiny_cnn_step()}) {
    const Schedule base = policies::build_plain_schedule({step});
    const sim::Prediction plain = simulate_at(base, *cost, -1);
    INFO(step.name << ": " << step.ops.size() << " ops, plain peak " << plain.peak_bytes);
    REQUIRE(step.ops.size() <= 60);
    // Limits between the persistent bytes and the plain peak: 70 % and 55 % of the step's own memory.
    int feasible = 0;
    for (int percent : {70, 55}) {
      const int64_t limit = plain.resident_bytes + (plain.peak_bytes - plain.resident_bytes) * percent / 100;
      const PolicyResult cm = plan(*checkmate, base, *cost, limit);
      INFO("limit " << limit << " (" << percent << " %): " << cm.note);
      if (!cm.feasible) {
        // No recompute-only plan of any registered policy may fit where the optimum does not.
        for (const policies::PolicyInfo& info : policies::builtin_policies().policies()) {
          if (info.name == "checkmate" || info.name == "none") continue;
          const PolicyResult other = plan(*info.create(), base, *cost, limit);
          if (!other.feasible) continue;
          INFO(info.name << ": " << other.note);
          CHECK(simulate_at(other.schedule, *cost, limit).bytes_swapped_out > 0);
        }
        continue;
      }
      ++feasible;
      CHECK_NOTHROW(validate_schedule(cm.schedule));
      const sim::Prediction cm_pred = simulate_at(cm.schedule, *cost, limit);
      REQUIRE_FALSE(cm_pred.oom);
      CHECK(cm_pred.recompute_ns > 0);  // the plain schedule does not fit, so something is recomputed
      CHECK(cm_pred.bytes_swapped_out == 0);
      for (const policies::PolicyInfo& info : policies::builtin_policies().policies()) {
        if (info.name == "checkmate" || info.name == "none") continue;
        const PolicyResult other = plan(*info.create(), base, *cost, limit);
        if (!other.feasible) continue;
        const sim::Prediction op = simulate_at(other.schedule, *cost, limit);
        if (op.oom || op.bytes_swapped_out > 0) continue;  // swapping policies trade differently
        INFO(info.name << ": " << other.note);
        CHECK(cm_pred.recompute_ns <= op.recompute_ns);
      }
    }
    CHECK(feasible >= 1);
  }
}
