// Model-state offload (policies/state_offload.hpp): the host_state residency rules of a Schedule,
// the pass's placement on a hand-derived two-sub-array step with exact simulated times and bytes,
// and the policy wrapper fitting an array whose state alone exceeds the limit.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/host_optimizer.hpp"
#include "io/schedule_json.hpp"
#include "ir/graph_builder.hpp"
#include "ir/memory_rule.hpp"
#include "ir/schedule_check.hpp"
#include "policies/model_array.hpp"
#include "policies/multiplex.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "policies/state_offload.hpp"
#include "sim/simulator.hpp"
#include "sim/timeline_export.hpp"
#include "support/error.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "tests/support/tiny_step.hpp"
#include "transforms/autodiff.hpp"

using namespace mutwo;
using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using mutwo::test::FixedCostModel;

namespace {

using mutwo::test::kMs;
using mutwo::test::tiny_step;
using mutwo::test::two_part_costs;

std::vector<std::string> trace(const Schedule& s) { return mutwo::test::instruction_trace(s); }

InstrId find(const Schedule& s, const std::string& label) {
  const std::vector<std::string> t = trace(s);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == label) return static_cast<InstrId>(i);
  }
  FAIL("no instruction " << label);
  return kNoId;
}

// The schedule without instruction `gone`: later ids and waits renumbered, waits on it dropped.
Schedule without(const Schedule& s, InstrId gone) {
  Schedule out = s;
  out.instructions.clear();
  for (const Instruction& in : s.instructions) {
    if (in.id == gone) continue;
    Instruction copy = in;
    copy.waits.clear();
    for (InstrId w : in.waits) {
      if (w != gone) copy.waits.push_back(w > gone ? w - 1 : w);
    }
    copy.id = static_cast<InstrId>(out.instructions.size());
    out.instructions.push_back(copy);
  }
  return out;
}

sim::SimOptions unlimited() {
  sim::SimOptions o;
  o.memory_limit_bytes = -1;
  return o;
}

}  // namespace

