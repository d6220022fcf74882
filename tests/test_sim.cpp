// Discrete-event simulator: stream overlap, copy-engine duplex, stalls, free ordering, memory
// (512 B rounding, workspace, peak, OOM boundaries), the executed stream, dynamic eviction's input
// check. The host timeline and the rest: tests/test_sim_host.cpp.
// Schedules are built by hand; op durations come from a fixed table and transfers run at
// 1 byte/ns with no latency, so every expected figure below is derived exactly.
#include "tests/support/test_sim_fixtures.hpp"

TEST_CASE("allocations round up to the caching allocator's 512-byte blocks") {
  CHECK(mutwo::ir::allocation_bytes(0) == 0);
  CHECK(mutwo::ir::allocation_bytes(1) == 512);
  CHECK(mutwo::ir::allocation_bytes(512) == 512);
  CHECK(mutwo::ir::allocation_bytes(513) == 1024);
  CHECK(mutwo::ir::allocation_bytes(2'000'000) == 2'000'384);  // 3906.25 blocks -> 3907 * 512
}

TEST_CASE("compute overlapping a swap_out hides the copy") {
  // x (input, 2,000,000 B) swaps out at 1 B/ns = 2 ms on the d2h engine while op A (3 ms) runs:
  // step = max(3 ms, 2 ms) = 3 ms.
  TestGraph tg;
  TensorId x = tg.tensor("x", 2'000'000, TensorRole::input);
  TensorId w = tg.tensor("w", 1024, TensorRole::weight);
  OpId A = tg.op("A", {w}, {tg.tensor("y", 512, TensorRole::activation)});
  ScheduleBuilder sb(std::move(tg));
  sb.swap_out(x);
  sb.compute(A);
  REQUIRE_NOTHROW(validate_schedule(sb.s));
  const Prediction p = simulate(sb.s, FixedCostModel({{A, 3 * kMs}}));
  CHECK(p.step_time_ns == 3 * kMs);
  CHECK(p.busy_ns[kComputeStream] == 3 * kMs);
  CHECK(p.busy_ns[kDeviceToHostStream] == 2 * kMs);
  CHECK(p.compute_stall_ns == 0);
  CHECK(p.bytes_swapped_out == 2'000'000);
  CHECK(p.bytes_swapped_in == 0);
  CHECK(p.instructions_simulated == 2);
  CHECK_FALSE(p.oom);
}

TEST_CASE("compute waiting on a swap_in stalls for the uncovered transfer time") {
  // A (1 ms) makes a (2,000,000 B); swap_out a 1..3 ms; B runs 1..2 ms; free a (compute stream,
  // waits the swap_out) at 3 ms; swap_in a (waits the free) 3..5 ms; C reads a, waits the swap_in:
  // 5..5.5 ms. The compute stream idles 2..5 ms: stall = 3 ms = 4 ms of copies - 1 ms of B covering them.
  const Schedule s = swap_in_schedule();
  const InstrId out = 1, fr = 3, in = 4, cc = 5;
  REQUIRE_NOTHROW(validate_schedule(s));
  const Prediction p = simulate(s, swap_in_model(), with_timeline());
  CHECK(event_of(p, out).start_ns == 1 * kMs);
  CHECK(event_of(p, fr).start_ns == 3 * kMs);
  CHECK(event_of(p, in).start_ns == 3 * kMs);
  CHECK(event_of(p, cc).start_ns == 5 * kMs);
  CHECK(p.step_time_ns == 5 * kMs + kMs / 2);
  CHECK(p.compute_stall_ns == 3 * kMs);
  CHECK(p.stall_ns[kComputeStream] == 3 * kMs);
  CHECK(p.busy_ns[kComputeStream] == 2 * kMs + kMs / 2);
  CHECK(p.busy_ns[kHostToDeviceStream] == 2 * kMs);
  // Bytes each way are the tensor's own bytes, not the rounded block.
  CHECK(p.bytes_swapped_out == 2'000'000);
  CHECK(p.bytes_swapped_in == 2'000'000);
}

