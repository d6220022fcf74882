// Plan machinery: compute order, inactive windows and emit_plan's placement of swaps and
// recomputations. Graphs are built by hand; op durations come from a fixed table and transfers run
// at 1 byte/ns with no latency, so every expected figure below is derived exactly.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/op_cost_model.hpp"
#include "ir/schedule_check.hpp"
#include "policies/memory_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/plan_emitter.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "tests/support/hand_graph.hpp"

using namespace mutwo::ir;
using mutwo::costmodel::DeviceSpec;
using mutwo::costmodel::OpCostModel;
using mutwo::policies::compute_order;
using mutwo::policies::ComputeOrder;
using mutwo::policies::emit_plan;
using mutwo::policies::inactive_windows;
using mutwo::policies::InactiveWindow;
using mutwo::policies::MemoryPlan;
using mutwo::policies::TensorAction;
using mutwo::policies::TensorDecision;

using mutwo::test::FixedCostModel;

namespace {

constexpr int64_t kMs = 1'000'000;  // ns

// A hand-made graph: tensors with exact byte sizes, opaque recomputable forward ops.
struct TestGraph {
  Graph g;
  TensorId tensor(const std::string& name, int64_t bytes, TensorRole role = TensorRole::activation) {
    return mutwo::test::add_byte_tensor(g, name, bytes, role);
  }
  OpId op(const std::string& name, std::vector<TensorId> inputs, std::vector<TensorId> outputs,
          int64_t workspace_bytes = 0) {
    Op o;
    o.id = static_cast<OpId>(g.ops.size());
    o.name = name;
    o.kind = OpKind::opaque;
    o.phase = Phase::forward;
    o.inputs = std::move(inputs);
    o.outputs = std::move(outputs);
    o.workspace_bytes = workspace_bytes;
    o.recomputable = true;
    g.ops.push_back(o);
    return o.id;
  }
  // The plain base schedule of this graph (every op once, frees after the last reader).
  Schedule base() && {
    g.name = "hand";
    return mutwo::policies::build_plain_schedule({std::move(g)});
  }
};

const Instruction& at(const Schedule& s, size_t i) {
  return s.instructions.at(i);
}

// "compute B", "free a", ... for comparing whole instruction lists.
std::vector<std::string> listing(const Schedule& s) {
  std::vector<std::string> out;
  for (const Instruction& in : s.instructions) {
    const std::string what = runs_op(in.kind) ? s.graph.op(in.op).name : s.graph.tensor(in.tensor).name;
    out.push_back(std::string(instr_kind_name(in.kind)) + " " + what);
  }
  return out;
}

// Swap graph: x -A-> a -B-> b -C(workspace 3,000,000 B)-> c -E-> e, D(e, a) -> d.
// a is 2,000,000 B (2 ms per copy at 1 B/ns; 2,000,384 B after 512 B rounding), the others 512 B.
// Durations A 1, B 2, C 3, E 3, D 1 ms. Positions: A 0, B 1, C 2, E 3, D 4.
struct SwapCase {
  Schedule base;
  FixedCostModel cost{{{0, 1 * kMs}, {1, 2 * kMs}, {2, 3 * kMs}, {3, 3 * kMs}, {4, 1 * kMs}}};
  SwapCase() {
    TestGraph tg;
    TensorId x = tg.tensor("x", 512, TensorRole::input);
    TensorId a = tg.tensor("a", 2'000'000);
    TensorId b = tg.tensor("b", 512);
    TensorId c = tg.tensor("c", 512);
    TensorId e = tg.tensor("e", 512);
    TensorId d = tg.tensor("d", 512);
    tg.op("A", {x}, {a});
    tg.op("B", {a}, {b});
    tg.op("C", {b}, {c}, 3'000'000);
    tg.op("E", {c}, {e});
    tg.op("D", {e, a}, {d});
    base = std::move(tg).base();
  }
};

// Recompute graph: x -A-> a -B-> (b, b2 unread) -C-> c -D-> d, E(d, b) -> e, F(e, x) -> f.
// Durations A 1, B 2, C 1, D 1, E 1, F 1 ms. Positions = op ids 0..5.
struct RecomputeCase {
  Schedule base;
  FixedCostModel cost{{{0, 1 * kMs}, {1, 2 * kMs}, {2, 1 * kMs}, {3, 1 * kMs}, {4, 1 * kMs}, {5, 1 * kMs}}};
  RecomputeCase() {
    TestGraph tg;
    TensorId x = tg.tensor("x", 512, TensorRole::input);  // 0
    TensorId a = tg.tensor("a", 1024);                    // 1
    TensorId b = tg.tensor("b", 4096);                    // 2
    TensorId b2 = tg.tensor("b2", 512);                   // 3
    TensorId c = tg.tensor("c", 512);                     // 4
    TensorId d = tg.tensor("d", 512);                     // 5
    TensorId e = tg.tensor("e", 512);                     // 6
    TensorId f = tg.tensor("f", 512);                     // 7
    tg.op("A", {x}, {a});
    tg.op("B", {a}, {b, b2});
    tg.op("C", {b}, {c});
    tg.op("D", {c}, {d});
    tg.op("E", {d, b}, {e});
    tg.op("F", {e, x}, {f});
    base = std::move(tg).base();
  }
};
constexpr TensorId kB = 2;

MemoryPlan one(TensorDecision d) {
  MemoryPlan p;
  p.decisions.push_back(d);
  return p;
}

TensorDecision decision(TensorId t, TensorAction action, int32_t evict_after, int32_t reload_before,
                        int32_t swap_in_after = -1) {
  TensorDecision d;
  d.tensor = t;
  d.action = action;
  d.evict_after = evict_after;
  d.reload_before = reload_before;
  d.swap_in_after = swap_in_after;
  return d;
}

}  // namespace

