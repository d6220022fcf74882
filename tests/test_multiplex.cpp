// The multiplexed base schedule (μ-TWO, Wang et al., MLSys 2023): FW_1, [BW_1 ‖ FW_2], ..., BW_n,
// the "‖" merge by each op's midpoint share of its list's time, and the ordered-schedule builder
// under it. Hand-built sub-arrays are the tiny step below with op durations from a fixed table, so
// every interleaving and memory figure is derived by hand; real bert-base arrays check validity.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "io/schedule_json.hpp"
#include "ir/graph_builder.hpp"
#include "ir/merge_by_progress.hpp"
#include "ir/schedule_check.hpp"
#include "policies/array_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/multiplex.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "tests/support/tiny_step.hpp"
#include "transforms/autodiff.hpp"

using namespace mutwo;
using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using mutwo::costmodel::DeviceSpec;
using mutwo::costmodel::OpCostModel;

using mutwo::test::FixedCostModel;

namespace {

using mutwo::test::kMs;
using mutwo::test::tiny_step;
using mutwo::test::two_part_costs;

std::vector<std::string> trace(const Schedule& s) { return mutwo::test::instruction_trace(s); }

std::vector<OpId> computes(const Schedule& s) {
  std::vector<OpId> out;
  for (const Instruction& in : s.instructions) {
    if (in.kind == InstrKind::compute) out.push_back(in.op);
  }
  return out;
}

}  // namespace

TEST_CASE("merge by progress interleaves two lists by each op's midpoint share of its list") {
  // a: 2,2,2 (total 6) -> midpoints 1/6, 3/6, 5/6; b: 1,1,1 (total 3) -> 1/6, 3/6, 5/6; ties go to a.
  CHECK(ir::merge_by_progress({10, 11, 12}, {2, 2, 2}, {20, 21, 22}, {1, 1, 1}) ==
        std::vector<OpId>{10, 20, 11, 21, 12, 22});
  // a: one 10 ns op (midpoint 1/2); b: ten 1 ns ops (midpoints 0.05, 0.15, ..., 0.95): the five
  // of b below 1/2 run first, then a, then the other five.
  CHECK(ir::merge_by_progress({100}, {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}) ==
        std::vector<OpId>{0, 1, 2, 3, 4, 100, 5, 6, 7, 8, 9});
  // Zero total time: shares by count, (k + 1/2) / size: a 1/4, 3/4; b 1/2 -> a, b, a.
  CHECK(ir::merge_by_progress({1, 2}, {0, 0}, {3}, {0}) == std::vector<OpId>{1, 3, 2});
  // An empty list leaves the other as it is.
  CHECK(ir::merge_by_progress({}, {}, {4, 5}, {1, 1}) == std::vector<OpId>{4, 5});
  CHECK(ir::merge_by_progress({4, 5}, {1, 1}, {}, {}) == std::vector<OpId>{4, 5});
}

TEST_CASE("merge by progress refuses mismatched lists and negative durations") {
  CHECK_THROWS_WITH_AS(ir::merge_by_progress({1, 2}, {1}, {}, {}),
                       "merge_by_progress: list a has 2 ops but 1 durations", Error);
  CHECK_THROWS_WITH_AS(ir::merge_by_progress({}, {}, {7}, {-1}),
                       "merge_by_progress: list b op 7 has duration -1 ns < 0", Error);
}

TEST_CASE("multiplex order sorts sub-arrays by step time, ties by index") {
  // 5,3,5,1 ms -> 1 (idx 3), 3 (idx 1), 5 (idx 0), 5 (idx 2).
  CHECK(policies::multiplex_order({5 * kMs, 3 * kMs, 5 * kMs, kMs}) == std::vector<int32_t>{3, 1, 0, 2});
  CHECK(policies::multiplex_order({}).empty());
  CHECK_THROWS_WITH_AS(policies::multiplex_order({1, -2}),
                       "multiplex_order: sub-array 1 has step time -2 ns < 0", Error);
}

TEST_CASE("estimated step time is the sum of the op durations") {
  // Sub-array 0 of the two-part table: 1 + 1 + 1 + 3 + 1 + 1 + 1 = 9 ms.
  CHECK(policies::estimated_step_ns(tiny_step(), two_part_costs()) == 9 * kMs);
}

