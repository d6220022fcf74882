// PyTorch profiler (Kineto) traces: real GPU traces and the CPU legacy traces of
// scripts/make-kineto-fixtures.py replayed into a measured Trace, a hand-written trace with
// [memory] events, and malformed input rejected with a FormatError naming the event and field.
//
// Expected values were computed from the fixture JSON by an independent Python script (not part
// of the repo): top-level CPU ops = "cpu_op" events (and Optimizer.* annotations) not enclosed in
// time by another on their pid/tid, with a slack of 0.5 us (1 us for whole-microsecond traces);
// GPU time = sum of round(dur * 1000) ns of kernels/memcpys/memsets whose "correlation" launch lies
// in the op; forward_of = the op enclosing the latest forward event with the backward op's
// "Sequence number". It agreed with the importer on every op of all five fixtures.
#include "io/kineto_trace.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include <nlohmann/json.hpp>

#include "support/error.hpp"

using namespace mutwo::ir;
using namespace mutwo::io;
using mutwo::FormatError;
using Json = nlohmann::json;

namespace {

const std::filesystem::path kKineto = std::filesystem::path(MUTWO_TEST_FIXTURES) / "kineto";

TraceImport load(const char* file) {
  TraceImport r = read_kineto_trace(kKineto / file);
  // Every import is a valid measured trace: the trace file's reader validates the graph.
  REQUIRE(r.trace.op_duration_ns.size() == r.trace.graph.ops.size());
  const Trace back = trace_from_json(trace_to_json(r.trace));
  CHECK(back.op_duration_ns == r.trace.op_duration_ns);
  CHECK(back.device == r.trace.device);
  return r;
}

bool has_warning(const TraceImport& r, const std::string& text) {
  return std::any_of(r.warnings.begin(), r.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

int64_t total_ns(const Trace& t) {
  return std::accumulate(t.op_duration_ns.begin(), t.op_duration_ns.end(), int64_t{0});
}

int count_forward_of(const Graph& g) {
  return static_cast<int>(
      std::count_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.forward_of != kNoId; }));
}

// Checks the message of the FormatError that importing `doc` throws contains every piece.
void check_rejected(const std::string& doc_text, std::initializer_list<const char*> pieces) {
  const Json doc = Json::parse(doc_text);
  try {
    import_kineto_trace(doc, "bad.json");
    FAIL("no FormatError for ", doc_text);
  } catch (const FormatError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("bad.json: ") == 0);
    for (const char* piece : pieces) CHECK(what.find(piece) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("MI250 trace: ops of the last complete step, GPU time per op, dims to bytes, backward pairing") {
  const TraceImport r = load("mi250_minitoy_train.json.gz");
  const Graph& g = r.trace.graph;
  // ProfilerStep#2 is the 49 us tail cut by profiler.stop() and holds no backward op.
  CHECK(has_warning(r,
                    "imported ProfilerStep#1 (9.288 ms), the last of 2 ProfilerStep annotations that holds "
                    "backward ops"));
  CHECK(r.trace.device == "AMD Radeon Graphics");  // deviceProperties[id 2]: the kernels' "device"
  REQUIRE(g.ops.size() == 16);                     // 9 forward, 6 backward, 1 optimizer
  CHECK(g.ops[2].name == "aten::linear");
  // Its launches (correlation 118, 121) ran kernels of 6.88 us + 17.6 us.
  CHECK(r.trace.op_duration_ns[2] == 6880 + 17600);
  // Input Dims [5,128], [128,128], [128], all float: (640 + 16384 + 128) * 4 B.
  CHECK(g.ops[2].bytes_read == (640 + 16384 + 128) * 4);
  CHECK(std::get<std::string>(g.ops[2].attrs.at("input_shapes")) ==
        "float[5, 128], float[128, 128], float[128]");
  CHECK(g.ops[8].name == "aten::ones_like");
  CHECK(g.ops[8].bytes_read == 4);  // a 0-d float tensor: Input Dims [] with type "float"
  CHECK(g.ops[6].bytes_read == 0);  // aten::broadcast_tensors reads a TensorList: no element type
  CHECK(has_warning(r, "1 tensor-list inputs have no element type"));
  // Sequence numbers: TBackward0 4 and AddmmBackward0 5 were created inside aten::linear (aten::t
  // and aten::addmm), ReluBackward0 6 by aten::relu, MseLossBackward0 7 by aten::mse_loss.
  CHECK(g.ops[13].name == "autograd::engine::evaluate_function: TBackward0");
  CHECK(g.ops[13].forward_of == 2);
  CHECK(g.ops[11].forward_of == 2);
  CHECK(g.ops[10].forward_of == 3);
  CHECK(g.ops[9].forward_of == 7);
  CHECK(g.ops[12].forward_of == kNoId);  // AccumulateGrad has no sequence number
  for (int i = 9; i <= 14; ++i) CHECK(g.ops[static_cast<size_t>(i)].kind == OpKind::opaque_backward);
  CHECK(g.ops[15].name == "Optimizer.step#SGD.step");
  CHECK(g.ops[15].kind == OpKind::sgd_step);
  CHECK(g.ops[15].phase == Phase::optimizer);
  CHECK(r.trace.op_duration_ns[15] == 8481);  // one multi_tensor_apply kernel of 8.481 us
  CHECK(r.trace.op_duration_ns[0] == 0);      // aten::randn on the host launches nothing
  CHECK(total_ns(r.trace) == 149042);
  CHECK(has_warning(r, "4 of 6 backward ops paired"));
  CHECK(has_warning(r, "no [memory] events"));
  CHECK(has_warning(r, "no dataflow edges"));
  // Without [memory] events no tensor has bytes: nothing is invented.
  for (const Tensor& t : g.tensors) CHECK(t.bytes == 0);
}

TEST_CASE("V100 DDP trace: device name, 1056 ops of ProfilerStep#105, kernel sums and forward_of") {
  const TraceImport r = load("v100_training_rank0.pt.trace.json.gz");
  const Graph& g = r.trace.graph;
  CHECK(r.trace.device == "Tesla V100-SXM2-32GB");
  CHECK(has_warning(r, "imported ProfilerStep#105"));
  REQUIRE(g.ops.size() == 1056);
  CHECK(g.ops[168].name == "aten::conv2d");
  CHECK(r.trace.op_duration_ns[168] == 588093);
  CHECK(g.ops[414].name == "autograd::engine::evaluate_function: ConvolutionBackward0");
  CHECK(g.ops[414].forward_of == 388);
  CHECK(g.ops[388].name == "aten::conv2d");
  CHECK(count_forward_of(g) == 181);  // of 342 backward ops; the 161 AccumulateGrad have no number
  CHECK(has_warning(r, "181 of 342 backward ops paired"));
  CHECK(g.ops[1055].kind == OpKind::sgd_step);
  CHECK(r.trace.op_duration_ns[1055] == 1104058);
  CHECK(total_ns(r.trace) == 94272679);
  CHECK(has_warning(r, "no op has \"Input Dims\""));
  CHECK(has_warning(r, "no [memory] events"));
}

TEST_CASE("sampled trace: input dims of every dtype, unknown optimizers, no device name") {
  const TraceImport r = load("sampled_training_rank0.json.gz");
  const Graph& g = r.trace.graph;
  REQUIRE(g.ops.size() == 236);
  CHECK(r.trace.device.empty());
  CHECK(has_warning(r, "no deviceProperties name for GPU 0"));
  CHECK(g.ops[1].name == "fbgemm::permute_2D_sparse_data");
  CHECK(g.ops[1].bytes_read == 268032124);
  CHECK(count_forward_of(g) == 46);
  CHECK(g.ops[188].name == "Optimizer.step#Shampoo.step");
  CHECK(g.ops[188].kind == OpKind::opaque);
  CHECK(has_warning(r, "optimizer 'Shampoo' has no mutwo kind"));
}

TEST_CASE("legacy CPU traces of Debian's torch 1.13: CPU durations, optimizer kinds, what is missing") {
  SUBCASE("MLP with SGD, plain JSON") {
    const TraceImport r = load("cpu_mlp_sgd_legacy.json");
    const Graph& g = r.trace.graph;
    CHECK(r.trace.device == "cpu");
    CHECK(has_warning(r, "a legacy trace"));
    CHECK(has_warning(r, "imported ProfilerStep#2"));
    CHECK(has_warning(r, "op durations are the CPU time"));
    REQUIRE(g.ops.size() == 21);
    CHECK(g.ops[3].name == "aten::linear");
    CHECK(r.trace.op_duration_ns[3] == 8000);  // "dur": 8 (us)
    CHECK(g.ops[20].kind == OpKind::sgd_step);
    CHECK(r.trace.op_duration_ns[20] == 35000);
    CHECK(g.ops[8].kind == OpKind::opaque_backward);
    CHECK(count_forward_of(g) == 0);  // no sequence numbers in a legacy trace
    CHECK(has_warning(r, "0 of 11 backward ops paired"));
    CHECK(has_warning(r, "no [memory] events"));
  }
  SUBCASE("CNN with Adam, gzipped") {
    const TraceImport r = load("cpu_cnn_adam_legacy.json.gz");
    const Graph& g = r.trace.graph;
    REQUIRE(g.ops.size() == 24);
    CHECK(g.ops[3].name == "aten::conv2d");
    CHECK(r.trace.op_duration_ns[3] == 50000);
    CHECK(g.ops[19].name == "autograd::engine::evaluate_function: ConvolutionBackward0");
    CHECK(g.ops[23].kind == OpKind::adam_step);
    CHECK(r.trace.op_duration_ns[23] == 138000);
  }
}

TEST_CASE("[memory] events become tensors: blocks, workspace, pre-step inputs, resident bytes") {
  // One CPU step: linear, relu, ReluBackward0, AddmmBackward0, each 10 us.
  const Json doc = Json::parse(R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 10, "dur": 10,
     "args": {"Input Dims": [[8, 16], [32, 16], [32]], "Input type": ["float", "float", "float"],
              "Sequence number": 3}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 30, "dur": 10,
     "args": {"Sequence number": 4}},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: ReluBackward0", "pid": 1,
     "tid": 1, "ts": 50, "dur": 10, "args": {"Sequence number": 4, "Fwd thread id": 1}},
    {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 1,
     "tid": 1, "ts": 70, "dur": 10, "args": {"Sequence number": 3, "Fwd thread id": 1}},
    {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": -5, "args": {"Addr": 9, "Bytes": 8}},
    {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 12,
     "args": {"Addr": 1000, "Bytes": 1024, "Total Allocated": 5024, "Device Type": 0, "Device Id": -1}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 14, "args": {"Addr": 2000, "Bytes": 512}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 15, "args": {"Addr": 2000, "Bytes": -512}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 32, "args": {"Addr": 3000, "Bytes": 1024}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 33,
     "args": {"Addr": 3000, "Bytes": 4096, "Device Type": 1, "Device Id": 0}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 55, "args": {"Addr": 3000, "Bytes": -1024}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 56, "args": {"Addr": 4000, "Bytes": 2048}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 75, "args": {"Addr": 1000, "Bytes": -1024}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 76, "args": {"Addr": 500, "Bytes": -256}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 90, "args": {"Addr": 5000, "Bytes": 64}}
  ]})");
  REQUIRE(is_kineto_document(doc));
  const TraceImport r = import_kineto_trace(doc, "hand.json");
  const Graph& g = r.trace.graph;
  validate(g);
  REQUIRE(g.ops.size() == 4);
  CHECK(r.trace.device == "cpu");
  CHECK(r.trace.op_duration_ns == std::vector<int64_t>{10000, 10000, 10000, 10000});
  CHECK(g.ops[0].bytes_read == (128 + 512 + 32) * 4);
  CHECK(g.ops[2].forward_of == 1);  // sequence number 4: aten::relu
  CHECK(g.ops[3].forward_of == 0);  // sequence number 3: aten::linear
  CHECK(g.ops[2].phase == Phase::backward);
  // Tensors: 4 order links (0 B), then blocks in the order they close.
  REQUIRE(g.tensors.size() == 10);
  for (int i = 0; i < 4; ++i) CHECK(g.tensors[static_cast<size_t>(i)].bytes == 0);
  auto check_tensor = [&](TensorId id, int64_t bytes, TensorRole role, OpId producer,
                          std::vector<OpId> readers) {
    const Tensor& t = g.tensor(id);
    INFO("tensor ", id, " '", t.name, "'");
    CHECK(t.bytes == bytes);
    CHECK(t.shape == std::vector<int64_t>{bytes});
    CHECK(t.dtype == DType::u8);
    CHECK(t.role == role);
    CHECK(t.producer == producer);
    CHECK(t.consumers == readers);
  };
  check_tensor(4, 1024, TensorRole::activation, 1, {2});  // relu's block, freed in ReluBackward0
  check_tensor(5, 1024, TensorRole::activation, 0, {3});  // linear's block, freed in AddmmBackward0
  check_tensor(6, 256, TensorRole::input, kNoId, {3});    // freed in the step, allocated before it
  check_tensor(7, 2048, TensorRole::temporary, 2, {3});   // never freed: read by the last op
  check_tensor(8, 64, TensorRole::temporary, 3, {});      // allocated after every op: charged to the last
  // Total Allocated 5024 after the first 1024 B allocation: 4000 B before the step, of which the
  // 256 B pre-step block is a tensor of its own.
  check_tensor(9, 4000 - 256, TensorRole::weight, kNoId, {});
  CHECK(g.ops[0].workspace_bytes == 512);  // allocated and freed inside aten::linear
  CHECK(g.ops[0].bytes_written == 1024);
  CHECK(g.ops[2].bytes_written == 2048);
  CHECK(has_warning(r, "9 [memory] events of the CPU device (1 of other devices ignored)"));
  CHECK(has_warning(r, "3744 B resident before the step"));
  CHECK_FALSE(has_warning(r, "no [memory] events"));
}