TEST_CASE("full duplex overlaps swap_out with swap_in; half duplex serialises them") {
  // q (1,500,000 B) swaps out 0..1.5 ms and is freed at 1.5 ms; then p (2,000,000 B) swaps out and q swaps
  // back in, both ready at 1.5 ms.
  // Full duplex: swap_out p 1.5..3.5, swap_in q 1.5..3.0 -> step 3.5 ms.
  // Half duplex: one engine; tie at 1.5 ms broken by id (swap_out p, id 2, first): 1.5..3.5, then
  // swap_in q 3.5..5.0 -> step 5 ms; the difference, 1.5 ms, is the swap_in no longer overlapped.
  TestGraph tg;
  TensorId q = tg.tensor("q", 1'500'000, TensorRole::input);
  TensorId pt = tg.tensor("p", 2'000'000, TensorRole::input);
  ScheduleBuilder sb(std::move(tg));
  InstrId out_q = sb.swap_out(q);
  InstrId fr = sb.free(q, kComputeStream, {out_q});
  InstrId out_p = sb.swap_out(pt);
  InstrId in_q = sb.swap_in(q, {fr});
  REQUIRE_NOTHROW(validate_schedule(sb.s));
  const FixedCostModel model({});
  SimOptions full = with_timeline();
  full.half_duplex = false;
  SimOptions half = with_timeline();
  half.half_duplex = true;
  const Prediction pf = simulate(sb.s, model, full);
  const Prediction ph = simulate(sb.s, model, half);
  CHECK(pf.step_time_ns == 3'500'000);
  CHECK(ph.step_time_ns == 5'000'000);
  CHECK(ph.step_time_ns - pf.step_time_ns == 1'500'000);
  CHECK(event_of(ph, out_p).start_ns == 1'500'000);
  CHECK(event_of(ph, in_q).start_ns == 3'500'000);
  CHECK(pf.bytes_swapped_out == 3'500'000);
  CHECK(pf.bytes_swapped_in == 1'500'000);
  // With no option the device decides: a half-duplex device serialises the same way.
  const Prediction pd = simulate(sb.s, FixedCostModel({}, /*full_duplex=*/false));
  CHECK(pd.step_time_ns == 5'000'000);
}

TEST_CASE("half duplex engine serves transfers in the order they became ready, ties by id") {
  // q (1 MB) swaps out 0..1 ms and is freed at 1 ms, so swap_in q (id 4) is ready at 1 ms; r (3 MB),
  // next on d2h, is ready at 1 ms too: tie, lower id (r, 2) first: 1..4 ms. At 4 ms swap_out p (id 3,
  // ready at 4 ms) and swap_in q (ready since 1 ms) wait: q goes first although its id is higher:
  // swap_in q 4..5 ms, swap_out p 5..7 ms. Full duplex: swap_in q 1..2, p 4..6 -> 6 ms.
  TestGraph tg;
  TensorId q = tg.tensor("q", 1'000'000, TensorRole::input);
  TensorId r = tg.tensor("r", 3'000'000, TensorRole::input);
  TensorId pt = tg.tensor("p", 2'000'000, TensorRole::input);
  ScheduleBuilder sb(std::move(tg));
  InstrId out_q = sb.swap_out(q);
  InstrId fr = sb.free(q, kComputeStream, {out_q});
  InstrId out_r = sb.swap_out(r);
  InstrId out_p = sb.swap_out(pt);
  InstrId in_q = sb.swap_in(q, {fr});
  REQUIRE_NOTHROW(validate_schedule(sb.s));
  SimOptions half = with_timeline();
  half.half_duplex = true;
  const Prediction p = simulate(sb.s, FixedCostModel({}), half);
  CHECK(event_of(p, out_r).start_ns == 1 * kMs);
  CHECK(event_of(p, in_q).start_ns == 4 * kMs);
  CHECK(event_of(p, out_p).start_ns == 5 * kMs);
  CHECK(p.step_time_ns == 7 * kMs);
  // The wait on the shared engine shows as stall of the copy streams: h2d idle 0..4 ms.
  CHECK(p.stall_ns[kHostToDeviceStream] == 4 * kMs);
  SimOptions full;
  full.half_duplex = false;
  CHECK(simulate(sb.s, FixedCostModel({}), full).step_time_ns == 6 * kMs);
}