TEST_CASE("compute order lists the base's computes with back-to-back start times") {
  RecomputeCase rc;
  const ComputeOrder o = compute_order(rc.base, rc.cost);
  CHECK(o.op_at == std::vector<OpId>{0, 1, 2, 3, 4, 5});
  CHECK(o.position_of == std::vector<int32_t>{0, 1, 2, 3, 4, 5});
  // A 1 + B 2 + C 1 + D 1 + E 1 + F 1 ms: starts 0, 1, 3, 4, 5, 6 ms; total 7 ms.
  CHECK(o.start_ns == std::vector<int64_t>{0, 1 * kMs, 3 * kMs, 4 * kMs, 5 * kMs, 6 * kMs});
  CHECK(o.duration_ns == std::vector<int64_t>{kMs, 2 * kMs, kMs, kMs, kMs, kMs});
  CHECK(o.total_ns == 7 * kMs);
}

TEST_CASE("compute order refuses a schedule that is not a base schedule") {
  RecomputeCase rc;
  Schedule twice = rc.base;
  Instruction again = twice.instructions.front();  // compute A
  again.id = static_cast<InstrId>(twice.instructions.size());
  twice.instructions.push_back(again);
  CHECK_THROWS_WITH_AS(compute_order(twice, rc.cost), doctest::Contains("op 0 'A' is computed twice"),
                       mutwo::Error);

  Schedule missing = rc.base;
  std::erase_if(missing.instructions,
                [](const Instruction& in) { return in.kind == InstrKind::compute && in.op == 5; });
  CHECK_THROWS_WITH_AS(compute_order(missing, rc.cost), doctest::Contains("op 5 'F' is never computed"),
                       mutwo::Error);

  Schedule swapped = rc.base;
  swapped.instructions[1].kind = InstrKind::swap_out;
  CHECK_THROWS_WITH_AS(compute_order(swapped, rc.cost), doctest::Contains("is a swap_out"), mutwo::Error);
}

