// Kineto replay: a PyTorch profiler trace replayed on the engine's host timeline reproduces the
// step it profiled (io/kineto_trace.hpp "Host timeline", policies/trace_replay.hpp).
//
// Expected figures of the real traces come from an independent Python script over the trace JSON
// (not part of the repo; /usr/bin/python3, json + gzip only): it picks the same ProfilerStep and
// top-level ops, computes the issue points, host times, syncs and queue-held launches by the rules
// in io/kineto_trace.hpp, and runs the host timeline in a dozen lines (host issues parts in
// order, a part starts at max(its issue end, its stream free), a host_sync op holds the host until
// it ends, a device sync until every stream is done; step = max(GPU end, host end)). Its figures:
//
//   trace                   profiled step   predicted (eager)   GPU time sum   host time sum
//   mi250_minitoy_train        9,288,291 ns       9,239,161 ns       149,042 ns    9,192,519 ns
//   sampled_training_rank0   622,928,000 ns     622,769,000 ns   305,603,000 ns  621,060,000 ns
//   v100_training_rank0       95,699,037 ns      97,119,038 ns    94,272,679 ns   31,150,224 ns
//
// The V100 step is GPU-bound: 64,548,813 ns of its launches and copies waited on a full launch
// queue (1,020 kernels pending) and are taken out of host time. The MI250 and sampled steps are
// host-bound. The sampled trace's GPU work runs on 5 streams (7, 23, 25, 84, 203; stream 84 holds
// 137,228,000 ns, the most of any).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "io/kineto_trace.hpp"
#include "io/trace_file.hpp"
#include "ir/graph_builder.hpp"
#include "policies/trace_replay.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"

using namespace mutwo;
using ir::Trace;
using Json = nlohmann::json;

namespace {

const std::filesystem::path kKineto = std::filesystem::path(MUTWO_TEST_FIXTURES) / "kineto";

sim::Prediction replay(const Trace& trace, sim::HostMode mode, const char* gpu = "a100-40gb") {
  const policies::TraceReplay r = policies::build_trace_replay(trace);
  const costmodel::MeasuredCostModel cost(
      {r.trace}, std::make_unique<costmodel::AnalyticCostModel>(costmodel::find_device(gpu)));
  sim::SimOptions options;
  options.host_mode = mode;
  return sim::simulate(r.schedule, cost, options);
}

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

double error(int64_t predicted, int64_t profiled) {
  return static_cast<double>(predicted - profiled) / static_cast<double>(profiled);
}

// Chrome-trace events of the hand-made traces: times in microseconds, one CPU thread (pid 1, tid 1).
Json step(int ts, int dur) {
  return {
      {"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#1"}, {"pid", 1}, {"tid", 1}, {"ts", ts},
      {"dur", dur}};
}
Json cpu_op(const char* name, int ts, int dur) {
  return {{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"pid", 1}, {"tid", 1}, {"ts", ts}, {"dur", dur}};
}
Json runtime(const char* name, int ts, int dur, int correlation) {
  return {{"ph", "X"},    {"cat", "cuda_runtime"},
          {"name", name}, {"pid", 1},
          {"tid", 1},     {"ts", ts},
          {"dur", dur},   {"args", {{"correlation", correlation}}}};
}
Json gpu(const char* name, int ts, int dur, int correlation, int stream = 7, const char* cat = "kernel") {
  return {{"ph", "X"},     {"cat", cat},
          {"name", name},  {"pid", 0},
          {"tid", stream}, {"ts", ts},
          {"dur", dur},    {"args", {{"correlation", correlation}, {"stream", stream}, {"device", 0}}}};
}

Trace import(const Json& events) {
  return io::import_kineto_trace(Json{{"traceEvents", events}}, "hand.json").trace;
}

}  // namespace