TEST_CASE("offload places swap-ins just in time, swap-outs after the update, frees once copied") {
  // Multiplexed compute order (test_multiplex.cpp): 0 1 2 7 3 8 4 5 9 6 10 11 12 13, on the
  // estimated timeline (ms) c0 0-1, c1 1-2, c2 2-3, c7 3-4, c3 4-7, c8 7-8, c4 8-9, c5 9-10,
  // c9 10-12, c6 12-13, c10 13-14, c11 14-15, c12 15-16, c13 16-17.
  // State per sub-array: fc.weight (1 / 12), fc.weight.grad (9 / 20), momentum (10 / 21).
  // Swap-ins, FIFO by first use: w1 (c0), w12 (c7), m10 (c6), m21 (c13); latest starts backwards:
  // m21 16 ms - 512, m10 12 ms - 512, w12 3 ms - 512, w1 -512 ns. Trigger: the last compute
  // before the first use ending by then: w1 none (the step's start), w12 c1 (ends 2 ms), m10 c5
  // (10 ms; c9 ends 12 ms), m21 c11 (15 ms; c12 ends 16 ms).
  // Swap-outs after the sgd step (c6: w1, m10; c13: w12, m21); frees at the first compute ending
  // after the estimated copy: w1 and m10 (13 ms + 512 / + 1024) after c10 (ends 14 ms), w12 and m21
  // after c13 (nothing later). Gradients freed after their reader: 9 after c6, 20 after c13.
  const FixedCostModel cost = two_part_costs();
  const Schedule base = policies::build_multiplexed_schedule({tiny_step(), tiny_step()}, cost);
  const Schedule s = policies::offload_model_state(base, cost);
  CHECK(s.host_state == std::vector<TensorId>{1, 9, 10, 12, 20, 21});
  CHECK(trace(s) == std::vector<std::string>{
                        "i1",  "c0",  "c1",  "i12", "f3",  "c2",  "f5",  "c7",  "c3",  "f2",  "f6",
                        "c8",  "f14", "c4",  "f4",  "f7",  "c5",  "i10", "f0",  "f8",  "c9",  "f16",
                        "c6",  "o1",  "o10", "f9",  "c10", "f1",  "f10", "f13", "f17", "c11", "i21",
                        "f15", "f18", "c12", "f11", "f19", "c13", "o12", "o21", "f20", "f12", "f21"});
  // Waits: each first reader on its swap-in, each swap-in on its trigger, each free on its swap-out.
  CHECK(s.instructions[static_cast<size_t>(find(s, "c0"))].waits == std::vector<InstrId>{find(s, "i1")});
  CHECK(s.instructions[static_cast<size_t>(find(s, "i12"))].waits == std::vector<InstrId>{find(s, "c1")});
  CHECK(s.instructions[static_cast<size_t>(find(s, "c7"))].waits == std::vector<InstrId>{find(s, "i12")});
  CHECK(s.instructions[static_cast<size_t>(find(s, "f1"))].waits == std::vector<InstrId>{find(s, "o1")});
  CHECK(s.instructions[static_cast<size_t>(find(s, "o21"))].waits == std::vector<InstrId>{find(s, "c13")});

  // Simulated: c0 waits for i1 (512 ns), so every compute runs 512 ns late and nothing else
  // stalls (i12 done at 2 ms + 1024, c7 starts 3 ms + 512; i10 at 10 ms + 1024 before c6 at
  // 12 ms + 512; i21 at 15 ms + 1024 before c13 at 16 ms + 512). The step ends with o21 and the
  // free waiting on it: c13 ends 17 ms + 512, o12 and o21 take 512 ns each: 17 ms + 1536. The
  // compute stream stalls 512 ns before c0, then 512 ns for f12 (waits on o12) and 512 ns more for
  // f21 (waits on o21).
  const sim::Prediction p = sim::simulate(s, cost, unlimited());
  const sim::Prediction resident = sim::simulate(base, cost, unlimited());
  CHECK(resident.step_time_ns == 17 * kMs);
  CHECK(p.step_time_ns == 17 * kMs + 1536);
  CHECK(p.compute_stall_ns == 1536);
  CHECK(p.state_bytes_swapped_in == 4 * 512);
  CHECK(p.state_bytes_swapped_out == 4 * 512);
  CHECK(p.bytes_swapped_in == 4 * 512);
  // Resident at the start: the 6 state tensors (one 512 B block each) leave it: 5120 - 3072.
  CHECK(resident.resident_bytes == 5120);
  CHECK(p.resident_bytes == 5120 - 3072);
  CHECK(p.peak_bytes < resident.peak_bytes);
  // JSON keeps host_state (version 2).
  CHECK(schedule_to_json(schedule_from_json(schedule_to_json(s))) == schedule_to_json(s));
  CHECK(schedule_to_json(s).find("\"host_state\": [1,9,10,12,20,21]") != std::string::npos);
}

