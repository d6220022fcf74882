// The server catalog, routes, bandwidth sharing and the server simulator, on hand-derived cases.
#include <doctest/doctest.h>

#include <string>

#include "costmodel/server_catalog.hpp"
#include "costmodel/server_routes.hpp"
#include "io/server_schedule_json.hpp"
#include "ir/server_schedule.hpp"
#include "sim/link_sharing.hpp"
#include "sim/server_simulator.hpp"

using namespace mutwo;
using ir::Payload;
using ir::ServerSchedule;
using ir::ServerTask;
using ir::ServerTaskKind;

namespace {

// A copy task, placed on the stream the schedule rules want.
ServerTask copy(int32_t id, int32_t from, int32_t to, int64_t bytes, Payload payload = Payload::tensor) {
  ServerTask t;
  t.id = id;
  t.kind = ServerTaskKind::transfer;
  t.from = from;
  t.to = to;
  t.bytes = bytes;
  t.payload = payload;
  if (from == ir::kHostSide) {
    t.gpu = to;
    t.stream = ir::kServerFromHostStream;
  } else if (to == ir::kHostSide) {
    t.gpu = from;
    t.stream = ir::kServerToHostStream;
  } else {
    t.gpu = from;
    t.stream = ir::kServerPeerStream;
  }
  t.label = "copy " + std::to_string(id);
  return t;
}

ServerTask compute(int32_t id, int32_t gpu, int64_t ns) {
  ServerTask t;
  t.id = id;
  t.gpu = gpu;
  t.duration_ns = ns;
  t.label = "compute " + std::to_string(id);
  return t;
}

ServerSchedule schedule_of(int32_t gpus, std::vector<ServerTask> tasks) {
  ServerSchedule s;
  s.server = "test";
  s.gpu_count = gpus;
  s.initial_bytes.assign(static_cast<size_t>(gpus), 0);
  s.tasks = std::move(tasks);
  return s;
}

// Harmony's server with no per-copy latency, so that times are bytes / rate exactly.
costmodel::ServerSpec no_latency(std::string_view name) {
  costmodel::ServerSpec s = costmodel::find_server(name);
  s.copy_latency_ns = 0;
  return s;
}

constexpr int64_t kBytes = 125'000'000;  // 10 ms at PCIe 3.0's 12.5 GB/s

}  // namespace

TEST_CASE("the server catalog: four sourced servers, validated") {
  const auto& servers = costmodel::builtin_servers().servers();
  REQUIRE(servers.size() == 4);
  CHECK(servers[0].name == "4x-gtx1080ti");
  CHECK(servers[0].gpu_count == 4);
  CHECK(servers[0].links.size() == 5);  // the switch's root link and four GPU links
  CHECK(costmodel::find_server("8x-a100-pcie").gpu_count == 8);
  CHECK(costmodel::find_server("dgx-a100").nvlink_of_gpu.size() == 8);
  CHECK(costmodel::find_server("8x-h100-sxm").gpu == "h100-sxm-80gb");
  CHECK_THROWS_WITH_AS(costmodel::find_server("dgx-z"), doctest::Contains("unknown server 'dgx-z'"), UnknownNameError);
  costmodel::ServerSpec bad = costmodel::find_server("4x-gtx1080ti");
  bad.links[2].bytes_per_ns = 0;
  CHECK_THROWS_WITH_AS(costmodel::validate_server(bad), "server '4x-gtx1080ti': field 'links[2].bytes_per_ns' = 0 must be > 0",
                       Error);
  bad = costmodel::find_server("4x-gtx1080ti");
  bad.gpu = "gtx9090";
  CHECK_THROWS_WITH_AS(costmodel::validate_server(bad), doctest::Contains("field 'gpu' = 'gtx9090'"), Error);
}