TEST_CASE("every shared GPU trace replays its own ProfilerStep within 5 %") {
  struct Case {
    const char* file;
    const char* gpu;
    int64_t profiled_ns, predicted_ns, gpu_ns, host_ns;
  };
  for (const Case& c :
       {Case{"mi250_minitoy_train.json.gz", "a100-40gb", 9288291, 9239161, 149042, 9192519},
        Case{"sampled_training_rank0.json.gz", "a100-40gb", 622928000, 622769000, 305603000, 621060000},
        Case{"v100_training_rank0.pt.trace.json.gz", "v100-32gb", 95699037, 97119038, 94272679, 31150224}}) {
    INFO(c.file);
    const Trace t = io::read_kineto_trace(kKineto / c.file).trace;
    CHECK(t.profiled_step_ns == c.profiled_ns);
    CHECK(sum(t.op_duration_ns) == c.gpu_ns);
    CHECK(sum(t.op_host_ns) == c.host_ns);
    const sim::Prediction eager = replay(t, sim::HostMode::eager, c.gpu);
    CHECK(eager.step_time_ns == c.predicted_ns);
    CHECK(std::fabs(error(eager.step_time_ns, t.profiled_step_ns)) <= 0.05);
    CHECK(eager.host_busy_ns == c.host_ns);
    // CUDA-graph replay takes the host out (a few hundred ns per instruction): the host-bound idle
    // time shrinks and the step cannot grow.
    const sim::Prediction graph = replay(t, sim::HostMode::cuda_graph, c.gpu);
    CHECK(graph.step_time_ns <= eager.step_time_ns);
    CHECK(graph.host_bound_idle_ns < eager.host_bound_idle_ns);
  }
}

TEST_CASE("without a host the replay is the GPU's critical path, stream by stream") {
  // Single-stream traces: the GPU time sum. The sampled trace's streams only order themselves (its
  // events name no waited-on stream): the busiest stream, 84, sets the step.
  const auto none = [](const char* file) {
    return replay(io::read_kineto_trace(kKineto / file).trace, sim::HostMode::none).step_time_ns;
  };
  CHECK(none("mi250_minitoy_train.json.gz") == 149042);
  CHECK(none("v100_training_rank0.pt.trace.json.gz") == 94272679);
  CHECK(none("sampled_training_rank0.json.gz") == 137228000);
}

TEST_CASE("the sampled trace's two multi-stream ops become one op per stream on extra compute streams") {
  const Trace t = io::read_kineto_trace(kKineto / "sampled_training_rank0.json.gz").trace;
  const policies::TraceReplay r = policies::build_trace_replay(t);
  // All2All_Pooled_Req (streams 7 and 84) and Optimizer.step#Shampoo.step (7 and 203): one extra op each.
  REQUIRE(r.trace.graph.ops.size() == 236 + 2);
  CHECK(r.trace.graph.ops[236].name.find(" [stream ") != std::string::npos);
  CHECK(sum(r.trace.op_duration_ns) == sum(t.op_duration_ns));
  CHECK(sum(r.trace.op_host_ns) == sum(t.op_host_ns));
  // Stream 7 has work from the most ops: the compute stream 0; 23, 25, 84, 203 in order of first use.
  std::set<int32_t> streams;
  for (const ir::Instruction& in : r.schedule.instructions) streams.insert(in.stream);
  CHECK(streams == std::set<int32_t>{0, 3, 4, 5, 6});
}

TEST_CASE("host-bound: three 100 us ops launching 10 us kernels take 3 x 100 us + the last kernel") {
  // Each op's launch ends at 1100, 1200, 1300 us (its issue point): host 100 us each. The GPU
  // waits on the host: kernels run at 100-110, 200-210, 300-310 us -> step 310 us against the
  // profiled 300 us (the last kernel runs past the ProfilerStep's end).
  const Trace t =
      import({step(1000, 300), cpu_op("aten::a", 1000, 100), runtime("cudaLaunchKernel", 1090, 10, 1),
              gpu("k_a", 1100, 10, 1), cpu_op("aten::b", 1100, 100), runtime("cudaLaunchKernel", 1190, 10, 2),
              gpu("k_b", 1200, 10, 2), cpu_op("aten::c", 1200, 100), runtime("cudaLaunchKernel", 1290, 10, 3),
              gpu("k_c", 1300, 10, 3)});
  CHECK(t.profiled_step_ns == 300000);
  CHECK(t.op_host_ns == std::vector<int64_t>{100000, 100000, 100000});
  CHECK(t.op_duration_ns == std::vector<int64_t>{10000, 10000, 10000});
  REQUIRE(t.op_streams.size() == 3);
  CHECK(t.op_streams[1] == std::vector<ir::StreamWork>{{7, 10000, 100000}});
  const sim::Prediction eager = replay(t, sim::HostMode::eager);
  CHECK(eager.step_time_ns == 310000);
  CHECK(eager.host_busy_ns == 300000);
  // The compute stream idles 100 + 90 + 90 us waiting for the host.
  CHECK(eager.host_bound_idle_ns == 280000);
  // No host: the three kernels back to back.
  CHECK(replay(t, sim::HostMode::none).step_time_ns == 30000);
}