TEST_CASE("content-based detection") {
  CHECK(is_kineto_document(Json::parse(R"({"traceEvents": []})")));
  CHECK(is_kineto_document(Json::parse(R"([{"name": "aten::mm", "ph": "X", "ts": 1, "dur": 2}])")));
  CHECK_FALSE(is_kineto_document(Json::parse(R"({"format": "mutwo-trace", "version": 1})")));
  CHECK_FALSE(is_kineto_document(Json::parse(R"([1, 2])")));
  CHECK_FALSE(is_kineto_document(Json::parse(R"("traceEvents")")));
}

TEST_CASE("malformed traces are rejected with the event, the field and the value") {
  const std::string op = R"("ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1)";
  check_rejected(R"({"format": "mutwo-trace"})", {"not a PyTorch profiler trace"});
  check_rejected(R"({"traceEvents": []})", {"field 'traceEvents' is empty"});
  check_rejected(R"({"traceEvents": [{)" + op + R"(, "ts": 1}]})",
                 {"event 0 ('aten::mm')", "field 'dur' is missing"});
  check_rejected(R"({"traceEvents": [{)" + op + R"(, "ts": 1, "dur": -3}]})",
                 {"event 0", "'dur' = -3, must be >= 0"});
  check_rejected(R"({"traceEvents": [{)" + op + R"(, "ts": "soon", "dur": 2}]})",
                 {"field 'ts' = \"soon\", expected a number"});
  check_rejected(R"({"traceEvents": [{"ph": "M", "name": "x"}, 7]})", {"event 1: expected an object"});
  check_rejected(R"({"traceEvents": [{"name": "aten::mm", "ts": 1}]})",
                 {"event 0 ('aten::mm')", "field 'ph'"});
  check_rejected(R"({"traceEvents": [{)" + op + R"(, "ts": 1, "dur": 2, "args": {"Input Dims": 5}}]})",
                 {"field 'args.Input Dims' = 5, expected a list"});
  check_rejected(R"({"traceEvents": [{)" + op + R"(, "ts": 1, "dur": 2, "args": {"Sequence number": "x"}}]})",
                 {"field 'args.Sequence number' = \"x\", expected an integer"});
  check_rejected(R"({"traceEvents": [{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1,
                 "args": {"Addr": 5}}]})",
                 {"event 0 ('[memory]')", "field 'args.Bytes' is missing"});
  check_rejected(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1,
                 "dur": 2, "args": {}}]})",
                 {"field 'args.correlation' is missing"});
  check_rejected(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1,
                 "dur": 2, "args": {"correlation": 3}}]})",
                 {"no CPU op events"});
}

TEST_CASE("a file that is not JSON, or truncated, names the file and the byte") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mutwo_test_kineto";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / "truncated.json";
  {
    std::ofstream out(path, std::ios::binary);
    out << R"({"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1, "du)";
  }
  try {
    read_kineto_trace(path);
    FAIL("no FormatError");
  } catch (const FormatError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("truncated.json: invalid JSON at byte") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}
