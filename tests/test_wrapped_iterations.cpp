// Wrapped iteration boundaries (ir/unrolled_schedule.hpp, μ-TWO's steady state): the merge of
// the last sub-array's backward with the first one's next forward on the hand-derived two-sub-array
// tiny step (tests/support/tiny_step.hpp), its simulated times, the deferral that keeps a tensor's
// iterations in order, and the errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "ir/unrolled_schedule.hpp"
#include "policies/array_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/multiplex.hpp"
#include "policies/policy_registry.hpp"
#include "policies/state_offload.hpp"
#include "policies/wrapped_plan.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "tests/support/tiny_step.hpp"

using namespace mutwo;
using namespace mutwo::ir;
using mutwo::test::FixedCostModel;
using mutwo::test::kMs;

namespace {

std::vector<int64_t> op_ns(const Graph& g) {
  std::vector<int64_t> ns(g.ops.size(), kMs);  // two_part_costs
  ns[3] = 3 * kMs;
  ns[9] = 2 * kMs;
  return ns;
}

// The unrolled program as labels (instruction_trace), uploads as "u<tensor>", each with its
// iteration: "c10@0".
std::vector<std::string> program(const UnrolledSchedule& u) {
  const std::vector<std::string> labels = test::instruction_trace(u.schedule);
  std::vector<std::string> out;
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string label =
        u.original_of[i] == kNoId ? "u" + std::to_string(u.schedule.instructions[i].tensor) : labels[i];
    out.push_back(label + "@" + std::to_string(u.iteration_of[i]));
  }
  return out;
}

std::vector<std::string> slice(const std::vector<std::string>& v, size_t from, size_t to) {
  return {v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to)};
}

sim::SimOptions unlimited(int32_t iterations, bool wrap) {
  sim::SimOptions o;
  o.memory_limit_bytes = -1;
  o.iterations = iterations;
  o.wrap_iterations = wrap;
  return o;
}

}  // namespace

TEST_CASE("wrapped boundaries: BW_2 of one iteration merged with FW_1 of the next, by progress") {
  // The multiplexed step (test_multiplex.cpp) computes 0 1 2 7 3 8 4 5 9 6 10 11 12 13. Head:
  // everything before c7, the first compute of an op outside sub-array 1's forward (c0 c1 c2 and
  // the frees among them); tail: from c10, sub-array 2's first backward op, to the end.
  // Progress (midpoint shares): tail c10 1/8, c11 3/8, c12 5/8, c13 7/8 of 4 ms; head c0 1/6,
  // c1 3/6, c2 5/6 of 3 ms: c10 c0 c11 c1 c12 c2 c13, each compute with the frees listed before
  // it. No head instruction touches a tensor of sub-array 2, so nothing is deferred.
  const FixedCostModel cost = test::two_part_costs();
  const Schedule s = policies::build_multiplexed_schedule({test::tiny_step(), test::tiny_step()}, cost);
  const BoundaryMerge m = boundary_merge(s, op_ns(s.graph));
  const std::vector<std::string> step = test::instruction_trace(s);
  CHECK(step[static_cast<size_t>(m.head_end)] == "c7");
  CHECK(step[static_cast<size_t>(m.tail_begin)] == "c10");
  std::vector<std::string> merged;
  for (const auto& [next, i] : m.order) {
    merged.push_back(step[static_cast<size_t>(i)] + (next ? "'" : ""));
  }
  // The step lists head c0 c1 f3 c2 f5 and tail c10 f13 f17 c11 f15 f18 c12 f11 f19 c13; the
  // head's trailing free (f5, 0 ns) comes last, at share 1.
  CHECK(merged == std::vector<std::string>{"c10", "c0'", "f13", "f17", "c11", "c1'", "f15", "f18", "c12",
                                           "f3'", "c2'", "f11", "f19", "c13", "f5'"});

  // Unrolled 3 times: iteration 0 up to its tail, then per boundary k-1 | k the merge above with
  // iteration k's batch uploaded just before its first use (x 0 before c0, labels 2 before c2;
  // sub-array 2's x 11 and labels 13 before c7 and c9 in the middle), then iteration k's middle;
  // the last tail merges with the head of iteration 3.
  const UnrolledSchedule u = unroll_iterations(s, 3, &m);
  CHECK(u.wrapped);
  CHECK(u.iterations == 3);
  const std::vector<std::string> p = program(u);
  const size_t mid = static_cast<size_t>(m.tail_begin);  // iteration 0's instructions before its tail
  CHECK(slice(p, mid, mid + 17) ==
        std::vector<std::string>{"c10@0", "u0@1", "c0@1", "f13@0", "f17@0", "c11@0", "c1@1", "f15@0", "f18@0",
                                 "c12@0", "f3@1", "u2@1", "c2@1", "f11@0", "f19@0", "c13@0", "f5@1"});
  CHECK(p[mid + 17] == "u11@1");
  CHECK(p[mid + 18] == "c7@1");
  CHECK(p.back() == "f5@3");
  // 3 full steps, 2 x 4 uploads and the partner head (5 instructions, 2 uploads).
  CHECK(p.size() == 3 * s.instructions.size() + 8 + 5 + 2);

  // Simulated (ops as estimated, uploads 1 B/ns on the compute stream: x 128 B, labels 32 B):
  // iteration 0 runs 13 ms to c6, then c10, u0 (128 ns), c0, c11, c1, c12, u2 (32 ns), c2, c13:
  // it ends at 20 ms + 160. Each later iteration: its middle (u11, u13 and 10 ms of ops) and the
  // next boundary (7 ms and 160 ns of uploads): 17 ms + 320, as unwrapped (the compute stream is
  // never idle, so merging only reorders it).
  const sim::Prediction wrapped = sim::simulate(s, cost, unlimited(3, true));
  CHECK(wrapped.wrapped);
  CHECK(wrapped.iteration_end_ns == std::vector<int64_t>{20 * kMs + 160, 37 * kMs + 480, 54 * kMs + 800});
  CHECK(wrapped.first_step_ns == 20 * kMs + 160);
  CHECK(wrapped.step_time_ns == 17 * kMs + 320);
  const sim::Prediction unwrapped = sim::simulate(s, cost, unlimited(3, false));
  CHECK_FALSE(unwrapped.wrapped);
  CHECK(unwrapped.step_time_ns == 17 * kMs + 320);
  // Sub-array 1's next forward now runs while sub-array 2's backward still holds its activations,
  // but that window holds no more than the step's own peak (7168 B, in [BW_1 ‖ FW_2]).
  CHECK(unwrapped.peak_bytes == 7168);
  CHECK(wrapped.peak_bytes == 7168);
}