TEST_CASE("host_state rules: what a step starts from, it must end with") {
  const FixedCostModel cost = two_part_costs();
  const Schedule base = policies::build_plain_schedule({tiny_step()});
  const Schedule good = policies::offload_model_state(base, cost);
  CHECK(good.host_state == std::vector<TensorId>{1, 9, 10});
  CHECK(resident_at_start_mask(good)[1] == 0);
  CHECK(resident_at_start_mask(good)[0] == 1);  // the input
  {
    Schedule s = base;
    s.host_state = {3};  // fc, an activation
    CHECK_THROWS_WITH_AS(validate_schedule(s),
                         "schedule: field 'host_state' lists tensor 3 'fc' of role activation; only weights, "
                         "gradients and optimizer state live on the host",
                         ScheduleError);
    s.host_state = {10, 1};
    CHECK_THROWS_WITH_AS(validate_schedule(s),
                         "schedule: field 'host_state' lists tensor 1 after tensor 10; ids must be ascending "
                         "without repeats",
                         ScheduleError);
    s.host_state = {11};
    CHECK_THROWS_WITH_AS(validate_schedule(s),
                         "schedule: field 'host_state' lists tensor 11, which is not in the graph (11 tensors)",
                         ScheduleError);
  }
  {
    // The weight on the host with no swap-in: its first reader finds it missing.
    Schedule s = base;
    s.host_state = {1};
    CHECK_THROWS_WITH_AS(validate_schedule(s),
                         "instruction 0 (compute op 0 'fc'): reads tensor 1 'fc.weight' which is not resident "
                         "(never produced)",
                         ScheduleError);
  }
  {
    // Drop the last swap-out of the momentum (and the wait on it): the update never reaches the host.
    const Schedule s = without(good, find(good, "o10"));
    CHECK_THROWS_WITH_AS(validate_schedule(s),
                         "schedule: host_state tensor 10 'fc.weight.momentum_buffer' ends the step without a host copy "
                         "of its last value (swap it out after its last update)",
                         ScheduleError);
  }
  {
    // Drop the weight's final free: it stays on the device.
    const Schedule s = without(good, find(good, "f1"));
    CHECK_THROWS_WITH_AS(validate_schedule(s),
                         "schedule: host_state tensor 1 'fc.weight' is still on the device at the step's end (it "
                         "must be freed)",
                         ScheduleError);
  }
  // The pass refuses to move state the plan already moves.
  CHECK_THROWS_WITH_AS(policies::offload_model_state(good, cost),
                       "state offload: tensor 1 'fc.weight' is already kept on the host", Error);
  CHECK_THROWS_WITH_AS(policies::offload_model_state(base, cost, {1}),
                       "state offload: sub-array 1 is not in the schedule (1 sub-arrays)", Error);
}

TEST_CASE("a version-1 schedule still loads; host_state needs version 2") {
  const Schedule base = policies::build_plain_schedule({tiny_step()});
  std::string text = schedule_to_json(base);
  // Version 1 as written then: no sub-array batch_size (version 4), which the graph's then stands for.
  const auto as_version_1 = [](std::string t) {
    const auto v = t.find("\"version\": 4");
    REQUIRE(v != std::string::npos);
    t.replace(v, 12, "\"version\": 1");
    const std::string field = R"(,"batch_size":)";
    for (auto at = t.find(field); at != std::string::npos; at = t.find(field)) t.erase(at, t.find('}', at) - at);
    return t;
  };
  CHECK(schedule_to_json(schedule_from_json(as_version_1(text))) == schedule_to_json(base));
  const FixedCostModel cost = two_part_costs();
  const std::string offloaded = as_version_1(schedule_to_json(policies::offload_model_state(base, cost)));
  CHECK_THROWS_WITH_AS(schedule_from_json(offloaded),
                       "schedule: field 'host_state' needs version 2 (the file says version 1)", FormatError);
}

TEST_CASE("a malformed host_state in a schedule file names the field and the entry") {
  const FixedCostModel cost = two_part_costs();
  const std::string text = schedule_to_json(policies::offload_model_state(policies::build_plain_schedule({tiny_step()}), cost));
  auto replaced = [&](const std::string& to) {
    std::string t = text;
    const std::string from = "\"host_state\": [1,9,10]";
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    t.replace(at, from.size(), to);
    return t;
  };
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced("\"host_state\": [1,\"w\",10]")),
                       "schedule: field 'host_state' entry 1 is not an integer tensor id", FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced("\"host_state\": [1,9,-4]")),
                       "schedule: field 'host_state' entry 2 = -4 is not a tensor id", FormatError);
  CHECK_THROWS_WITH_AS(schedule_from_json(replaced("\"host_state\": [1,9,99]")),
                       "schedule: field 'host_state' lists tensor 99, which is not in the graph (11 tensors)",
                       ScheduleError);
  CHECK_THROWS_AS(schedule_from_json(replaced("\"host_state\": 7")), FormatError);
}