TEST_CASE("two sub-arrays multiplex as FW_1, [BW_1 || FW_2], BW_2 with frees after the last reader") {
  // BW_1 = 3,4,5,6 (3,1,1,1 ms, total 6): midpoints 1.5/6 = .25, 3.5/6 = .583, 4.5/6 = .75, 5.5/6 = .917.
  // FW_2 = 7,8,9 (1,1,2 ms, total 4):       midpoints 0.5/4 = .125, 1.5/4 = .375, 3/4 = .75.
  // Merge: 7 (.125 < .25), 3 (.25 < .375), 8 (.375 < .583), 4 (.583 < .75), 5 (.75 tie, to BW), 9 (.75 <
  // .917), 6.
  const FixedCostModel cost = two_part_costs();
  const Schedule s = policies::build_multiplexed_schedule({tiny_step(), tiny_step()}, cost);
  CHECK(computes(s) == std::vector<OpId>{0, 1, 2, 7, 3, 8, 4, 5, 9, 6, 10, 11, 12, 13});
  // Frees (tensor ids; sub-array 1's are + 11) right after each tensor's last reader in this order:
  // fc 3 after op 1; ce 5 after op 2; labels 2, log_probs 6 after op 3; fc 14 after op 8; relu 4,
  // relu.grad 7 after op 4; x 0, fc.grad 8 after op 5; ce 16 after op 9; labels 13, log_probs 17
  // after op 10; relu 15, relu.grad 18 after op 11; x 11, fc.grad 19 after op 12.
  CHECK(trace(s) == std::vector<std::string>{"c0",  "c1",  "f3",  "c2",  "f5",  "c7",  "c3",  "f2",
                                             "f6",  "c8",  "f14", "c4",  "f4",  "f7",  "c5",  "f0",
                                             "f8",  "c9",  "f16", "c6",  "c10", "f13", "f17", "c11",
                                             "f15", "f18", "c12", "f11", "f19", "c13"});
  CHECK(s.policy == "none");
  REQUIRE(s.sub_arrays.size() == 2);
  CHECK(s.sub_arrays[1].first_op == 7);
  CHECK_NOTHROW(validate_schedule(s));
  // The order alone, and the ordered builder over an already concatenated graph, give the same.
  std::vector<SubArray> ranges;
  Graph whole = concat_graphs({tiny_step(), tiny_step()}, &ranges);
  const std::vector<OpId> order = policies::multiplexed_op_order(whole, ranges, cost);
  CHECK(order == computes(s));
  CHECK(schedule_to_json(policies::build_ordered_schedule(std::move(whole), ranges, order)) ==
        schedule_to_json(s));
}

TEST_CASE("three sub-arrays multiplex naturally: FW_1, [BW_1 || FW_2], [BW_2 || FW_3], BW_3") {
  // All ops 1 ms. BW (4 ops): midpoints .125, .375, .625, .875; FW (3 ops): .167, .5, .833:
  // bw0 fw0 bw1 fw1 bw2 fw2 bw3. Sub-array p's ops are 7p .. 7p + 6.
  std::map<OpId, int64_t> d;
  for (OpId id = 0; id < 21; ++id) d[id] = kMs;
  const Schedule s =
      policies::build_multiplexed_schedule({tiny_step(), tiny_step(), tiny_step()}, FixedCostModel(d));
  CHECK(computes(s) ==
        std::vector<OpId>{0, 1, 2, 3, 7, 4, 8, 5, 9, 6, 10, 14, 11, 15, 12, 16, 13, 17, 18, 19, 20});
  CHECK_NOTHROW(validate_schedule(s));
}

TEST_CASE("one sub-array multiplexed is the plain schedule") {
  std::map<OpId, int64_t> d;
  for (OpId id = 0; id < 7; ++id) d[id] = (id + 1) * kMs;
  const Schedule m = policies::build_multiplexed_schedule({tiny_step()}, FixedCostModel(d), "x");
  const Schedule p = policies::build_plain_schedule({tiny_step()}, "x");
  CHECK(schedule_to_json(m) == schedule_to_json(p));
}