TEST_CASE("free waits for the last reader on another stream, and its memory is reusable at once") {
  // A (1 ms) makes a (4096 B); swap_out a reads it on d2h 1 ms .. 1 ms + 4096 ns. The free on the
  // compute stream lists no waits (validate_schedule would ask for one; the simulator enforces the
  // rule itself, DESIGN "device copy released once every earlier reader finished"), yet runs only
  // when that reader finishes; B (after it on the stream)
  // starts then and allocates b (4096 B) at the instant a is released, so the peak never holds both:
  // peak = w 512 + a 4096 = 4608.
  TestGraph tg;
  TensorId w = tg.tensor("w", 512, TensorRole::weight);
  TensorId a = tg.tensor("a", 4096, TensorRole::activation);
  TensorId b = tg.tensor("b", 4096, TensorRole::activation);
  OpId A = tg.op("A", {w}, {a});
  OpId B = tg.op("B", {w}, {b});
  ScheduleBuilder sb(std::move(tg));
  InstrId ca = sb.compute(A);
  sb.swap_out(a, {ca});
  InstrId fr = sb.free(a, kComputeStream);
  InstrId cb = sb.compute(B);
  const Prediction p = simulate(sb.s, FixedCostModel({{A, kMs}, {B, kMs}}), with_timeline());
  CHECK(event_of(p, fr).start_ns == kMs + 4096);
  CHECK(event_of(p, cb).start_ns == kMs + 4096);
  CHECK(p.compute_stall_ns == 4096);  // the compute stream waited on the copy through the free
  CHECK(p.step_time_ns == 2 * kMs + 4096);
  CHECK(p.peak_bytes == 512 + 4096);
  CHECK(p.peak_instruction == ca);
}

TEST_CASE("memory peak follows allocation at start, workspace during the op, release at free") {
  // resident 1024 + 512 = 1536 at t=0;
  // A starts: + a 3072 + ws 1024 = 5632; A ends (1 ms): - ws 1024 = 4608;
  // B starts (1 ms): + b 5120 = 9728; B ends (2 ms); free a (2 ms): - 3072 = 6656;
  // C starts (2 ms): + c 512 + ws 4096 = 11264 (peak); C ends (3 ms): - ws 4096 = 7168.
  const Schedule s = memory_schedule();
  REQUIRE_NOTHROW(validate_schedule(s));
  const Prediction p = simulate(s, memory_model(), with_timeline());
  CHECK(p.resident_bytes == 1536);
  CHECK(p.peak_bytes == 11264);
  CHECK(p.peak_instruction == 3);
  CHECK(p.peak_time_ns == 2 * kMs);
  CHECK(p.step_time_ns == 3 * kMs);
  const std::vector<mutwo::sim::MemorySample> expected = {
      {0, 1536}, {0, 5632}, {kMs, 4608}, {kMs, 9728}, {2 * kMs, 6656}, {2 * kMs, 11264}, {3 * kMs, 7168}};
  CHECK(p.timeline.memory == expected);
}

TEST_CASE("a memory limit equal to the peak fits; one byte under is OOM at the named instruction") {
  const Schedule s = memory_schedule();
  SimOptions at_peak;
  at_peak.memory_limit_bytes = 11264;
  const Prediction fits = simulate(s, memory_model(), at_peak);
  CHECK_FALSE(fits.oom);
  CHECK(fits.peak_bytes == 11264);
  CHECK(fits.memory_limit_bytes == 11264);
  CHECK(fits.instructions_simulated == 4);

  SimOptions under;
  under.memory_limit_bytes = 11263;
  const Prediction p = simulate(s, memory_model(), under);
  CHECK(p.oom);
  CHECK(p.oom_instruction == 3);
  CHECK(p.oom_requested_bytes == 512 + 4096);  // c + C's workspace, rounded
  CHECK(p.oom_in_use_bytes == 6656);           // after free a at 2 ms
  CHECK(p.oom_message.find("instruction 3 (compute op 2 'C')") != std::string::npos);
  CHECK(p.oom_message.find("11263 B limit") != std::string::npos);
  CHECK(p.instructions_simulated == 3);  // A, B, free a
  CHECK(p.step_time_ns == 2 * kMs);      // stopped when C asked
  CHECK(p.peak_bytes == 9728);           // the peak reached before stopping

  // The device's memory is the limit when the options give none.
  FixedCostModel small = memory_model();
  small.set_memory_bytes(9727);  // B's 9728 crosses it
  const Prediction d = simulate(s, small);
  CHECK(d.oom);
  CHECK(d.oom_instruction == 1);
  SimOptions unlimited;
  unlimited.memory_limit_bytes = -1;
  CHECK_FALSE(simulate(s, small, unlimited).oom);
}