TEST_CASE("wrapped boundaries: a head instruction waits for the tail's last touch of its tensor") {
  // The offloaded step (test_state_offload.cpp) prefetches sub-array 2's weight (i12) in its head,
  // triggered by c1; the tail swaps that weight out after its update (o12) and frees it (f12).
  // The next iteration's i12 is deferred until after f12, but the head's compute is not: it keeps
  // the merge's place (c0 after c10, c1 after c11, c2 after c12).
  const FixedCostModel cost = test::two_part_costs();
  const Schedule base = policies::build_multiplexed_schedule({test::tiny_step(), test::tiny_step()}, cost);
  const Schedule s = policies::offload_model_state(base, cost);
  const BoundaryMerge m = boundary_merge(s, op_ns(s.graph));
  const std::vector<std::string> step = test::instruction_trace(s);
  std::vector<std::string> merged;
  for (const auto& [next, i] : m.order) merged.push_back(step[static_cast<size_t>(i)] + (next ? "'" : ""));
  CHECK(merged == std::vector<std::string>{"c10", "f1",  "i1'", "c0'", "f10", "f13", "f17", "c11", "c1'",
                                           "i21", "f15", "f18", "c12", "f3'", "c2'", "f11", "f19", "c13",
                                           "o12", "o21", "f20", "f12", "i12'", "f21", "f5'"});

  // Wrapping is not free here. Steady state from T, the end of c13 of iteration k-1: the compute
  // stream frees w12 and m21 once o12 and o21 (512 ns each, D2H) are done, at T + 1024; then u11
  // (128 ns), c7 (its i12, deferred after f12 at T + 512, is in by T + 1024), the middle's 10 ms of
  // ops and u13 (32 ns); then c10, f1 and u0 (128 ns), and c0, which waits for i1: issued after f1,
  // it lands 512 ns after c10's end, 384 ns after u0 (unwrapped, i1 was in 3 ms earlier); then the
  // remaining 6 ms and u2 (32 ns) to c13: 17 ms + 1024 + 320 + 384 = 17 ms + 1728, against 17 ms +
  // 1344 unwrapped. Iteration 0 ends with its f21 at 20 ms + 2080 (its compute 512 ns late behind
  // the first i1, as one step, then the same boundary).
  const sim::Prediction wrapped = sim::simulate(s, cost, unlimited(3, true));
  const sim::Prediction unwrapped = sim::simulate(s, cost, unlimited(3, false));
  CHECK(unwrapped.step_time_ns == 17 * kMs + 1344);
  CHECK(wrapped.step_time_ns == 17 * kMs + 1728);
  CHECK(wrapped.iteration_end_ns ==
        std::vector<int64_t>{20 * kMs + 2080, 37 * kMs + 3808, 54 * kMs + 5536});
  // The merged window holds one 512 B block more than the step's peak (5120 B), at the next
  // iteration's c2.
  CHECK(unwrapped.peak_bytes == 5120);
  CHECK(wrapped.peak_bytes == 5632);
  CHECK(step[static_cast<size_t>(wrapped.peak_instruction)] == "c2");
}