TEST_CASE("routes: host copies climb the PCIe tree through host memory, peer copies do not") {
  const costmodel::ServerSpec harmony = costmodel::find_server("4x-gtx1080ti");
  const costmodel::ServerRoutes routes(harmony);
  // Resources: 0 host memory; link 0 (switch0-host) 1 up / 2 down; link 1 (gpu0-switch0) 3 / 4; ...
  CHECK(routes.route(0, costmodel::kHostEndpoint) == std::vector<int32_t>{3, 1, 0});
  CHECK(routes.route(costmodel::kHostEndpoint, 2) == std::vector<int32_t>{0, 2, 8});
  CHECK(routes.route(0, 1) == std::vector<int32_t>{3, 6});  // inside the switch
  CHECK(routes.resource_name(1) == "switch0-host (up)");
  const costmodel::ServerRoutes pcie(costmodel::find_server("8x-a100-pcie"));
  // GPUs 0 and 2 sit behind different switches: up to the root complex and down, not host memory.
  CHECK(pcie.route(0, 2).size() == 4);
  const costmodel::ServerRoutes dgx(costmodel::find_server("dgx-a100"));
  CHECK(dgx.route(0, 5).size() == 2);  // NVLink out of GPU 0, into GPU 5
  CHECK(dgx.resource_name(dgx.route(0, 5)[0]) == "nvlink-gpu0 (up)");
  CHECK_THROWS_WITH_AS(routes.route(1, 1), "transfer from GPU 1 to itself", Error);
  CHECK_THROWS_WITH_AS(routes.route(0, 4), "transfer field 'to' = 4 must be -1 (host) or a GPU index below 4", Error);
}

TEST_CASE("max-min fair shares, by hand") {
  // Capacities 10 and 4; A crosses both, B the first, C the second. Resource 1 is the bottleneck
  // (4 / 2 = 2 each for A and C); B gets what A leaves of resource 0: 10 - 2 = 8.
  const std::vector<int32_t> a{0, 1}, b{0}, c{1};
  CHECK(sim::max_min_rates({10, 4}, {&a, &b, &c}) == std::vector<double>{2, 8, 2});
  // Three copies on one link of 12: 4 each.
  CHECK(sim::max_min_rates({12}, {&b, &b, &b}) == std::vector<double>{4, 4, 4});
}

