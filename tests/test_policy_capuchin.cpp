// capuchin (Peng et al., ASPLOS 2020): hidden swaps first (by FreeTime), then recomputation by
// MSPS, then anything left. Hand-built chains with exact numbers (ops from a table, copies at
// 1 B/ns with no latency) check each choice; small real training steps on the analytic A100 model
// check that plans validate and fit, that a fast link hides every chosen swap and that a link too
// slow to hide anything leads to recomputation only.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/device_overrides.hpp"
#include "ir/schedule_check.hpp"
#include "policies/memory_policy.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "tests/support/swap_recompute_cases.hpp"

using namespace mutwo;
using namespace mutwo::ir;
using costmodel::DeviceSpec;
using costmodel::OpCostModel;
using policies::PolicyInput;
using policies::PolicyResult;

using namespace mutwo::test;

namespace {

PolicyResult plan(const Schedule& base, const OpCostModel& cost, int64_t limit) {
  PolicyInput in;
  in.base = &base;
  in.cost = &cost;
  in.memory_limit_bytes = limit;
  return policies::builtin_policies().create("capuchin")->plan(in);
}

}  // namespace

TEST_CASE("capuchin is registered with its description and paper") {
  const policies::PolicyInfo& info = policies::builtin_policies().find("capuchin");
  CHECK(info.description.find("recompute") != std::string::npos);
  CHECK(info.citation == "Peng et al., ASPLOS 2020 (Capuchin)");
  CHECK(policies::builtin_policies().create("capuchin")->name() == "capuchin");
}

TEST_CASE("capuchin refuses input without a base schedule or a limit") {
  const FixedCostModel cost({});
  PolicyInput in;
  in.cost = &cost;
  in.memory_limit_bytes = 1;
  CHECK_THROWS_AS(policies::builtin_policies().create("capuchin")->plan(in), Error);
  const Schedule base = recompute_chain();
  in.base = &base;
  in.memory_limit_bytes = 0;
  CHECK_THROWS_WITH_AS(policies::builtin_policies().create("capuchin")->plan(in),
                       "policy 'capuchin': input field 'memory_limit_bytes' = 0 must be > 0", Error);
}

TEST_CASE("capuchin swaps a tensor whose free time hides its copies and the step time stays") {
  // Timeline: A 0-1, B1 1-2, B2 2-3, B3 3-4, C 4-5 ms. FreeTime = (C start 4 - in 1) - (A end 1 +
  // out 1) = 1 ms >= 0. swap_out 1-2 ms; free after B1 (ends 2 ms, not before the copy); swap_in
  // triggered by B2 (latest position ending <= 4 - 1 = 3 ms), 3-4 ms under B3; C starts at 4 ms.
  // Without a during B2: 4,002,304 - 1,000,448 = 3,001,856 B, which is the limit.
  const Schedule base = swap_chain();
  const FixedCostModel cost({{0, kMs}, {1, kMs}, {2, kMs}, {3, kMs}, {4, kMs}});
  const int64_t limit = 3'001'856;
  REQUIRE(simulate_at(base, cost, -1).peak_bytes == 4'002'304);
  const PolicyResult r = plan(base, cost, limit);
  REQUIRE(r.feasible);
  CHECK_NOTHROW(validate_schedule(r.schedule));
  CHECK(r.schedule.policy == "capuchin");
  CHECK(r.peak_bytes == limit);
  CHECK(r.step_time_ns == 5 * kMs);  // 5 ops x 1 ms, no stall
  const sim::Prediction p = simulate_at(r.schedule, cost, limit);
  CHECK(p.bytes_swapped_out == 1'000'000);
  CHECK(p.bytes_swapped_in == 1'000'000);
  CHECK(p.compute_stall_ns == 0);
  CHECK(p.recompute_ns == 0);
  CHECK(r.note == "1 swapped (1.0 MB), 0 recomputed");
  // One byte less cannot be met by evicting a (the only candidate): infeasible.
  CHECK_FALSE(plan(base, cost, limit - 1).feasible);
}