TEST_CASE("wrapped boundaries: errors name what is missing") {
  const FixedCostModel cost = test::two_part_costs();
  const Schedule one = policies::build_multiplexed_schedule({test::tiny_step()}, cost);
  CHECK_THROWS_WITH_AS(boundary_merge(one, std::vector<int64_t>(one.graph.ops.size(), kMs)),
                       "wrap: the schedule has 1 sub-array(s); merging the last one's backward with the first one's "
                       "next forward needs two or more",
                       Error);
  const Schedule two = policies::build_multiplexed_schedule({test::tiny_step(), test::tiny_step()}, cost);
  CHECK_THROWS_WITH_AS(boundary_merge(two, {1, 2}), "wrap: 2 op durations for a graph of 14 ops", Error);
  BoundaryMerge bad = boundary_merge(two, op_ns(two.graph));
  bad.order.pop_back();
  CHECK_THROWS_WITH_AS(unroll_iterations(two, 2, &bad),
                       "wrap: a boundary merge of head [0, 5) and tail [20, ...) with 14 entries does not fit a "
                       "schedule of 30 instructions",
                       Error);
  sim::SimOptions o = unlimited(2, true);
  CHECK_THROWS_AS(sim::simulate(one, cost, o), Error);
}


TEST_CASE("planning for the wrapped steady state lowers the plan's limit by the overshoot until it fits") {
  // 4 bert-mini as 2+2, multiplexed, capuchin at 60 % of the activations above the resident state:
  // the one-step plan fits, its wrapped steady state does not (sub-array 1's forward meets sub-array
  // 2's backward); planned again at the limit minus the overshoot, it fits.
  const auto cost = costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  policies::ModelArray array;
  array.model = "bert-mini";
  array.count = 4;
  const std::vector<Graph> parts = policies::sub_array_steps(array, {2, 2});
  const sim::Prediction unlimited_step =
      sim::simulate(policies::build_multiplexed_schedule(parts, *cost), *cost, unlimited(1, false));
  const auto policy = policies::builtin_policies().create("capuchin");
  const int64_t limit =
      unlimited_step.resident_bytes + (unlimited_step.peak_bytes - unlimited_step.resident_bytes) * 6 / 10;
  const policies::ArrayPlan once =
      policies::plan_sub_arrays(parts, *policy, *cost, limit, policies::SubArrayOrder::multiplexed);
  REQUIRE(once.result.feasible);
  sim::SimOptions o = unlimited(3, true);
  o.memory_limit_bytes = limit;
  o.continue_past_limit = true;
  const sim::Prediction steady = sim::simulate(once.result.schedule, *cost, o);
  CHECK(steady.oom);
  const int64_t overshoot = steady.peak_bytes - limit;
  CHECK(overshoot > 0);

  const policies::WrappedArrayPlan w =
      policies::plan_sub_arrays_wrapped(parts, *policy, *cost, limit, policies::SubArrayOrder::multiplexed);
  CHECK(w.fits);
  CHECK(w.planned_at_bytes == limit - overshoot);  // one more plan sufficed
  CHECK(w.wrapped_peak_bytes <= limit);
  CHECK(w.wrapped_peak_bytes > w.planned_at_bytes);  // the room it left is used by the merged window
  o.continue_past_limit = false;
  CHECK_FALSE(sim::simulate(w.plan.result.schedule, *cost, o).oom);
}