TEST_CASE("inactive windows: one per evictable tensor with a gap, by idle time") {
  RecomputeCase rc;
  const ComputeOrder o = compute_order(rc.base, rc.cost);
  // b is accessed at 1 (B makes it), 2 (C), 4 (E): gap 2 -> 4, idle = E starts 5 ms - C ends 4 ms
  // = 1 ms. a (0, 1), c (2, 3), d (3, 4), e (4, 5) have no gap; b2 and f are never read;
  // x is an input (read at 0 and 5), not evictable.
  const std::vector<InactiveWindow> w = inactive_windows(rc.base, o);
  REQUIRE(w.size() == 1);
  CHECK(w[0].tensor == kB);
  CHECK(w[0].bytes == 4096);
  CHECK(w[0].evict_after == 2);
  CHECK(w[0].reload_before == 4);
  CHECK(w[0].inactive_ns == 1 * kMs);

  // t is made at 0 and read at 2 and 5; op 1 takes 10 ms, ops 3 and 4 take 1 ms: the gap 0 -> 2
  // (10 ms idle, 1 position) beats 2 -> 5 (2 ms idle, 2 positions).
  TestGraph tg;
  TensorId x = tg.tensor("x", 512, TensorRole::input);
  TensorId t = tg.tensor("t", 512);
  TensorId u = tg.tensor("u", 512);
  TensorId v = tg.tensor("v", 512);
  TensorId y = tg.tensor("y", 512);
  TensorId z = tg.tensor("z", 512);
  tg.op("P", {x}, {t});
  tg.op("Q", {x}, {u});
  tg.op("R", {t, u}, {v});
  tg.op("S", {v}, {y});
  tg.op("T", {y}, {z});
  tg.op("U", {z, t}, {tg.tensor("out", 512)});
  const Schedule base = std::move(tg).base();
  const FixedCostModel cost({{0, kMs}, {1, 10 * kMs}, {2, kMs}, {3, kMs}, {4, kMs}, {5, kMs}});
  const std::vector<InactiveWindow> w2 = inactive_windows(base, compute_order(base, cost));
  // u (1, 2), v (2, 3), y (3, 4), z (4, 5) have no gap: t alone.
  REQUIRE(w2.size() == 1);
  CHECK(w2[0].tensor == t);
  CHECK(w2[0].evict_after == 0);
  CHECK(w2[0].reload_before == 2);
  CHECK(w2[0].inactive_ns == 10 * kMs);  // R starts 11 ms - P ends 1 ms
}

TEST_CASE("a swap is placed after the producer, freed after evict_after, prefetched after the trigger") {
  SwapCase sc;
  const ComputeOrder o = compute_order(sc.base, sc.cost);
  constexpr TensorId a = 1;
  const Schedule s = emit_plan(sc.base, o, one(decision(a, TensorAction::swap, 1, 4, 2)), "test");
  REQUIRE_NOTHROW(validate_schedule(s));
  CHECK(s.policy == "test");
  CHECK(listing(s) == std::vector<std::string>{"compute A", "swap_out a", "free x", "compute B", "free a",
                                               "compute C", "free b", "swap_in a", "compute E", "free c",
                                               "compute D", "free a", "free e", "free d"});
  // swap_out waits on its producer (instruction 0); the free of a on the swap_out; swap_in on the
  // free (4) and on C(2) = compute C (5); D on the swap_in (7).
  CHECK(at(s, 1).stream == kDeviceToHostStream);
  CHECK(at(s, 1).waits == std::vector<InstrId>{0});
  CHECK(at(s, 4).waits == std::vector<InstrId>{1});
  CHECK(at(s, 7).stream == kHostToDeviceStream);
  CHECK(at(s, 7).waits == std::vector<InstrId>{4, 5});
  CHECK(at(s, 10).waits == std::vector<InstrId>{7});

  // swap_out 1..3 ms under B (1..3); free a at 3; C 3..6; swap_in 6..8 under E (3 ms, 6..9):
  // D starts at 9: step 1 + 2 + 3 + 3 + 1 = 10 ms, no stall.
  const mutwo::sim::Prediction p = mutwo::sim::simulate(s, sc.cost);
  CHECK(p.step_time_ns == 10 * kMs);
  CHECK(p.compute_stall_ns == 0);
  CHECK(p.bytes_swapped_out == 2'000'000);
  CHECK(p.bytes_swapped_in == 2'000'000);
  // Peak during C: b 512 + c 512 + workspace 3,000,320 (3,000,000 rounded up) = 3,001,344; a is off.
  // Later, E + the swap_in hold c + e + a = 512 + 512 + 2,000,384 = 2,001,408.
  CHECK(p.peak_bytes == 3'001'344);
  // Without the plan C also holds a: 3,001,344 + 2,000,384 = 5,001,728, in the same 10 ms.
  const mutwo::sim::Prediction none = mutwo::sim::simulate(sc.base, sc.cost);
  CHECK(none.peak_bytes == 5'001'728);
  CHECK(none.step_time_ns == 10 * kMs);
}