TEST_CASE("capuchin recomputes a tensor whose window is too short to hide its copies") {
  // A 0-0.5, B 0.5-0.6, C 0.6-0.7 ms. FreeTime = (0.6 - 2) - (0.5 + 2) = -3.9 ms: no hidden swap.
  // Recompute A (0.5 ms) before C: MSPS = 2,000,384 B / 0.5 ms. Peak during B without a:
  // 5,001,728 - 2,000,384 = 3,001,344 B; at C: w + a + b + c = 2,001,920 B.
  const Schedule base = recompute_chain();
  const FixedCostModel cost({{0, 500 * kUs}, {1, 100 * kUs}, {2, 100 * kUs}});
  const int64_t limit = 3'001'344;
  const PolicyResult r = plan(base, cost, limit);
  REQUIRE(r.feasible);
  CHECK(r.peak_bytes == limit);
  CHECK(r.step_time_ns == 1'200 * kUs);  // 0.5 + 0.1 + 0.5 (recompute A) + 0.1
  const sim::Prediction p = simulate_at(r.schedule, cost, limit);
  CHECK(p.bytes_swapped_out == 0);
  CHECK(p.recompute_ns == 500 * kUs);
}

TEST_CASE("capuchin fits small real training steps, and a fast link hides every swap it chooses") {
  // Why no stall: a swap is taken in the hidden phase only if, on the estimated timeline, its
  // swap_out ends before the position after which it is freed and its swap_in (queued behind the
  // copies already chosen) ends before the reload starts, with no chosen copy made late. Every
  // copy is tied to compute positions (ready when a position ends, due when one starts), and
  // recomputes only add compute time between them, which widens those gaps. At 1000 GB/s the
  // hidden swaps and the recomputations meet the limit, so no swap of the stalling phase is needed.
  const auto cost = a100(1000);
  for (RealCase& c : real_cases()) {
    CAPTURE(c.what);
    const int64_t limit = limit_for(c, *cost);
    const PolicyResult r = plan(c.base, *cost, limit);
    REQUIRE(r.feasible);
    CHECK_NOTHROW(validate_schedule(r.schedule));
    CHECK(r.peak_bytes <= limit);
    const sim::Prediction p = simulate_at(r.schedule, *cost, limit);
    CHECK_FALSE(p.oom);
    CHECK(p.bytes_swapped_out > 0);
    CHECK(p.compute_stall_ns == 0);
  }
}

TEST_CASE("capuchin fits small real training steps on the A100's PCIe link") {
  const auto cost = a100();
  for (RealCase& c : real_cases()) {
    CAPTURE(c.what);
    const int64_t limit = limit_for(c, *cost);
    const PolicyResult r = plan(c.base, *cost, limit);
    REQUIRE(r.feasible);
    CHECK(r.peak_bytes <= limit);
    CHECK_FALSE(simulate_at(r.schedule, *cost, limit).oom);
  }
}

TEST_CASE("capuchin recomputes only when the link is too slow to hide any copy") {
  // At 100 KB/s the smallest candidate (512 B) takes 5.1 ms + 10 us latency each way, more than
  // the whole resnet18 step (2.4 ms): every FreeTime is negative, so recomputation meets the limit.
  // (At 0.01 GB/s a few statistics tensors of at most 4.6 KB still hide in long windows.)
  const auto cost = a100(0.0001);
  RealCase c = real_cases()[0];
  const int64_t limit = limit_for(c, *cost);
  const PolicyResult r = plan(c.base, *cost, limit);
  REQUIRE(r.feasible);
  const sim::Prediction p = simulate_at(r.schedule, *cost, limit);
  CHECK(p.bytes_swapped_out == 0);
  CHECK(p.recompute_ns > 0);
}

TEST_CASE("capuchin reports an impossible limit as infeasible with its most-saving plan's peak") {
  const auto cost = a100();
  RealCase c = real_cases()[0];
  const sim::Prediction none = simulate_at(c.base, *cost, -1);
  const int64_t limit = none.resident_bytes + 1;  // no step fits beside the resident state
  const PolicyResult r = plan(c.base, *cost, limit);
  CHECK_FALSE(r.feasible);
  CHECK(r.step_time_ns == 0);
  CHECK_NOTHROW(validate_schedule(r.schedule));
  CHECK(r.peak_bytes == simulate_at(r.schedule, *cost, -1).peak_bytes);
  CHECK(r.peak_bytes > limit);
  CHECK(r.peak_bytes < none.peak_bytes);
  // The most-saving plan is the floor: at its own peak a plan fits.
  CHECK(plan(c.base, *cost, r.peak_bytes).feasible);
}
