// The runtime-level trace replay (io/kineto_runtime.hpp, sim/runtime_replay.hpp) on hand-made
// profiler traces, one per construct: a blocking device-to-host copy, an event wait across streams,
// a collective on its own stream beside compute, a CUDA graph launch, a trace without ProfilerStep.
// Every expected time below is derived by hand from the rules in sim/runtime_replay.hpp (times in
// us in the traces, ns in the checks). Unchanged, each replays to its profiled step exactly.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "io/kineto_runtime.hpp"
#include "sim/runtime_replay.hpp"
#include "sim/runtime_timeline.hpp"
#include "support/error.hpp"
#include "tests/support/runtime_trace_builder.hpp"

using namespace mutwo;
using mutwo::test::kUs;
using mutwo::test::TraceBuilder;
using nlohmann::json;

namespace {

int64_t replay_ns(const ir::RuntimeTrace& t, double kernel_speedup = 1.0, bool host_free = false) {
  sim::RuntimeWhatIf w;
  w.kernel_speedup = kernel_speedup;
  w.host_free = host_free;
  return sim::replay_runtime(t, w).step_ns;
}

}  // namespace

TEST_CASE("a blocking device-to-host copy holds the host until the copy has ended") {
  TraceBuilder b;
  b.step("ProfilerStep#1", 0, 100);
  b.call("cudaLaunchKernel", 10, 5, 1);
  b.kernel("k1", 7, 16, 40);  // ends at 56
  b.call("cudaMemcpyAsync", 20, 40, 2);
  b.work("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 7, 56, 4, 2);  // ends at 60, as the call returns
  const ir::RuntimeTrace t = b.read();
  REQUIRE(t.calls.size() == 2);
  CHECK(t.calls[1].blocking);
  CHECK(replay_ns(t) == 100 * kUs);
  // k1 in 20 us: 16..36; the copy right after it, 36..40; the call returns at 40 (nothing left of
  // it after the copy in the trace), then the 40 us the trace shows after it: 80 us.
  CHECK(replay_ns(t, 2.0) == 80 * kUs);
  // No host time: both calls at 0; k1 1..41 (of its 6 us launch delay, 1 us came after its call
  // returned), the copy 41..45 (its delay all inside its call), the host free at 45.
  CHECK(replay_ns(t, 1.0, true) == 45 * kUs);
  const sim::RuntimeReplay r = sim::replay_runtime(t);
  CHECK(r.host_blocked_ns == 40 * kUs);  // 20..60 in the copy's call
}

TEST_CASE("an event wait across streams holds the waiting stream's next work until the record") {
  TraceBuilder b;
  b.step("ProfilerStep#3", 0, 80);
  b.call("cudaLaunchKernel", 10, 2, 1);
  b.kernel("ka", 7, 12, 50);  // 12..62
  b.call("cudaEventRecord", 14, 1, 2);
  b.call("cudaStreamWaitEvent", 16, 1, 3);
  b.sync("Stream Wait Event", 3, 9, 7, 2);  // stream 9 waits for the record on stream 7
  b.call("cudaLaunchKernel", 18, 2, 4);
  b.kernel("kb", 9, 62, 10);                   // 62..72: after ka
  b.call("cudaDeviceSynchronize", 20, 53, 5);  // returns at 73
  const ir::RuntimeTrace t = b.read();
  CHECK(t.calls[1].kind == ir::RuntimeCallKind::event_record);
  CHECK(t.calls[2].record == 1);
  const sim::RuntimeReplay r = sim::replay_runtime(t);
  CHECK(r.recorded_waits == 1);
  CHECK(r.inferred_waits == 0);
  CHECK(r.step_ns == 80 * kUs);
  // Kernels 2x faster: ka 12..37, kb after it 37..42; the sync returns at 42 + 1 us; 7 us after it.
  CHECK(replay_ns(t, 2.0) == 50 * kUs);
  // No host time (the launch delays were inside the calls): ka 0..50, kb 50..60, the sync returns
  // at 60.
  CHECK(replay_ns(t, 1.0, true) == 60 * kUs);
}

TEST_CASE("a collective on its own stream overlaps compute; its wait is what it took above its floor") {
  TraceBuilder b;
  b.step("ProfilerStep#2", 0, 100);
  const std::string nccl = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";
  b.call("cudaLaunchKernel", 5, 5, 1);
  b.kernel(nccl, 20, 10, 60);  // 10..70, waiting for the other ranks most of it
  b.call("cudaLaunchKernel", 12, 5, 2);
  b.kernel("gemm", 7, 17, 30);  // 17..47
  b.call("cudaLaunchKernel", 20, 5, 3);
  b.kernel("gemm", 7, 47, 30);  // 47..77
  b.call("cudaLaunchKernel", 22, 3, 4);
  b.kernel(nccl, 20, 70, 20);                  // 70..90: its floor
  b.call("cudaDeviceSynchronize", 30, 61, 5);  // returns at 91
  const ir::RuntimeTrace t = b.read();
  const sim::RuntimeReplay r = sim::replay_runtime(t);
  CHECK(r.step_ns == 100 * kUs);
  CHECK(r.collective_ns == 80 * kUs);
  CHECK(r.collective_wait_ns == 40 * kUs);
  CHECK(r.inferred_waits == 0);
  CHECK(r.stream_busy_ns == std::vector<int64_t>{60 * kUs, 80 * kUs});  // streams 7 and 20
  // Collectives at their floor (20 us): the first 10..30, the second (launched at 22, 5 us the
  // median launch delay) 30..50; compute 17..77 unchanged; the sync returns at 77 + 1 us, then 9 us.
  sim::RuntimeWhatIf floor;
  floor.collectives_at_floor = true;
  CHECK(sim::replay_runtime(t, floor).step_ns == 87 * kUs);
}

TEST_CASE("a CUDA graph launch replays its kernels in order on their stream") {
  TraceBuilder b;
  b.step("ProfilerStep#7", 0, 50);
  b.call("cudaGraphLaunch", 5, 4, 1);
  b.kernel("g1", 7, 10, 10);
  b.kernel("g2", 7, 20, 10);
  b.kernel("g3", 7, 30, 10);                   // all three launched by the one call
  b.call("cudaStreamSynchronize", 12, 29, 2);  // returns at 41
  b.sync("Stream Sync", 2, 7);
  const ir::RuntimeTrace t = b.read();
  REQUIRE(t.calls[0].work.size() == 3);
  CHECK(t.calls[1].kind == ir::RuntimeCallKind::stream_sync);
  CHECK(t.calls[1].stream == 0);
  CHECK(replay_ns(t) == 50 * kUs);
  // 2x faster: 10..15, 15..20, 20..25; the sync returns at 25 + 1 us; the 9 us after it: 35 us.
  CHECK(replay_ns(t, 2.0) == 35 * kUs);
  // Captured in a graph with 1 us per node and no host time: g1 starts 1 us after the call (the part
  // of its 5 us delay after the 4 us call), 1..11; g2 and g3 each 1 us after the one before, 12..22,
  // 23..33; the sync returns at 33.
  sim::RuntimeWhatIf graph;
  graph.graph_node_ns = 1 * kUs;
  CHECK(sim::replay_runtime(t, graph).step_ns == 33 * kUs);
}

TEST_CASE("a trace without ProfilerStep replays as one window from its first to its last event") {
  TraceBuilder b;
  b.call("cudaLaunchKernel", 100, 5, 1);
  b.kernel("k", 7, 107, 20);                    // 107..127
  b.call("cudaDeviceSynchronize", 110, 18, 2);  // returns at 128
  const ir::RuntimeTrace t = b.read();
  CHECK_FALSE(t.annotated);
  CHECK(t.window == "whole trace");
  CHECK(t.window_ns == 28 * kUs);
  CHECK(replay_ns(t) == 28 * kUs);
  CHECK(replay_ns(t, 2.0) == 18 * kUs);  // the kernel 7..17, the sync returns 1 us after it
}

TEST_CASE("steps: the last complete one by default, any by number, an absent one named with those there") {
  TraceBuilder b;
  b.step("ProfilerStep#4", 0, 100);
  b.step("ProfilerStep#5", 100, 100);
  b.step("ProfilerStep#6", 200, 10);  // cut short when the profiler stopped
  b.call("cudaLaunchKernel", 10, 5, 1);
  b.kernel("k", 7, 20, 30);
  b.call("cudaLaunchKernel", 110, 5, 2);
  b.kernel("k", 7, 120, 30);
  const json doc{{"traceEvents", b.events}};
  CHECK(io::kineto_step_numbers(doc, "hand.json") == std::vector<int64_t>{4, 5, 6});
  CHECK(io::read_kineto_runtime(doc, "hand.json").window == "ProfilerStep#5");
  const ir::RuntimeTrace four = io::read_kineto_runtime(doc, "hand.json", 4);
  CHECK(four.window == "ProfilerStep#4");
  CHECK(four.calls.size() == 1);
  CHECK_THROWS_WITH_AS(io::read_kineto_runtime(doc, "hand.json", 9),
                       "hand.json: no ProfilerStep#9; the trace holds steps 4, 5, 6", Error);
}

TEST_CASE("traces the runtime replay cannot read are refused naming the field") {
  CHECK_THROWS_WITH_AS(io::read_kineto_runtime(json{{"traceEvents", json::array()}}, "empty.json"),
                       "empty.json: no CUDA runtime calls and no device work: nothing to replay",
                       FormatError);
  TraceBuilder b;
  b.call("cudaLaunchKernel", 10, 5, 1);
  b.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"ts", 12}, {"dur", -3}});
  CHECK_THROWS_WITH_AS(b.read(), "hand.json: event 1 ('k'): field 'dur' = -3, must be >= 0", FormatError);
  TraceBuilder c;
  c.call("cudaLaunchKernel", 10, 5, 1);
  c.events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "k"}, {"ts", 12}, {"dur", 3}});
  CHECK_THROWS_WITH_AS(
      c.read(),
      "hand.json: event 1 ('k'): field 'args.correlation' is missing (it links device work to its launch)",
      FormatError);
  sim::RuntimeWhatIf bad;
  bad.kernel_speedup = 0;
  TraceBuilder d;
  d.call("cudaLaunchKernel", 10, 5, 1);
  d.kernel("k", 7, 12, 3, 1);
  CHECK_THROWS_WITH_AS(sim::replay_runtime(d.read(), bad), "runtime replay: kernel speed-up 0 must be a number >= 0.001",
                       Error);
  // 1e-300 used to wrap every kernel's time (llround out of range) and report the step as faster.
  bad.kernel_speedup = 1e-300;
  CHECK_THROWS_WITH_AS(sim::replay_runtime(d.read(), bad),
                       "runtime replay: kernel speed-up 1e-300 must be a number >= 0.001", Error);
  bad.kernel_speedup = 1e-3;
  const sim::RuntimeReplay slow = sim::replay_runtime(d.read(), bad);
  REQUIRE(slow.work_end_ns.size() == 1);
  CHECK(slow.work_end_ns[0] - slow.work_start_ns[0] == 3'000'000);  // the 3 us kernel, 1000 times slower
}