TEST_CASE("GPU-bound: 10 us ops launching 100 us kernels, a queue-held launch, and a syncing .item()") {
  // Issue points 2010, 2020, 2030, 2034 us -> host 10, 10, 10, 4 us, the last op taking the 286 us
  // to the step's end. Taken out: aten::c's launch took 8 us with kernel b still queued (it
  // started at 2110): 8 - median 5 = 3 us; aten::item's device-to-pageable copy (2 us) and its
  // cudaStreamSynchronize (284 us) are syncs, all of them, and make aten::item host_sync.
  // Host: 10, 10, 7, 4 us. Replay: kernels 10-110, 110-210, 210-310 us, the copy 310-312 us, the
  // host waits for it: step 312 us = 10 + 300 + 2 (profiled 320 us).
  const Trace t = import(
      {step(2000, 320), cpu_op("aten::a", 2000, 10), runtime("cudaLaunchKernel", 2005, 5, 11),
       gpu("k_a", 2010, 100, 11), cpu_op("aten::b", 2010, 10), runtime("cudaLaunchKernel", 2015, 5, 12),
       gpu("k_b", 2110, 100, 12), cpu_op("aten::c", 2020, 10), runtime("cudaLaunchKernel", 2022, 8, 13),
       gpu("k_c", 2210, 100, 13), cpu_op("aten::item", 2030, 290), runtime("cudaMemcpyAsync", 2032, 2, 14),
       gpu("Memcpy DtoH (Device -> Pageable)", 2310, 2, 14, 7, "gpu_memcpy"),
       runtime("cudaStreamSynchronize", 2034, 284, 15)});
  CHECK(t.op_host_ns == std::vector<int64_t>{10000, 10000, 7000, 4000});
  CHECK(t.op_duration_ns == std::vector<int64_t>{100000, 100000, 100000, 2000});
  CHECK(t.graph.ops[3].attrs.contains("host_sync"));
  CHECK_FALSE(t.graph.ops[3].attrs.contains("device_sync"));
  CHECK_FALSE(t.graph.ops[2].attrs.contains("host_sync"));
  CHECK(replay(t, sim::HostMode::eager).step_time_ns == 312000);
  // CUDA graph: each of the 4 instructions costs the catalog's graph_kernel_ns g on the host; the
  // first kernel starts at g, the rest follow on the GPU: step g + 302 us.
  const int64_t g = costmodel::find_device("a100-40gb").host.graph_kernel_ns;
  CHECK(replay(t, sim::HostMode::cuda_graph).step_time_ns == g + 302000);
  CHECK(replay(t, sim::HostMode::none).step_time_ns == 302000);
}

TEST_CASE("a device-wide sync waits for every stream without holding back the kernels before it") {
  // aten::a: 100 us on stream 7; nccl:all_reduce: 50 us on stream 20 (extra compute stream 3),
  // concurrent; aten::sync's cudaDeviceSynchronize (90 us) follows, then aten::d's 20 us kernel.
  // Issue points 3010, 3020, 3112 (aten::sync launches nothing: its end), 3122 us -> host 10, 10,
  // 92 - 90 = 2, 10 + 3 (to the step's end) = 13 us. The sync marks the op of the last issue point
  // before it returned, the all-reduce (host_sync + device_sync); the replay gives that to a 0 ns
  // op on stream 0 that also waits for stream 3. Replay: a 10-110 us, all-reduce 20-70 us, the host
  // waits until 110 us, aten::sync issues 110-112, aten::d 112-125, its kernel 125-145 us.
  // Waiting for the all-reduce alone would have resumed the host at 70 us (step 130 us).
  const Trace t = import({step(3000, 125), cpu_op("aten::a", 3000, 10),
                          runtime("cudaLaunchKernel", 3005, 5, 21), gpu("k_a", 3010, 100, 21),
                          cpu_op("nccl:all_reduce", 3010, 10), runtime("cudaLaunchKernel", 3015, 5, 22),
                          gpu("ncclKernel", 3020, 50, 22, 20), cpu_op("aten::sync", 3020, 92),
                          runtime("cudaDeviceSynchronize", 3021, 90, 23), cpu_op("aten::d", 3112, 10),
                          runtime("cudaLaunchKernel", 3117, 5, 24), gpu("k_d", 3122, 20, 24)});
  CHECK(t.op_host_ns == std::vector<int64_t>{10000, 10000, 2000, 13000});
  CHECK(t.graph.ops[1].attrs.contains("device_sync"));
  CHECK(t.op_streams[1] == std::vector<ir::StreamWork>{{20, 50000, 10000}});
  const policies::TraceReplay r = policies::build_trace_replay(t);
  REQUIRE(r.trace.graph.ops.size() == 5);
  CHECK(r.trace.graph.ops[4].name == "nccl:all_reduce [device sync]");
  CHECK(r.trace.graph.ops[4].attrs.contains("host_sync"));
  CHECK_FALSE(r.trace.graph.ops[1].attrs.contains("host_sync"));
  CHECK(replay(t, sim::HostMode::eager).step_time_ns == 145000);
  // No host: stream 0 runs a (100 us) then d (20 us), stream 3 the all-reduce alongside.
  CHECK(replay(t, sim::HostMode::none).step_time_ns == 120000);
}

