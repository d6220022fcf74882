// Discrete-event simulator: stream overlap, copy-engine duplex, stalls, free ordering, memory
// (512 B rounding, workspace, peak, OOM boundaries), determinism and the Chrome-trace export.
// Schedules are built by hand; op durations come from a fixed table and transfers run at
// 1 byte/ns with no latency, so every expected figure below is derived exactly.
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

SimOptions with_timeline() {
  SimOptions o;
  o.record_timeline = true;
  return o;
}

const mutwo::sim::TimelineEvent& event_of(const Prediction& p, InstrId id) {
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
Schedule memory_schedule() {
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
FixedCostModel memory_model() {
  return FixedCostModel({{0, kMs}, {1, kMs}, {2, kMs}});
}

// A (1 ms) makes a (2,000,000 B); swap_out a after A; B (1 ms); free a (compute stream, waits the
// swap_out); swap_in a (waits the free); C (0.5 ms) reads a, waiting the swap_in. Ids: A 0, swap_out 1,
// B 2, free 3, swap_in 4, C 5.
Schedule swap_in_schedule() {
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
FixedCostModel swap_in_model() {
  return FixedCostModel({{0, kMs}, {1, kMs}, {2, kMs / 2}});
}

}  // namespace

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

namespace {

constexpr int64_t kUs = 1'000;  // ns

// Three forward ops in a chain, x -> A -> a -> B -> b -> C -> c, each gpu_ns on the GPU; the host
// issues each in host_ns (forward_op_ns) from Python, in 20 us (the C++ figure) from C++.
struct HostChain {
  Schedule s;
  FixedCostModel cost{{}};
  HostChain(int64_t gpu_ns, int64_t host_ns, bool sync_b = false) {
    TestGraph tg;
    TensorId x = tg.tensor("x", 512, TensorRole::input);
    TensorId a = tg.tensor("a", 512, TensorRole::activation);
    TensorId b = tg.tensor("b", 512, TensorRole::activation);
    TensorId c = tg.tensor("c", 512, TensorRole::activation);
    OpId A = tg.op("A", {x}, {a});
    OpId B = tg.op("B", {a}, {b});
    OpId C = tg.op("C", {b}, {c});
    if (sync_b) tg.g.ops[static_cast<size_t>(B)].attrs["host_sync"] = int64_t{1};
    ScheduleBuilder sb(std::move(tg));
    sb.compute(A);
    sb.compute(B);
    sb.compute(C);
    s = sb.s;
    cost = FixedCostModel({{A, gpu_ns}, {B, gpu_ns}, {C, gpu_ns}});
    mutwo::costmodel::HostDispatch h;
    h.forward_op_ns = host_ns;
    h.backward_op_ns = 20 * kUs;
    h.graph_kernel_ns = 1 * kUs;
    cost.set_host(h);
  }
};

SimOptions host(mutwo::sim::HostMode mode) {
  SimOptions o;
  o.host_mode = mode;
  o.record_timeline = true;
  return o;
}

}  // namespace

TEST_CASE("a host-bound step: kernels wait for their launch, the GPU idles between them") {
  // Host 100 us per op, kernels 10 us: issued at 100, 200, 300 us; each kernel starts at its issue
  // and ends 10 us later; step = 310 us. The compute stream waits 100 + 90 + 90 = 280 us for the host.
  const HostChain ch(10 * kUs, 100 * kUs);
  const Prediction p = simulate(ch.s, ch.cost, host(mutwo::sim::HostMode::eager));
  CHECK(p.step_time_ns == 310 * kUs);
  CHECK(p.host_busy_ns == 300 * kUs);
  CHECK(p.host_bound_idle_ns == 280 * kUs);
  CHECK(p.compute_stall_ns == 280 * kUs);
  CHECK(p.busy_ns[kComputeStream] == 30 * kUs);
  // The host track: A issued 0..100 us, C 200..300 us.
  int host_events = 0;
  for (const auto& ev : p.timeline.events) {
    if (ev.stream != mutwo::sim::kHostTrack) continue;
    ++host_events;
    if (ev.name == "C") CHECK(ev.start_ns == 200 * kUs);
  }
  CHECK(host_events == 3);
  // Without the host the step is the GPU's 30 us.
  CHECK(simulate(ch.s, ch.cost).step_time_ns == 30 * kUs);
  // Replayed from a CUDA graph (1 us per kernel): issued at 1, 2, 3 us; A runs 1..11, B 11..21,
  // C 21..31 us; only A waited for the host (1 us).
  const Prediction g = simulate(ch.s, ch.cost, host(mutwo::sim::HostMode::cuda_graph));
  CHECK(g.step_time_ns == 31 * kUs);
  CHECK(g.host_bound_idle_ns == 1 * kUs);
  // Issued from C++ (libtorch, as mutwo's executor issues): 20 us per op, issued at 20, 40, 60 us;
  // A runs 20..30, B 40..50, C 60..70 us; the GPU waits 20 + 10 + 10 us.
  const Prediction l = simulate(ch.s, ch.cost, host(mutwo::sim::HostMode::libtorch));
  CHECK(l.step_time_ns == 70 * kUs);
  CHECK(l.host_busy_ns == 60 * kUs);
  CHECK(l.host_bound_idle_ns == 40 * kUs);
}

TEST_CASE("a GPU-bound step runs ahead on the host; a sync makes the host wait") {
  // Host 10 us, kernels 100 us: A runs 10..110, B 110..210, C 210..310 us; the host is done at
  // 30 us; only A waited for the host (10 us).
  const HostChain free_running(100 * kUs, 10 * kUs);
  const Prediction p = simulate(free_running.s, free_running.cost, host(mutwo::sim::HostMode::eager));
  CHECK(p.step_time_ns == 310 * kUs);
  CHECK(p.host_bound_idle_ns == 10 * kUs);
  // B syncs (as .item() would): the host issues C only once B finished at 210 us, then takes 10 us:
  // C runs 220..320 us, and the GPU idled 10 us for it.
  const HostChain synced(100 * kUs, 10 * kUs, /*sync_b=*/true);
  const Prediction q = simulate(synced.s, synced.cost, host(mutwo::sim::HostMode::eager));
  CHECK(q.step_time_ns == 320 * kUs);
  CHECK(q.host_bound_idle_ns == 20 * kUs);
}

TEST_CASE("the host runs ahead by at most the launch queue's depth") {
  // Depth 1: the host may not issue the next op while one issued op has not started. Host 10 us,
  // kernels 100 us: A issued 0..10, starts 10; B issued 10..20, starts 110 (after A); C may be
  // issued only once B started (110 us): 110..120, starts 210 after B. Step 310 us, as unbounded,
  // but the host finishes at 120 us instead of 30.
  HostChain ch(100 * kUs, 10 * kUs);
  mutwo::costmodel::HostDispatch h = ch.cost.device().host;
  h.launch_queue_depth = 1;
  ch.cost.set_host(h);
  const Prediction p = simulate(ch.s, ch.cost, host(mutwo::sim::HostMode::eager));
  CHECK(p.step_time_ns == 310 * kUs);
  for (const auto& ev : p.timeline.events) {
    if (ev.stream == mutwo::sim::kHostTrack && ev.name == "C") CHECK(ev.start_ns == 110 * kUs);
  }
}

TEST_CASE("resident tensors over the limit are OOM at t=0") {
  SimOptions tiny;
  tiny.memory_limit_bytes = 1535;  // resident needs 1536
  const Prediction p = simulate(memory_schedule(), memory_model(), tiny);
  CHECK(p.oom);
  CHECK(p.oom_instruction == kNoId);
  CHECK(p.instructions_simulated == 0);
  CHECK(p.oom_message.find("1536 B") != std::string::npos);
}

TEST_CASE("recompute time is summed and a still-resident output allocates nothing") {
  // A (2 ms) -> a 1024 B; free a; recompute A (2 ms) rebuilds a (+1024); B (1 ms) reads a;
  // recompute A again (a still resident: no allocation); step = 2 + 2 + 1 + 2 = 7 ms;
  // recompute_ns = 4 ms; peak = w 512 + a 1024 + b 512 = 2048.
  TestGraph tg;
  TensorId w = tg.tensor("w", 512, TensorRole::weight);
  TensorId a = tg.tensor("a", 1024, TensorRole::activation);
  OpId A = tg.op("A", {w}, {a});
  OpId B = tg.op("B", {a}, {tg.tensor("b", 512, TensorRole::activation)});
  ScheduleBuilder sb(std::move(tg));
  sb.compute(A);
  sb.free(a, kComputeStream);
  sb.recompute(A);
  sb.compute(B);
  sb.recompute(A);
  REQUIRE_NOTHROW(validate_schedule(sb.s));
  const Prediction p = simulate(sb.s, FixedCostModel({{A, 2 * kMs}, {B, kMs}}));
  CHECK(p.step_time_ns == 7 * kMs);
  CHECK(p.recompute_ns == 4 * kMs);
  CHECK(p.peak_bytes == 2048);
  CHECK(p.compute_stall_ns == 0);
}

TEST_CASE("extra compute streams run side by side") {
  // A (3 ms) on stream 0 and B (2 ms) on stream 3 overlap: step 3 ms; C waits on both: 3..4 ms.
  TestGraph tg;
  TensorId w = tg.tensor("w", 512, TensorRole::weight);
  OpId A = tg.op("A", {w}, {tg.tensor("a", 512, TensorRole::activation)});
  OpId B = tg.op("B", {w}, {tg.tensor("b", 512, TensorRole::activation)});
  OpId C = tg.op("C", {w}, {tg.tensor("c", 512, TensorRole::activation)});
  ScheduleBuilder sb(std::move(tg));
  InstrId ia = sb.compute(A);
  InstrId ib = sb.compute(B, {}, kFirstExtraComputeStream);
  sb.compute(C, {ia, ib});
  REQUIRE_NOTHROW(validate_schedule(sb.s));
  const Prediction p = simulate(sb.s, FixedCostModel({{A, 3 * kMs}, {B, 2 * kMs}, {C, kMs}}));
  CHECK(p.step_time_ns == 4 * kMs);
  REQUIRE(p.busy_ns.size() == 4);
  CHECK(p.busy_ns[kFirstExtraComputeStream] == 2 * kMs);
  CHECK(p.compute_stall_ns == 0);
}

TEST_CASE("two runs give identical predictions and identical Chrome traces") {
  const Schedule s = memory_schedule();
  const Prediction a = simulate(s, memory_model(), with_timeline());
  const Prediction b = simulate(s, memory_model(), with_timeline());
  CHECK(a == b);
  const std::string ja = mutwo::sim::chrome_trace_json(a);
  CHECK(ja == mutwo::sim::chrome_trace_json(b));
  // Without a timeline the figures are the same and nothing is recorded.
  const Prediction c = simulate(s, memory_model());
  CHECK_FALSE(c.has_timeline);
  CHECK(c.timeline.events.empty());
  CHECK(c.peak_bytes == a.peak_bytes);
  CHECK(c.step_time_ns == a.step_time_ns);
}

TEST_CASE(
    "Chrome trace has one named track per stream, complete events in microseconds and a memory counter") {
  const Prediction p = simulate(memory_schedule(), memory_model(), with_timeline());
  const nlohmann::json doc = nlohmann::json::parse(mutwo::sim::chrome_trace_json(p, "memory test"));
  std::map<int, std::string> threads;
  std::vector<nlohmann::json> complete;
  std::vector<nlohmann::json> counters;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      threads[e.at("tid").get<int>()] = e.at("args").at("name");
    if (e.at("ph") == "X") complete.push_back(e);
    if (e.at("ph") == "C") counters.push_back(e);
  }
  CHECK(threads == std::map<int, std::string>{{1, "compute"}, {2, "d2h copy"}, {3, "h2d copy"}});
  REQUIRE(complete.size() == 4);  // A, B, free a, C
  // B: instruction 1, starts at 1 ms = 1000.0 us, lasts 1000.0 us.
  CHECK(complete[1].at("name") == "B");
  CHECK(complete[1].at("tid") == 1);
  CHECK(complete[1].at("ts").get<double>() == 1000.0);
  CHECK(complete[1].at("dur").get<double>() == 1000.0);
  CHECK(complete[1].at("args").at("kind") == "compute");
  CHECK(complete[1].at("args").at("phase") == "forward");
  CHECK(complete[1].at("args").at("op") == 1);
  CHECK(complete[2].at("name") == "a");
  CHECK(complete[2].at("args").at("kind") == "free");
  CHECK(complete[2].at("args").at("tensor") == 2);
  REQUIRE(counters.size() == 7);  // one per memory change (see the memory test)
  CHECK(counters[5].at("ts").get<double>() == 2000.0);
  CHECK(counters[5].at("args").at("bytes") == 11264);
  CHECK_THROWS_AS(mutwo::sim::chrome_trace_json(simulate(memory_schedule(), memory_model())), mutwo::Error);
}

TEST_CASE("a wait that does not point backwards is rejected naming the instruction") {
  Schedule s = memory_schedule();
  s.instructions[1].waits = {2};
  try {
    simulate(s, memory_model());
    FAIL("expected ScheduleError");
  } catch (const ScheduleError& e) {
    CHECK(std::string(e.what()).find("instruction 1 (compute)") != std::string::npos);
    CHECK(std::string(e.what()).find("'waits'") != std::string::npos);
  }
}

TEST_CASE("prediction JSON carries every figure with its unit, identical across runs; OOM has no step time") {
  const Schedule s = memory_schedule();
  const nlohmann::json a = mutwo::sim::prediction_to_json(simulate(s, memory_model()), s);
  CHECK(a.dump() == mutwo::sim::prediction_to_json(simulate(s, memory_model()), s).dump());
  CHECK(a["peak_bytes"] == 11264);
  CHECK(a["step_time_ns"].is_number_integer());
  CHECK(a["oom"].is_null());
  CHECK(a["memory_limit_bytes"].is_null());
  CHECK(a["instructions_simulated"] == 4);
  CHECK(a["busy_ns"].contains("compute"));

  SimOptions under;
  under.memory_limit_bytes = 11263;
  const nlohmann::json o = mutwo::sim::prediction_to_json(simulate(s, memory_model(), under), s);
  CHECK(o["step_time_ns"].is_null());  // the step did not finish: no time to report
  CHECK(o["memory_limit_bytes"] == 11263);
  CHECK(o["oom"]["instruction"]["id"] == 3);
  CHECK(o["oom"]["instruction"]["description"] == "compute op 2 'C'");
  CHECK(o["oom"]["requested_bytes"] == 512 + 4096);
  CHECK(o["oom"]["in_use_bytes"] == 6656);
}
