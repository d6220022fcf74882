// Discrete-event simulator, continued: the host timeline (host-bound and GPU-bound steps, syncs,
// the launch queue), resident state over the limit, recomputation, extra compute streams,
// determinism, the Chrome-trace export, schedule checks and the prediction JSON. Schedules are
// built by hand; op durations come from a fixed table and transfers run at 1 byte/ns with no
// latency, so every expected figure below is derived exactly.
#include "tests/support/test_sim_fixtures.hpp"

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

namespace {

// A (2 ms) -> a 1024 B; free a; recompute A (2 ms) rebuilds a (+1024); B (1 ms) reads a;
// recompute A again (a still resident: no allocation).
struct RecomputedTwice {
  Schedule schedule;
  OpId A = kNoId, B = kNoId;
};
RecomputedTwice recomputed_twice() {
  TestGraph tg;
  TensorId w = tg.tensor("w", 512, TensorRole::weight);
  TensorId a = tg.tensor("a", 1024, TensorRole::activation);
  RecomputedTwice out;
  out.A = tg.op("A", {w}, {a});
  out.B = tg.op("B", {a}, {tg.tensor("b", 512, TensorRole::activation)});
  ScheduleBuilder sb(std::move(tg));
  sb.compute(out.A);
  sb.free(a, kComputeStream);
  sb.recompute(out.A);
  sb.compute(out.B);
  sb.recompute(out.A);
  out.schedule = std::move(sb.s);
  return out;
}

}  // namespace

TEST_CASE("recompute time is summed and a still-resident output allocates nothing") {
  // recomputed_twice: step = 2 + 2 + 1 + 2 = 7 ms; recompute_ns = 4 ms; peak = w 512 + a 1024 + b 512 = 2048.
  const auto [s, A, B] = recomputed_twice();
  REQUIRE_NOTHROW(validate_schedule(s));
  const Prediction p = simulate(s, FixedCostModel({{A, 2 * kMs}, {B, kMs}}));
  CHECK(p.step_time_ns == 7 * kMs);
  CHECK(p.recompute_ns == 4 * kMs);
  CHECK(p.peak_bytes == 2048);
  CHECK(p.compute_stall_ns == 0);
}

TEST_CASE("each op is priced once however often the schedule recomputes it") {
  // recomputed_twice, with a cost model that counts its calls per op: A, computed once and
  // recomputed twice, is priced once, as is B.
  struct CountingCostModel final : FixedCostModel {
    using FixedCostModel::FixedCostModel;
    mutable std::map<OpId, int> calls;
    int64_t op_duration_ns(const mutwo::ir::Graph& g, const mutwo::ir::Op& op) const override {
      ++calls[op.id];
      return FixedCostModel::op_duration_ns(g, op);
    }
  };
  const auto [s, A, B] = recomputed_twice();
  const CountingCostModel model({{A, 2 * kMs}, {B, kMs}});
  CHECK(simulate(s, model).step_time_ns == 7 * kMs);
  CHECK(model.calls == std::map<OpId, int>{{A, 1}, {B, 1}});
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