TEST_CASE("the host side survives a trace file and is checked on load") {
  const Trace t = io::read_kineto_trace(kKineto / "mi250_minitoy_train.json.gz").trace;
  const Trace back = io::trace_from_json(io::trace_to_json(t));
  CHECK(back.op_host_ns == t.op_host_ns);
  CHECK(back.op_streams == t.op_streams);
  CHECK(back.profiled_step_ns == 9288291);
  CHECK(replay(back, sim::HostMode::eager).step_time_ns == 9239161);

  Json doc = Json::parse(io::trace_to_json(t));
  auto rejected = [&](const Json& bad, const char* piece) {
    try {
      io::trace_from_json(bad);
      FAIL("accepted: ", piece);
    } catch (const FormatError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(piece) != std::string::npos);
    }
  };
  Json short_host = doc;
  short_host["op_host_ns"].erase(0);
  rejected(short_host, "field 'op_host_ns' has 15 values, the graph has 16 ops");
  Json negative = doc;
  negative["op_host_ns"][3] = -1;
  rejected(negative, "op 3: field 'op_host_ns' = -1 is outside [0, 1000000000000] ns");
  Json wrong_sum = doc;
  wrong_sum["op_streams"][2][0]["duration_ns"] = 1;
  rejected(wrong_sum, "op 2: field 'op_streams' sums to 1 ns of GPU time, 'op_duration_ns' says 24480");
  Json unknown_key = doc;
  unknown_key["op_streams"][2][0]["queue"] = 1;
  rejected(unknown_key, "op 2: field 'op_streams'[0]");
}

TEST_CASE("a GPU event whose stream is not an integer is rejected, naming the event and field") {
  Json k = gpu("k_a", 1100, 10, 1);
  k["args"]["stream"] = "seven";
  try {
    import({step(1000, 300), cpu_op("aten::a", 1000, 100), runtime("cudaLaunchKernel", 1090, 10, 1), k});
    FAIL("no FormatError");
  } catch (const FormatError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("hand.json: event 3 ('k_a'): field 'args.stream' = \"seven\", expected an integer") == 0);
  }
}

TEST_CASE("an op of a known kind split across two streams replays as pieces, not as ops the trace lacks") {
  // A mutwo trace's linear with part of its time on another stream: its piece kept the kind and no
  // inputs, and was refused as "op 'fc [stream 9]': field 'inputs' has 0 tensors".
  ir::GraphBuilder b("lin", ir::DType::f32, 1, 2);
  const ir::TensorId x = b.add_input("x", {2, 8}, ir::TensorRole::input, ir::FuseAxis::stack);
  const ir::TensorId w = b.add_weight("fc.weight", {4, 8}, ir::FuseAxis::stack);
  b.op(ir::OpKind::relu, "act", {b.op(ir::OpKind::linear, "fc", {x, w})});
  Trace t;
  t.graph = std::move(b).finish();
  t.op_duration_ns.assign(t.graph.ops.size(), 1000);
  t.op_streams.assign(t.graph.ops.size(), {{7, 1000, 0}});
  t.op_streams[0] = {{9, 400, 0}, {7, 600, 0}};
  const policies::TraceReplay r = policies::build_trace_replay(t);
  REQUIRE(r.trace.graph.ops.size() == t.graph.ops.size() + 1);
  const ir::Op& piece = r.trace.graph.ops.back();
  CHECK(piece.name == t.graph.ops[0].name + " [stream 9]");
  CHECK(piece.kind == ir::OpKind::opaque);
  CHECK(sum(r.trace.op_duration_ns) == sum(t.op_duration_ns));
}