TEST_CASE("two GPUs behind one switch swapping at once each take twice as long as one alone") {
  const costmodel::ServerSpec server = no_latency("4x-gtx1080ti");
  // Alone: 125 MB over 12.5 GB/s = 10 ms.
  const auto alone = sim::simulate_server(schedule_of(4, {copy(0, 0, ir::kHostSide, kBytes)}), server);
  CHECK(alone.step_time_ns == 10'000'000);
  // GPU 0 and GPU 1 swap out at once: both cross the switch's one root link (up) at 6.25 GB/s each.
  const auto both = sim::simulate_server(
      schedule_of(4, {copy(0, 0, ir::kHostSide, kBytes), copy(1, 1, ir::kHostSide, kBytes)}), server,
      {.record_spans = true});
  CHECK(both.step_time_ns == 20'000'000);
  CHECK(both.spans[0].end_ns == 20'000'000);
  CHECK(both.spans[1].end_ns == 20'000'000);
  CHECK(both.resource_bytes[1] == 2 * kBytes);   // the root link, up
  CHECK(both.resource_busy_ns[1] == 20'000'000);
  CHECK(both.swap_bytes[static_cast<size_t>(Payload::tensor)] == 2 * kBytes);
  // One out and one in at once: full duplex, each direction at full rate.
  const auto duplex = sim::simulate_server(
      schedule_of(4, {copy(0, 0, ir::kHostSide, kBytes), copy(1, ir::kHostSide, 1, kBytes)}), server);
  CHECK(duplex.step_time_ns == 10'000'000);
  // With the catalog's 10 µs copy latency: each copy is latency + bytes / its share.
  const auto latency = sim::simulate_server(
      schedule_of(4, {copy(0, 0, ir::kHostSide, kBytes), copy(1, 1, ir::kHostSide, kBytes)}),
      costmodel::find_server("4x-gtx1080ti"));
  CHECK(latency.step_time_ns == 10'000 + 20'000'000);
}

TEST_CASE("shares are recomputed when a copy ends") {
  // 125 MB and 62.5 MB at once through the root link: 6.25 GB/s each until the short one ends at
  // 62.5e6 / 6.25 = 10 ms; the long one has 62.5 MB left, alone at 12.5 GB/s: 5 ms more.
  const auto p = sim::simulate_server(
      schedule_of(4, {copy(0, 0, ir::kHostSide, kBytes), copy(1, 1, ir::kHostSide, kBytes / 2)}),
      no_latency("4x-gtx1080ti"), {.record_spans = true});
  CHECK(p.spans[1].end_ns == 10'000'000);
  CHECK(p.spans[0].end_ns == 15'000'000);
}

TEST_CASE("a peer swap uses the peer link, not the host") {
  const costmodel::ServerSpec server = no_latency("4x-gtx1080ti");
  // GPU 0 -> GPU 1 inside the switch while GPU 2 swaps to the host: no shared link, both 10 ms.
  const auto p = sim::simulate_server(schedule_of(4, {copy(0, 0, 1, kBytes, Payload::stashed_activations),
                                                      copy(1, 2, ir::kHostSide, kBytes)}),
                                      server);
  CHECK(p.step_time_ns == 10'000'000);
  CHECK(p.resource_bytes[0] == kBytes);  // host memory: GPU 2's swap only
  CHECK(p.resource_bytes[1] == kBytes);  // the root link: GPU 2's swap only
  CHECK(p.peer_bytes[static_cast<size_t>(Payload::stashed_activations)] == kBytes);
  CHECK(p.swap_bytes[static_cast<size_t>(Payload::stashed_activations)] == 0);
  CHECK(p.gpus[0].bytes_to_peers == kBytes);
  CHECK(p.gpus[1].bytes_from_peers == kBytes);
  CHECK(p.gpus[0].bytes_to_host == 0);
  // On a DGX A100 the same copy takes NVLink 3 at 300 GB/s x 380/450 = 253.33 GB/s:
  // ceil(125e6 / 253.333) = 493,422 ns.
  costmodel::ServerSpec dgx = costmodel::find_server("dgx-a100");
  dgx.copy_latency_ns = 0;
  const auto nv = sim::simulate_server(schedule_of(8, {copy(0, 0, 1, kBytes)}), dgx);
  CHECK(nv.step_time_ns == 493'422);
  CHECK(nv.resource_bytes[0] == 0);
}

TEST_CASE("compute waits on copies; memory is counted per GPU") {
  // GPU 0: swap in 125 MB (10 ms), then compute 3 ms that frees it. GPU 1 computes 4 ms from t=0.
  ServerTask in = copy(0, ir::kHostSide, 0, kBytes, Payload::weights);
  in.alloc_bytes = kBytes;
  ServerTask c = compute(1, 0, 3'000'000);
  c.waits = {0};
  c.free_bytes = kBytes;
  ServerSchedule s = schedule_of(2, {in, c, compute(2, 1, 4'000'000)});
  s.initial_bytes = {1000, 0};
  const auto p = sim::simulate_server(s, no_latency("4x-gtx1080ti"));
  CHECK(p.step_time_ns == 13'000'000);
  CHECK(p.gpus[0].compute_stall_ns == 10'000'000);
  CHECK(p.gpus[0].compute_busy_ns == 3'000'000);
  CHECK(p.gpus[1].compute_stall_ns == 0);
  CHECK(p.gpus[0].peak_bytes == kBytes + 1000);
  CHECK(p.compute_stall_ns == 10'000'000);
  CHECK_FALSE(p.oom);
  const auto tight = sim::simulate_server(s, no_latency("4x-gtx1080ti"), {.memory_limit_bytes = kBytes});
  CHECK(tight.oom);
  CHECK(tight.oom_message == "GPU 0: task 0 ('copy 0') takes it to 125001000 bytes, over the limit 125000000");
}

TEST_CASE("each GPU's host issues its tasks: issue costs, a sync, the launch queue") {
  // GPU 0: A (10 ns) issued in 4 ns, B (10 ns, the host waits for it) in 4, C (3 ns) in 2. GPU 1: D
  // (1 ns) issued in 20 by its own host. By hand: A issued [0, 4], runs [4, 14]; B issued [4, 8],
  // runs after A [14, 24], the host waits to 24; C issued [24, 26], runs [26, 29]. D runs [20, 21].
  auto issued = [](ServerTask t, int64_t ns, bool sync = false) {
    t.issue_ns = ns;
    t.host_sync = sync;
    return t;
  };
  ServerSchedule s = schedule_of(2, {issued(compute(0, 0, 10), 4), issued(compute(1, 0, 10), 4, true),
                                     issued(compute(2, 0, 3), 2), issued(compute(3, 1, 1), 20)});
  auto p = sim::simulate_server(s, no_latency("4x-gtx1080ti"), {.record_spans = true});
  CHECK(p.spans[0].start_ns == 4);
  CHECK(p.spans[1].start_ns == 14);
  CHECK(p.spans[2].start_ns == 26);
  CHECK(p.spans[3].start_ns == 20);
  CHECK(p.step_time_ns == 29);
  CHECK(p.gpus[0].host_busy_ns == 10);
  CHECK(p.gpus[0].host_end_ns == 26);
  CHECK(p.gpus[1].host_busy_ns == 20);
  CHECK(p.gpus[0].compute_stall_ns == 4 + 2);  // waiting for A's issue, then for C's

  // A launch queue of depth 1: X, Y, Z (10 ns each, issued in 1 ns). X issued [0, 1], runs [1, 11];
  // Y issued [1, 2] waits to start until 11, and the host, one launch outstanding, waits with it:
  // Z issued [11, 12], runs [21, 31]. Unbounded, the host is done at 3; the GPU's times are the same.
  s = schedule_of(1, {issued(compute(0, 0, 10), 1), issued(compute(1, 0, 10), 1), issued(compute(2, 0, 10), 1)});
  p = sim::simulate_server(s, no_latency("4x-gtx1080ti"));
  CHECK(p.step_time_ns == 31);
  CHECK(p.gpus[0].host_end_ns == 3);
  s.launch_queue_depth = 1;
  p = sim::simulate_server(s, no_latency("4x-gtx1080ti"));
  CHECK(p.step_time_ns == 31);
  CHECK(p.gpus[0].host_end_ns == 12);

  // A host slower than the GPU sets the step: 3 tasks of 1 ns issued in 10 ns each end at 31.
  s = schedule_of(1, {issued(compute(0, 0, 1), 10), issued(compute(1, 0, 1), 10), issued(compute(2, 0, 1), 10)});
  CHECK(sim::simulate_server(s, no_latency("4x-gtx1080ti")).step_time_ns == 31);
}

TEST_CASE("a bad server schedule names the task and the field") {
  ServerTask wrong_stream = copy(0, 0, ir::kHostSide, 10);
  wrong_stream.stream = ir::kServerFromHostStream;
  CHECK_THROWS_WITH_AS(
      sim::simulate_server(schedule_of(2, {wrong_stream}), no_latency("4x-gtx1080ti")),
      "task 0 ('copy 0'): field 'stream' = 2 must be the sender's to-host stream (1) for a copy to the host",
      ir::ServerScheduleError);
  ServerTask forward = compute(0, 0, 5);
  forward.waits = {1};
  CHECK_THROWS_WITH_AS(
      sim::simulate_server(schedule_of(2, {forward, compute(1, 0, 5)}), no_latency("4x-gtx1080ti")),
      "task 0 ('compute 0'): field 'waits' = 1 must be an earlier task", ir::ServerScheduleError);
  CHECK_THROWS_WITH_AS(sim::simulate_server(schedule_of(2, {copy(0, 0, 2, 10)}), no_latency("4x-gtx1080ti")),
                       "task 0 ('copy 0'): field 'to' = 2 must be -1 (host) or a GPU in [0, 2)",
                       ir::ServerScheduleError);
  CHECK_THROWS_WITH_AS(sim::simulate_server(schedule_of(8, {compute(0, 0, 1)}), no_latency("4x-gtx1080ti")),
                       "server schedule uses 8 GPUs; server '4x-gtx1080ti' has 4", ir::ServerScheduleError);
  CHECK_THROWS_WITH_AS(sim::simulate_server(schedule_of(1, {compute(0, 0, -1)}), no_latency("4x-gtx1080ti")),
                       "task 0 ('compute 0'): field 'duration_ns' = -1 must be >= 0",
                       ir::ServerScheduleError);
  ServerTask bad_issue = compute(0, 0, 1);
  bad_issue.issue_ns = -2;
  CHECK_THROWS_WITH_AS(
      sim::simulate_server(schedule_of(1, {bad_issue}), no_latency("4x-gtx1080ti")),
      "task 0 ('compute 0'): field 'issue_ns' = -2 must be >= 0, or -1 (not issued by the host)",
      ir::ServerScheduleError);
  ServerTask sync_unissued = compute(0, 0, 1);
  sync_unissued.host_sync = true;
  CHECK_THROWS_WITH_AS(
      sim::simulate_server(schedule_of(1, {sync_unissued}), no_latency("4x-gtx1080ti")),
      "task 0 ('compute 0'): field 'host_sync' = true must be false on a task the host does not "
      "issue (issue_ns -1)",
      ir::ServerScheduleError);
  ServerSchedule deep = schedule_of(1, {compute(0, 0, 1)});
  deep.launch_queue_depth = -1;
  CHECK_THROWS_WITH_AS(sim::simulate_server(deep, no_latency("4x-gtx1080ti")),
                       "server schedule: launch_queue_depth = -1 must be >= 0", ir::ServerScheduleError);
  ServerTask long_marker = compute(0, 0, 5);
  long_marker.stream = ir::kServerToHostStream;
  CHECK_THROWS_WITH_AS(
      sim::simulate_server(schedule_of(1, {long_marker}), no_latency("4x-gtx1080ti")),
      "task 0 ('compute 0'): field 'stream' = 1 must be the compute (0) or host CPU (5) stream for a "
      "compute task of > 0 ns (0 ns markers may sit on any stream)",
      ir::ServerScheduleError);
}

TEST_CASE("server schedule files round-trip; a bad one names the task and the field") {
  ServerTask in = copy(0, ir::kHostSide, 1, kBytes, Payload::weights);
  in.alloc_bytes = kBytes;
  ServerTask c = compute(1, 1, 3'000'000);
  c.waits = {0};
  c.free_bytes = kBytes;
  c.issue_ns = 7;
  c.host_sync = true;
  ServerSchedule s = schedule_of(2, {in, c});
  s.scheme = "test";
  s.samples_per_step = 8;
  s.launch_queue_depth = 16;
  const std::string text = io::server_schedule_to_json(s);
  const ServerSchedule back = io::server_schedule_from_json(text);
  CHECK(io::server_schedule_to_json(back) == text);
  CHECK(back.tasks[0].payload == Payload::weights);
  CHECK(back.tasks[1].waits == std::vector<int32_t>{0});
  CHECK(back.tasks[1].issue_ns == 7);
  CHECK(back.tasks[1].host_sync);
  CHECK(back.tasks[0].issue_ns == -1);
  CHECK(back.launch_queue_depth == 16);
  CHECK(sim::simulate_server(back, no_latency("4x-gtx1080ti")).step_time_ns == 13'000'000);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  CHECK_THROWS_WITH_AS(
      io::server_schedule_from_json(with("\"payload\": \"weights\"", "\"payload\": \"W\"")),
      doctest::Contains("task 0: field 'payload': unknown payload 'W'; valid: none, weights"), FormatError);
  CHECK_THROWS_WITH_AS(io::server_schedule_from_json(with("\"version\": 1", "\"version\": 7")),
                       "server schedule: unsupported version 7 (this build reads version 1)", FormatError);
  CHECK_THROWS_WITH_AS(io::server_schedule_from_json(with("\"bytes\": 125000000", "\"bytes\": -5")),
                       "task 0 ('copy 0'): field 'bytes' = -5 must be >= 0", ir::ServerScheduleError);
  CHECK_THROWS_WITH_AS(io::server_schedule_from_json(with("\"duration_ns\"", "\"duration\"")),
                       doctest::Contains("task 1"), FormatError);
  CHECK_THROWS_AS(io::server_schedule_from_json("{\"format\": \"mutwo-server-schedule\", "), FormatError);
}