TEST_CASE("a swap prefetched right after its free stalls the reader only for the uncovered copy") {
  SwapCase sc;
  const ComputeOrder o = compute_order(sc.base, sc.cost);
  // swap_in_after = -1: the swap_in waits on the free alone (instruction list: ..., free a, swap_in a, C
  // ...).
  const Schedule s = emit_plan(sc.base, o, one(decision(1, TensorAction::swap, 1, 4)), "test");
  REQUIRE_NOTHROW(validate_schedule(s));
  CHECK(at(s, 5).kind == InstrKind::swap_in);
  CHECK(at(s, 5).waits == std::vector<InstrId>{4});
  // swap_in 3..5 ms overlaps C (3..6): no stall, 10 ms; but a is back during C: peak as without the plan.
  const mutwo::sim::Prediction p = mutwo::sim::simulate(s, sc.cost);
  CHECK(p.step_time_ns == 10 * kMs);
  CHECK(p.compute_stall_ns == 0);
  CHECK(p.peak_bytes == 5'001'728);
}

TEST_CASE("a recompute rebuilds the chain back to resident tensors and frees the helpers") {
  RecomputeCase rc;
  const ComputeOrder o = compute_order(rc.base, rc.cost);
  // b freed after C (position 2), needed by E (4). Its producer B reads a, freed after B in the base:
  // A is recomputed first, then B; a (helper) and b2 (unwanted extra output of B) are freed at once.
  // A reads x, resident until F: the chain stops there.
  const Schedule s = emit_plan(rc.base, o, one(decision(kB, TensorAction::recompute, 2, 4)), "test");
  REQUIRE_NOTHROW(validate_schedule(s));
  CHECK(listing(s) == std::vector<std::string>{"compute A", "compute B", "free a", "free b2", "compute C",
                                               "free b", "compute D", "free c", "recompute A", "recompute B",
                                               "free a", "free b2", "compute E", "free b", "free d",
                                               "compute F", "free x", "free e", "free f"});
  const mutwo::sim::Prediction p = mutwo::sim::simulate(s, rc.cost);
  CHECK(p.recompute_ns == 3 * kMs);   // A 1 + B 2 ms
  CHECK(p.step_time_ns == 10 * kMs);  // 7 ms of compute + 3 ms recomputed
  CHECK(p.compute_stall_ns == 0);
}

TEST_CASE("a tensor may be reloaded before the position that reads it") {
  RecomputeCase rc;
  const ComputeOrder o = compute_order(rc.base, rc.cost);
  // b rebuilt before D (3) though E (4) reads it: the recomputes move one op earlier and b stays.
  const Schedule s = emit_plan(rc.base, o, one(decision(kB, TensorAction::recompute, 2, 3)), "test");
  REQUIRE_NOTHROW(validate_schedule(s));
  CHECK(listing(s) == std::vector<std::string>{"compute A", "compute B", "free a", "free b2", "compute C",
                                               "free b", "recompute A", "recompute B", "free a", "free b2",
                                               "compute D", "free c", "compute E", "free b", "free d",
                                               "compute F", "free x", "free e", "free f"});
}