TEST_CASE("offload fits an array whose model state alone exceeds the limit") {
  // 4 x bert-mini (Adam), multiplexed as 1+1+1+1 at a limit below the array's resident state:
  // no resident plan can fit, the offloaded plans do, with every byte of state moved accounted:
  // the optimizer on the device moves weights and moments both ways (gradients never move); on
  // the host, weights in and gradients out only. The wrapper keeps the faster of the two.
  const auto cost = costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  policies::ModelArray array;
  array.model = "bert-mini";
  array.count = 4;
  const std::vector<Graph> parts = policies::sub_array_steps(array, {1, 1, 1, 1});
  const Schedule base = policies::build_multiplexed_schedule(parts, *cost);
  const sim::Prediction whole = sim::simulate(base, *cost, unlimited());
  int64_t state_bytes = 0;    // weights + gradients + moments of the 4 models
  int64_t moved_bytes = 0;    // weights + moments (what crosses the link each way, device optimizer)
  int64_t weight_bytes = 0;   // weights (in, host optimizer)
  int64_t gradient_bytes = 0;  // gradients (out, host optimizer)
  for (const Tensor& t : base.graph.tensors) {
    if (!is_persistent(t.role)) continue;
    state_bytes += allocation_bytes(t.bytes);
    if (t.role != TensorRole::gradient) moved_bytes += t.bytes;
    if (t.role == TensorRole::weight) weight_bytes += t.bytes;
    if (t.role == TensorRole::gradient) gradient_bytes += t.bytes;
  }
  CHECK(moved_bytes == 3 * weight_bytes);
  const int64_t limit = state_bytes * 9 / 10;
  REQUIRE(whole.resident_bytes > limit);
  for (const std::string name : {"none", "mutwo", "capuchin"}) {
    CAPTURE(name);
    const auto policy = policies::builtin_policies().create(name);
    policies::PolicyInput input;
    input.base = &base;
    input.cost = cost.get();
    input.memory_limit_bytes = limit;
    const policies::PolicyResult device = policies::plan_with_state_offload(*policy, input, policies::OptimizerPlace::device);
    const policies::PolicyResult host = policies::plan_with_state_offload(*policy, input, policies::OptimizerPlace::host);
    const policies::PolicyResult best = policies::plan_with_state_offload(*policy, input);
    for (const policies::PolicyResult* r : {&device, &host, &best}) {
      CHECK(r->feasible);
      CHECK(r->peak_bytes <= limit);
      CHECK(r->schedule.policy == name + "+offload");
      CHECK(r->note.find("model state on the host") != std::string::npos);
      CHECK_NOTHROW(validate_schedule(r->schedule));
    }
    CHECK(device.schedule.host_stream == kNoStream);
    CHECK(device.prediction.state_bytes_swapped_in == moved_bytes);
    CHECK(device.prediction.state_bytes_swapped_out == moved_bytes);
    CHECK(device.note.find("optimizer on the device") != std::string::npos);
    CHECK(host.schedule.host_stream != kNoStream);
    CHECK(host.prediction.state_bytes_swapped_in == weight_bytes);
    CHECK(host.prediction.state_bytes_swapped_out == gradient_bytes);
    CHECK(host.prediction.host_optimizer_ns > 0);
    CHECK(host.note.find("optimizer on the host") != std::string::npos);
    CHECK(best.step_time_ns == std::min(device.step_time_ns, host.step_time_ns));
  }
}