TEST_CASE("the replay's timeline: host threads and streams as Chrome-trace tracks, times in microseconds") {
  TraceBuilder b;
  b.step("ProfilerStep#1", 0, 100);
  b.call("cudaLaunchKernel", 10, 5, 1);
  b.kernel("k1", 7, 16, 40);
  b.call("cudaMemcpyAsync", 20, 40, 2);
  b.work("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 7, 56, 4, 2);
  const ir::RuntimeTrace t = b.read();
  const json doc = json::parse(sim::runtime_chrome_trace_json(t, sim::replay_runtime(t, [] {
                                                                sim::RuntimeWhatIf w;
                                                                w.label = "kernels 2x faster";
                                                                w.kernel_speedup = 2.0;
                                                                return w;
                                                              }())));
  std::vector<json> host, gpu;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X") (e["pid"] == 1 ? host : gpu).push_back(e);
  }
  REQUIRE(host.size() == 2);
  REQUIRE(gpu.size() == 2);
  // Kernels 2x faster (the first test case's figures): k1 16..36, the copy 36..40, the copy's call
  // 20..40.
  CHECK(gpu[0]["name"] == "k1");
  CHECK(gpu[0]["ts"].get<double>() == 16.0);
  CHECK(gpu[0]["dur"].get<double>() == 20.0);
  CHECK(gpu[1]["ts"].get<double>() == 36.0);
  CHECK(host[1]["name"] == "cudaMemcpyAsync");
  CHECK(host[1]["ts"].get<double>() == 20.0);
  CHECK(host[1]["dur"].get<double>() == 20.0);
  CHECK(doc["traceEvents"][0]["args"]["name"] == "host (kernels 2x faster)");
}