TEST_CASE("continuing past the limit reports the OOM and the peak the schedule needs, in one run") {
  // One byte under the 11264 B peak: C's request is the first over the limit (as above); the run
  // goes on, so the step (3 ms) and the peak (11264) are those of the run without a limit.
  SimOptions under;
  under.memory_limit_bytes = 11263;
  under.continue_past_limit = true;
  const Prediction p = simulate(memory_schedule(), memory_model(), under);
  CHECK(p.oom);
  CHECK(p.oom_instruction == 3);
  CHECK(p.oom_requested_bytes == 512 + 4096);
  CHECK(p.oom_in_use_bytes == 6656);
  CHECK(p.instructions_simulated == 4);  // all of them
  CHECK(p.peak_bytes == 11264);
  CHECK(p.step_time_ns == 3 * kMs);
}

TEST_CASE("the executed instruction stream of a multi-stream schedule is the schedule in start order") {
  // The swap_in schedule above: compute A, swap_out a, compute B, free a, swap_in a, compute C.
  // Start order: A (0), then B and swap_out both at 1 ms (engines start in order: compute, then
  // d2h), free (3 ms), swap_in (3 ms), C (5 ms); waits follow their instructions to their new ids.
  const Schedule s = swap_in_schedule();
  SimOptions record;
  record.record_executed = true;
  const Prediction p = simulate(s, swap_in_model(), record);
  REQUIRE(p.executed.size() == 6);
  std::vector<std::string> kinds;
  for (const Instruction& i : p.executed) kinds.push_back(std::string(instr_kind_name(i.kind)));
  CHECK(kinds == std::vector<std::string>{"compute", "compute", "swap_out", "free", "swap_in", "compute"});
  CHECK(p.executed[2].waits == std::vector<InstrId>{0});  // swap_out waits A
  CHECK(p.executed[3].waits == std::vector<InstrId>{2});  // free waits the swap_out
  CHECK(p.executed[4].waits == std::vector<InstrId>{3});
  CHECK(p.executed[5].waits == std::vector<InstrId>{4});
  Schedule replayed = s;
  replayed.instructions = p.executed;
  REQUIRE_NOTHROW(validate_schedule(replayed));
  const Prediction again = simulate(replayed, swap_in_model());
  CHECK(again.step_time_ns == p.step_time_ns);
  CHECK(again.peak_bytes == p.peak_bytes);
}

TEST_CASE("dynamic eviction replays only base schedules") {
  // A swap is not something the eviction engine can reorder around: refused by instruction.
  TestGraph tg;
  TensorId x = tg.tensor("x", 512, TensorRole::input);
  TensorId a = tg.tensor("a", 1024, TensorRole::activation);
  OpId A = tg.op("A", {x}, {a});
  ScheduleBuilder sb(std::move(tg));
  InstrId ca = sb.compute(A);
  sb.swap_out(a, {ca});
  struct Oldest : mutwo::sim::EvictionHeuristic {
    std::string_view name() const override { return "oldest"; }
    mutwo::sim::EvictionFeatures features() const override { return {}; }
    double score(const mutwo::sim::EvictionCandidate& c) const override {
      return static_cast<double>(c.last_access_ns);
    }
  } oldest;
  SimOptions evict;
  evict.eviction = &oldest;
  evict.memory_limit_bytes = 4096;
  CHECK_THROWS_WITH_AS(simulate(sb.s, memory_model(), evict),
                       "simulate: dynamic eviction replays a base schedule (compute and free on the compute "
                       "stream); instruction 1 is a swap_out on stream 1",
                       mutwo::Error);
}