TEST_CASE("multiplexing keeps the step time without swaps and never lowers the peak") {
  // One compute stream, the same 14 ops: 3 + 6 + 4 + 4 = 17 ms either way, no stall.
  // Memory in 512 B blocks (every tensor here rounds up to one): resident R = 2 x 5 blocks (x,
  // fc.weight, labels, grad, momentum per sub-array) = 5120 B.
  // Back to back: sub-array 0 peaks at R + 3 (fc freed, relu + ce + log_probs live at op 2;
  // relu + log_probs + relu.grad at op 3); sub-array 1 starts 2 blocks lower (x 0, labels 2
  // freed), so the peak is R + 3 = 13 blocks = 6656 B.
  // Multiplexed: fc of sub-array 1 (op 7) is allocated before op 3, while sub-array 0 still holds
  // relu and log_probs: op 3 brings R + 4 = 14 blocks = 7168 B.
  // In general the peak cannot drop: at each op, its own sub-array holds the same tensors in both
  // orders (same relative order, same last readers); the sub-array before still holds part of its
  // backward (and its inputs) in the multiplexed order, none in the plain one; the one after holds
  // the part of its forward that ran, none in the plain one; every other sub-array holds the same.
  const FixedCostModel cost = two_part_costs();
  const Schedule m = policies::build_multiplexed_schedule({tiny_step(), tiny_step()}, cost);
  const Schedule p = policies::build_plain_schedule({tiny_step(), tiny_step()});
  sim::SimOptions unlimited;
  unlimited.memory_limit_bytes = -1;
  const sim::Prediction pm = sim::simulate(m, cost, unlimited);
  const sim::Prediction pp = sim::simulate(p, cost, unlimited);
  CHECK(pm.step_time_ns == 17 * kMs);
  CHECK(pp.step_time_ns == 17 * kMs);
  CHECK(pm.compute_stall_ns == 0);
  CHECK(pm.resident_bytes == 5120);
  CHECK(pp.peak_bytes == 6656);
  CHECK(pm.peak_bytes == 7168);
}

TEST_CASE("an ordered schedule refuses an order that is not a topological permutation") {
  // Program order 0..6 is the plain schedule.
  CHECK(schedule_to_json(policies::build_ordered_schedule({tiny_step()}, {0, 1, 2, 3, 4, 5, 6})) ==
        schedule_to_json(policies::build_plain_schedule({tiny_step()})));
  CHECK_THROWS_WITH_AS(policies::build_ordered_schedule({tiny_step()}, {1, 0, 2, 3, 4, 5, 6}),
                       "order position 0: op 1 'relu' reads tensor 3 'fc' before its producer op 0 'fc' runs",
                       Error);
  CHECK_THROWS_WITH_AS(policies::build_ordered_schedule({tiny_step()}, {0, 1, 2}),
                       "compute order has 3 ops, graph 'tiny' has 7", Error);
  CHECK_THROWS_WITH_AS(policies::build_ordered_schedule({tiny_step()}, {0, 1, 2, 3, 4, 5, 5}),
                       "order position 6: op 5 'fc.backward' is listed twice (first at position 5)", Error);
  CHECK_THROWS_WITH_AS(policies::build_ordered_schedule({tiny_step()}, {0, 1, 2, 3, 4, 5, 7}),
                       "order position 6: op id 7 is out of range [0, 7)", Error);
  // Two sub-arrays: ops of sub-array 1 may run before sub-array 0's (disjoint graphs).
  CHECK_NOTHROW(policies::build_ordered_schedule({tiny_step(), tiny_step()},
                                                 {7, 8, 9, 10, 11, 12, 13, 0, 1, 2, 3, 4, 5, 6}));
}