TEST_CASE("three iterations: the steady-state step prefetches the next iteration's first weight") {
  // The offloaded two-sub-array step above, simulated 3 times back to back (ir/unrolled_schedule.hpp).
  // Iteration 1 is the single step: 17 ms + 1536 ns. Iteration 2 starts with its batch's uploads
  // on the compute stream after iteration 1's last instruction there (the free of tensor 21 at
  // 17 ms + 1536): x 0, labels 2, x 11, labels 13 (128 + 32 + 128 + 32 B at 1 B/ns) until 17 ms +
  // 1856. The swap-in of fc.weight (1) waits only on iteration 1's free of it (after c10, 14 ms):
  // on the idle host->device stream it is done long before, so c0 starts at 17 ms + 1856 without
  // iteration 1's 512 ns wait, and every later iteration takes the 320 ns of uploads + 17 ms of
  // compute + 1024 ns of the last two swap-outs.
  const FixedCostModel cost = two_part_costs();
  const Schedule base = policies::build_multiplexed_schedule({tiny_step(), tiny_step()}, cost);
  const Schedule s = policies::offload_model_state(base, cost);
  sim::SimOptions o = unlimited();
  o.iterations = 3;
  const sim::Prediction p = sim::simulate(s, cost, o);
  CHECK(p.iterations == 3);
  CHECK(p.first_step_ns == 17 * kMs + 1536);
  CHECK(p.iteration_end_ns ==
        std::vector<int64_t>{17 * kMs + 1536, 34 * kMs + 2880, 51 * kMs + 4224});
  CHECK(p.step_time_ns == 17 * kMs + 1344);
  CHECK(p.state_bytes_swapped_in == 3 * 4 * 512);
  CHECK(p.bytes_swapped_in == 3 * 4 * 512);  // the batch uploads of iterations 2 and 3 are not swaps
  CHECK_FALSE(p.oom);
  // The peak of any iteration equals one step's (5120 B, at c3 of iteration 1): the uploads and the
  // prefetched weight arrive while sub-array 1's backward holds less than that.
  CHECK(p.peak_bytes == sim::simulate(s, cost, unlimited()).peak_bytes);

  // Without swaps, back-to-back iterations repeat the step after the 320 ns of uploads.
  const sim::Prediction plain = sim::simulate(base, cost, o);
  CHECK(plain.iteration_end_ns == std::vector<int64_t>{17 * kMs, 34 * kMs + 320, 51 * kMs + 640});
  CHECK(plain.step_time_ns == 17 * kMs + 320);
  CHECK(plain.first_step_ns == 17 * kMs);
  CHECK(plain.peak_bytes == sim::simulate(base, cost, unlimited()).peak_bytes);

  o.iterations = 0;
  CHECK_THROWS_WITH_AS(sim::simulate(s, cost, o), "iterations = 0: must be from 1 to 1000", Error);
}

// The host's optimizer at 378,560 ns per update + 1024 ns per byte: an sgd_step reads weight,
// gradient and momentum (3 x 512 B) and writes weight and momentum (1024 B): 2560 B, 3 ms in all.
FixedCostModel host_costs() {
  FixedCostModel cost = two_part_costs();
  costmodel::HostOptimizer h;
  h.per_op_ns = 378'560;
  h.bytes_per_ns = 1.0 / 1024;
  h.large_bytes_per_ns = 1.0 / 1024;
  h.large_from_bytes = int64_t{1} << 40;
  cost.set_host_optimizer(h);
  return cost;
}