TEST_CASE("invalid decisions are refused naming the tensor and the field") {
  RecomputeCase rc;
  const ComputeOrder o = compute_order(rc.base, rc.cost);
  auto emit = [&](TensorDecision d) { return emit_plan(rc.base, o, one(d), "test"); };
  CHECK_THROWS_WITH_AS(emit(decision(99, TensorAction::swap, 2, 4)),
                       doctest::Contains("field 'tensor' = 99 refers to no tensor (8 tensors)"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(emit(decision(0, TensorAction::swap, 0, 5)),
                       doctest::Contains("tensor 0 'x'): field 'tensor': role input is not evictable"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(emit(decision(5, TensorAction::swap, 2, 4)),  // d is made at 3
                       doctest::Contains("tensor 5 'd'): field 'evict_after' = 2 must be in [3, 6)"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(emit(decision(kB, TensorAction::swap, 2, 6)),
                       doctest::Contains("tensor 2 'b'): field 'reload_before' = 6 must be in (2, 6)"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(
      emit(decision(1, TensorAction::swap, 1, 4)),  // a is last read by B at 1
      doctest::Contains("tensor 1 'a'): field 'reload_before' = 4: the tensor is not read at or "
                        "after that position"),
      mutwo::Error);
  CHECK_THROWS_WITH_AS(
      emit(decision(kB, TensorAction::swap, 1, 4)),
      doctest::Contains("tensor 2 'b'): fields 'evict_after' = 1, 'reload_before' = 4: the tensor "
                        "is read inside the window at position 2 by op 2 'C'"),
      mutwo::Error);
  CHECK_THROWS_WITH_AS(emit(decision(kB, TensorAction::swap, 2, 4, 4)),
                       doctest::Contains("tensor 2 'b'): field 'swap_in_after' = 4 must be -1 or in [2, 4)"),
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(emit(decision(kB, TensorAction::recompute, 2, 4, 3)),
                       doctest::Contains("field 'swap_in_after' = 3 applies to swap only"), mutwo::Error);
  CHECK_THROWS_WITH_AS(emit(decision(kB, static_cast<TensorAction>(7), 2, 4)),
                       doctest::Contains("tensor 2 'b'): field 'action' = 7 is not keep, swap or recompute"),
                       mutwo::Error);
  MemoryPlan twice = one(decision(kB, TensorAction::swap, 2, 4));
  twice.decisions.push_back(decision(kB, TensorAction::recompute, 2, 4));
  CHECK_THROWS_WITH_AS(
      emit_plan(rc.base, o, twice, "test"),
      doctest::Contains("plan decision 1 (tensor 2 'b'): field 'tensor': the tensor already has "
                        "plan decision 0"),
      mutwo::Error);

  // B not recomputable: b cannot be recomputed, but it can still be swapped.
  Schedule pinned = rc.base;
  pinned.graph.ops[1].recomputable = false;
  CHECK_THROWS_WITH_AS(
      emit_plan(pinned, o, one(decision(kB, TensorAction::recompute, 2, 4)), "test"),
      doctest::Contains("tensor 2 'b'): field 'action' = recompute: its producer op 1 'B' is not "
                        "recomputable"),
      mutwo::Error);
  CHECK_NOTHROW(validate_schedule(emit_plan(pinned, o, one(decision(kB, TensorAction::swap, 2, 4)), "test")));
  // A not recomputable: b can be, but its missing input a cannot be rebuilt.
  Schedule stuck = rc.base;
  stuck.graph.ops[0].recomputable = false;
  CHECK_THROWS_WITH_AS(
      emit_plan(stuck, o, one(decision(kB, TensorAction::recompute, 2, 4)), "test"),
      doctest::Contains("plan decision for tensor 2 'b': field 'reload_before' = 4: rebuilding it "
                        "needs tensor 1 'a'"),
      mutwo::Error);
}

TEST_CASE("keep decisions and an empty plan leave the base schedule unchanged") {
  RecomputeCase rc;
  const ComputeOrder o = compute_order(rc.base, rc.cost);
  const Schedule s = emit_plan(rc.base, o, one(decision(kB, TensorAction::keep, -1, -1)), "none");
  CHECK(listing(s) == listing(rc.base));
  CHECK(s.policy == "none");
}

namespace {

Schedule resnet18_base() {
  mutwo::policies::ModelArray array;
  array.model = "resnet18";
  array.count = 1;
  // Batch 32: activations, not Adam's temporaries beside the resident state, set the peak.
  array.config.batch_size = 32;
  array.config.image_size = 64;
  return mutwo::policies::build_plain_schedule(mutwo::policies::sub_array_steps(array, {1}));
}

}  // namespace

TEST_CASE("every window swapped or recomputed on resnet18 gives a valid schedule") {
  const Schedule base = resnet18_base();
  auto cost =
      mutwo::costmodel::builtin_cost_sources().create("analytic", mutwo::costmodel::find_device("a100-40gb"));
  const ComputeOrder o = compute_order(base, *cost);
  const std::vector<InactiveWindow> windows = inactive_windows(base, o);
  REQUIRE(windows.size() > 20);
  const mutwo::sim::Prediction none = mutwo::sim::simulate(base, *cost);

  MemoryPlan swaps;
  MemoryPlan swaps_late;
  MemoryPlan recomputes;
  for (const InactiveWindow& w : windows) {
    swaps.decisions.push_back(decision(w.tensor, TensorAction::swap, w.evict_after, w.reload_before));
    swaps_late.decisions.push_back(
        decision(w.tensor, TensorAction::swap, w.evict_after, w.reload_before, w.reload_before - 1));
    const Op& producer = base.graph.op(base.graph.tensor(w.tensor).producer);
    if (producer.phase == Phase::forward && producer.recomputable) {
      recomputes.decisions.push_back(
          decision(w.tensor, TensorAction::recompute, w.evict_after, w.reload_before));
    }
  }
  REQUIRE(recomputes.decisions.size() > 20);
  for (const MemoryPlan* plan : {&swaps, &swaps_late, &recomputes}) {
    REQUIRE_NOTHROW(validate_schedule(emit_plan(base, o, *plan, "test")));
  }
  // Prefetched one position before their reader, every saved activation is off the device at the
  // peak of the plain step (the end of the forward pass); reloaded right after its free it is not.
  CHECK(mutwo::sim::simulate(emit_plan(base, o, swaps_late, "test"), *cost).peak_bytes < none.peak_bytes);
  CHECK(mutwo::sim::simulate(emit_plan(base, o, recomputes, "test"), *cost).peak_bytes < none.peak_bytes);
  const mutwo::sim::Prediction r = mutwo::sim::simulate(emit_plan(base, o, recomputes, "test"), *cost);
  CHECK(r.recompute_ns > 0);
  CHECK(r.bytes_swapped_out == 0);
  const mutwo::sim::Prediction sw = mutwo::sim::simulate(emit_plan(base, o, swaps, "test"), *cost);
  CHECK(sw.bytes_swapped_out > 0);
  CHECK(sw.bytes_swapped_out == sw.bytes_swapped_in);
  CHECK(sw.recompute_ns == 0);
}

TEST_CASE("emit_plan timing on bert-base x8 (printed, not asserted)") {
  mutwo::policies::ModelArray array;
  array.model = "bert-base";
  array.count = 8;
  const Schedule base = mutwo::policies::build_plain_schedule(mutwo::policies::sub_array_steps(array, {8}));
  auto cost =
      mutwo::costmodel::builtin_cost_sources().create("analytic", mutwo::costmodel::find_device("a100-40gb"));
  const ComputeOrder o = compute_order(base, *cost);
  MemoryPlan plan;
  for (const InactiveWindow& w : inactive_windows(base, o)) {
    plan.decisions.push_back(decision(w.tensor, TensorAction::swap, w.evict_after, w.reload_before));
  }
  constexpr int kRuns = 50;
  {
    const auto c0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kRuns; ++i) {
      Graph copy = base.graph;
      CHECK(copy.ops.size() == base.graph.ops.size());
    }
    const auto c1 = std::chrono::steady_clock::now();
    MESSAGE("graph copy alone: " << std::chrono::duration<double, std::micro>(c1 - c0).count() / kRuns
                                 << " us");
  }
  const auto t0 = std::chrono::steady_clock::now();
  size_t instructions = 0;
  for (int i = 0; i < kRuns; ++i) instructions += emit_plan(base, o, plan, "timing").instructions.size();
  const auto t1 = std::chrono::steady_clock::now();
  const double us = std::chrono::duration<double, std::micro>(t1 - t0).count() / kRuns;
  const auto t2 = std::chrono::steady_clock::now();
  for (int i = 0; i < kRuns; ++i) instructions += mutwo::policies::emit_instructions(base, o, plan).size();
  const auto t3 = std::chrono::steady_clock::now();
  MESSAGE("emit_instructions alone: " << std::chrono::duration<double, std::micro>(t3 - t2).count() / kRuns
                                      << " us");
  MESSAGE("bert-base x8: base " << base.instructions.size() << " instructions, " << plan.decisions.size()
                                << " swaps -> " << instructions / kRuns << " instructions in " << us
                                << " us");
  CHECK(instructions > 2 * base.instructions.size() * kRuns);
}