TEST_CASE("real bert-base arrays multiplex into valid schedules as fast as back to back") {
  const costmodel::DeviceSpec device = costmodel::find_device("a100-40gb");
  const std::unique_ptr<OpCostModel> cost = costmodel::builtin_cost_sources().create("analytic", device);
  policies::ModelArray array;
  array.model = "bert-base";
  array.count = 4;
  array.config.batch_size = 2;
  array.config.seq_len = 32;
  sim::SimOptions unlimited;
  unlimited.memory_limit_bytes = -1;
  for (const std::vector<int32_t>& partition : {std::vector<int32_t>{1, 1}, std::vector<int32_t>{2, 1, 1}}) {
    array.count = partition.size() == 2 ? 2 : 4;
    CAPTURE(policies::partition_text(partition));
    const std::vector<Graph> parts = policies::sub_array_steps(array, partition);
    const auto start = std::chrono::steady_clock::now();
    const Schedule m = policies::build_multiplexed_schedule(parts, *cost);
    MESSAGE("build_multiplexed_schedule bert-base "
            << policies::partition_text(partition) << ": "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s");
    const Schedule p = policies::build_plain_schedule(parts);
    CHECK_NOTHROW(validate_schedule(m));
    // Same ops, one stream, no swaps: the step time is the sum of the op durations in both.
    const sim::Prediction pm = sim::simulate(m, *cost, unlimited);
    const sim::Prediction pp = sim::simulate(p, *cost, unlimited);
    int64_t sum = 0;
    for (const Graph& g : parts) sum += policies::estimated_step_ns(g, *cost);
    CHECK(pm.step_time_ns == pp.step_time_ns);
    CHECK(pm.step_time_ns == sum);
    CHECK(pm.peak_bytes >= pp.peak_bytes);
    // Sub-array 1's first forward op runs before sub-array 0's last backward op: they interleave.
    const std::vector<OpId> order = computes(m);
    const auto pos = [&](OpId id) { return std::find(order.begin(), order.end(), id) - order.begin(); };
    CHECK(pos(m.sub_arrays[1].first_op) < pos(m.sub_arrays[0].end_op - 1));
  }
}

TEST_CASE("a reordered partition numbers each sub-array's models by the user's index") {
  // bert-mini 2,1 with a learning rate per model: the 1-model part is faster and runs first; its
  // model is the array's model 2 and trains at model 2's rate (the executor numbered models in
  // schedule order and trained it as model 0).
  const std::unique_ptr<OpCostModel> cost =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  policies::ModelArray array;
  array.model = "bert-mini";
  array.count = 3;
  array.config.batch_size = 2;
  array.optimizer.lr = {0.1, 0.2, 0.3};
  const auto none = policies::builtin_policies().create("none");
  for (policies::SubArrayOrder order :
       {policies::SubArrayOrder::multiplexed, policies::SubArrayOrder::back_to_back}) {
    const Schedule s = policies::plan_sub_arrays(policies::sub_array_steps(array, {2, 1}), *none, *cost,
                                                 int64_t{1} << 40, order)
                           .result.schedule;
    REQUIRE(s.sub_arrays.size() == 2);
    CHECK(s.sub_arrays[0].width == 1);
    CHECK(s.sub_arrays[0].first_model == 2);
    CHECK(s.sub_arrays[1].first_model == 0);
    const auto first_update = std::find_if(s.graph.ops.begin() + s.sub_arrays[0].first_op,
                                           s.graph.ops.begin() + s.sub_arrays[0].end_op,
                                           [](const Op& op) { return op.kind == OpKind::adam_step; });
    REQUIRE(first_update != s.graph.ops.begin() + s.sub_arrays[0].end_op);
    CHECK(std::get<std::vector<double>>(first_update->attrs.at("lr")) == std::vector<double>{0.3});
    // Kept through a schedule file; a partition in the given order writes no numbering.
    CHECK(schedule_from_json(schedule_to_json(s)).sub_arrays[0].first_model == 2);
  }
  const Schedule in_order = policies::plan_sub_arrays(policies::sub_array_steps(array, {1, 2}), *none, *cost,
                                                      int64_t{1} << 40, policies::SubArrayOrder::back_to_back)
                                .result.schedule;
  CHECK(in_order.sub_arrays[0].first_model == kNoId);
  CHECK(schedule_to_json(in_order).find("first_model") == std::string::npos);
  // Numbered twice, or past the array: refused.
  Schedule twice = policies::plan_sub_arrays(policies::sub_array_steps(array, {2, 1}), *none, *cost,
                                             int64_t{1} << 40, policies::SubArrayOrder::back_to_back)
                       .result.schedule;
  twice.sub_arrays[1].first_model = 2;
  CHECK_THROWS_WITH_AS(
      validate_schedule(twice),
      "sub_array 1 'bert-mini x2': field 'first_model' = 2 must number its 2 models within the "
      "array's 3 (0 to 1)",
      ScheduleError);
  twice.sub_arrays[1].first_model = 0;
  twice.sub_arrays[0].first_model = 1;
  CHECK_THROWS_WITH_AS(
      validate_schedule(twice),
      "sub_array 1 'bert-mini x2': field 'first_model' = 0 numbers model 1, which sub_array 0 "
      "numbers too",
      ScheduleError);
}