TEST_CASE("the optimizer on the host: gradients streamed out, weights in, momenta never on the device") {
  // The two-sub-array step of the first case with the sgd steps (c6, c13) on the host. The device
  // timeline loses them: c0 0-1, c1 1-2, c2 2-3, c7 3-4, c3 4-7, c8 7-8, c4 8-9, c5 9-10, c9 10-12,
  // c10 12-13, c11 13-14, c12 14-15 (ms). Swap-ins as before (w1 at the start, w12 after c1);
  // the momenta (10, 21) have no device access: they stay on the host. Weights are freed after
  // their last device reader (fc.backward: f1 after c5, f12 after c12) and never copied back.
  // Gradients are copied out after the backward op writing them (o9 after c5, o20 after c12) and
  // freed at the first compute ending after the estimated copy (f9 after c9, ending 12 ms > 10 ms
  // + 512; f20 right after c12, nothing later); each host update waits on its gradient's copy.
  const FixedCostModel cost = host_costs();
  CHECK(costmodel::host_optimizer_ns(cost.device(), tiny_step().ops[6]) == 3 * kMs);
  // A host rate near 0 (--host-optimizer-gbps 1e-300) is refused naming the op; it used to convert out
  // of int64's range and reach the event core as an event at -9.2e18 ns.
  costmodel::DeviceSpec crawl = cost.device();
  crawl.host_optimizer.bytes_per_ns = 1e-300;
  CHECK_THROWS_WITH_AS(costmodel::host_optimizer_ns(crawl, tiny_step().ops[6]),
                       doctest::Contains("cost model 'host optimizer', op 6 "), mutwo::Error);
  const Schedule base = policies::build_multiplexed_schedule({tiny_step(), tiny_step()}, cost);
  const Schedule s = policies::offload_model_state(base, cost, {}, policies::OptimizerPlace::host);
  CHECK(s.host_stream == kFirstExtraComputeStream);
  CHECK(s.host_state == std::vector<TensorId>{1, 9, 10, 12, 20, 21});
  CHECK(trace(s) == std::vector<std::string>{
                        "i1",  "c0",  "c1",  "i12", "f3",  "c2",  "f5",  "c7",  "c3",  "f2",  "f6",  "c8",  "f14",
                        "c4",  "f4",  "f7",  "c5",  "o9",  "f1",  "f0",  "f8",  "c9",  "f9",  "f16", "c6",  "c10",
                        "f13", "f17", "c11", "f15", "f18", "c12", "o20", "f12", "f20", "f11", "f19", "c13"});
  const Instruction& c6 = s.instructions[static_cast<size_t>(find(s, "c6"))];
  CHECK(c6.stream == s.host_stream);
  CHECK(c6.waits == std::vector<InstrId>{find(s, "o9")});
  CHECK(s.instructions[static_cast<size_t>(find(s, "c13"))].waits == std::vector<InstrId>{find(s, "o20")});
  CHECK(s.instructions[static_cast<size_t>(find(s, "f9"))].waits == std::vector<InstrId>{find(s, "o9")});

  // Simulated: c0 waits 512 ns for i1; the device's compute then runs back to back to c12's end at
  // 15 ms + 512, and f20 waits for o20 (512 ns): compute stall 1024. The host: c6 from o9's end
  // (10 ms + 1024) to 13 ms + 1024; c13 from o20's end (15 ms + 1024) to 18 ms + 1024, the step's
  // end. Moved: the two weights in (1024 B), the two gradients out (1024 B): a third of what the
  // device optimizer moves (weights and momenta both ways, 2048 B each).
  const sim::Prediction p = sim::simulate(s, cost, unlimited());
  CHECK(p.step_time_ns == 18 * kMs + 1024);
  CHECK(p.compute_stall_ns == 1024);
  CHECK(p.host_optimizer_ns == 6 * kMs);
  CHECK(p.host_stream == kFirstExtraComputeStream);
  CHECK(p.busy_ns[static_cast<size_t>(p.host_stream)] == 6 * kMs);
  CHECK(sim::stream_track_name(p.host_stream, p.host_stream) == "host optimizer");
  CHECK(sim::stream_track_name(p.host_stream) == "compute 2");
  CHECK(p.state_bytes_swapped_in == 2 * 512);
  CHECK(p.state_bytes_swapped_out == 2 * 512);
  CHECK(p.resident_bytes == 5120 - 3072);
  // Three iterations: the next iteration's w1 waits on the host update of it (c6, done 13 ms +
  // 1024), long before the compute stream is free (18 ms + 1024 is the host's; the device's last
  // free at 15 ms + 1024), so iteration 2's compute starts at 15 ms + 1024 + its batch upload.
  sim::SimOptions o = unlimited();
  o.iterations = 3;
  const sim::Prediction three = sim::simulate(s, cost, o);
  CHECK(three.first_step_ns == 18 * kMs + 1024);
  CHECK(three.iterations == 3);
  // JSON keeps host_stream (version 3 on); an older version with it is refused.
  const std::string text = schedule_to_json(s);
  CHECK(text.find("\"host_stream\": 3") != std::string::npos);
  CHECK(schedule_to_json(schedule_from_json(text)) == text);
  std::string v2 = text;
  v2.replace(v2.find("\"version\": 4"), 12, "\"version\": 2");
  CHECK_THROWS_WITH_AS(schedule_from_json(v2), "schedule: field 'host_stream' needs version 3 (the file says version 2)",
                       FormatError);
}

TEST_CASE("host stream rules: host copies only, stale device copies refused, only optimizer updates") {
  const FixedCostModel cost = host_costs();
  const Schedule base = policies::build_multiplexed_schedule({tiny_step(), tiny_step()}, cost);
  const Schedule good = policies::offload_model_state(base, cost, {}, policies::OptimizerPlace::host);
  CHECK_NOTHROW(validate_schedule(good));
  // Without the gradient's copy, the host update has nothing to read.
  CHECK_THROWS_WITH_AS(validate_schedule(without(good, find(good, "o9"))),
                       "instruction 23 (compute op 6 's0/fc.weight.sgd_step'): runs on the host and reads tensor 9 "
                       "'s0/fc.weight.grad', which has no host copy (swap it out first)",
                       ScheduleError);
  // The host update not waiting for the gradient's copy: it could read the host copy before it lands.
  Schedule unordered = good;
  unordered.instructions[static_cast<size_t>(find(good, "c6"))].waits.clear();
  CHECK_THROWS_WITH_AS(validate_schedule(unordered),
                       "instruction 24 (compute op 6 's0/fc.weight.sgd_step'): reads the host copy of tensor 9 "
                       "'s0/fc.weight.grad' made by instruction 17 (swap_out tensor 9 's0/fc.weight.grad') on "
                       "stream 1, which is not ordered before it (same stream earlier or reached through waits)",
                       ScheduleError);
  // Without the weight's free, its device copy would go stale under the host's update.
  CHECK_THROWS_WITH_AS(validate_schedule(without(good, find(good, "f1"))),
                       "instruction 23 (compute op 6 's0/fc.weight.sgd_step'): updates tensor 1 's0/fc.weight' on "
                       "the host while its device copy is resident (free it first)",
                       ScheduleError);
  // A forward op on the host stream; a host stream among the copy engines.
  Schedule forward_on_host = good;
  forward_on_host.instructions[static_cast<size_t>(find(good, "c1"))].stream = good.host_stream;
  CHECK_THROWS_WITH_AS(validate_schedule(forward_on_host),
                       "instruction 2 (compute op 1 's0/relu'): runs on the host stream 3 (field 'host_stream'), "
                       "which takes only compute instructions of optimizer updates (sgd_step, adam_step, "
                       "adamw_step), not compute of a relu op",
                       ScheduleError);
  Schedule copy_engine = good;
  copy_engine.host_stream = kDeviceToHostStream;
  CHECK_THROWS_WITH_AS(validate_schedule(copy_engine),
                       "schedule: field 'host_stream' = 1 must be -1 (no host stream) or 3 to 1023",
                       ScheduleError);
  // The pass refuses the best place (the wrapper's), and a device without host rates is named.
  CHECK_THROWS_AS(policies::offload_model_state(base, cost, {}, policies::OptimizerPlace::best), Error);
  const FixedCostModel no_host = two_part_costs();
  CHECK_THROWS_WITH_AS(sim::simulate(good, no_host, unlimited()),
                       "device 'test-gpu' has no host optimizer rate (host_optimizer.bytes_per_ns = 0, "
                       "large_bytes_per_ns = 0): op 6 's0/fc.weight.sgd_step' cannot be priced on the host",
                       Error);
}
