// Trace files: exact round trip of every field, and malformed files rejected with typed errors that
// name the op/tensor and the field.
#include "io/trace_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "ir/graph_builder.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;
using mutwo::Error;
using mutwo::FormatError;
using mutwo::GraphError;

namespace {

const std::filesystem::path kFixtures = MUTWO_TEST_FIXTURES;

// x[4,8] -> linear(8->16) -> relu -> layernorm -> linear(16->5) -> cross_entropy(labels[4]).
Graph small_classifier() {
  GraphBuilder b("small-classifier", DType::f32, 1, 4);
  TensorId x = b.add_input("x", {4, 8}, TensorRole::input, FuseAxis::stack);
  TensorId labels = b.add_input("labels", {4}, TensorRole::label, FuseAxis::stack, DType::i64);
  TensorId w1 = b.add_weight("fc1.weight", {16, 8}, FuseAxis::stack);
  TensorId b1 = b.add_weight("fc1.bias", {16}, FuseAxis::stack);
  TensorId gamma = b.add_weight("ln.weight", {16}, FuseAxis::stack);
  TensorId beta = b.add_weight("ln.bias", {16}, FuseAxis::stack);
  TensorId w2 = b.add_weight("fc2.weight", {5, 16}, FuseAxis::stack);
  TensorId h = b.op(OpKind::linear, "fc1", {x, w1, b1});
  TensorId a = b.op(OpKind::relu, "relu", {h});
  TensorId n = b.op(OpKind::layernorm, "ln", {a, gamma, beta}, {{"eps", 1e-5}});
  TensorId logits = b.op(OpKind::linear, "fc2", {n, w2});
  b.op(OpKind::cross_entropy, "loss", {logits, labels});
  return std::move(b).finish();
}

// Every field of every tensor and op, producer/consumer links (rebuilt by link()) included.
void check_same_graph(const Graph& a, const Graph& b) {
  CHECK(a.name == b.name);
  CHECK(a.width == b.width);
  CHECK(a.batch_size == b.batch_size);
  REQUIRE(a.tensors.size() == b.tensors.size());
  REQUIRE(a.ops.size() == b.ops.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor& x = a.tensors[i];
    const Tensor& y = b.tensors[i];
    INFO("tensor ", i, " '", x.name, "'");
    CHECK(x.id == y.id);
    CHECK(x.name == y.name);
    CHECK(x.shape == y.shape);
    CHECK(x.dtype == y.dtype);
    CHECK(x.bytes == y.bytes);
    CHECK(x.role == y.role);
    CHECK(x.producer == y.producer);
    CHECK(x.consumers == y.consumers);
    CHECK(x.width == y.width);
  }
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const Op& x = a.ops[i];
    const Op& y = b.ops[i];
    INFO("op ", i, " '", x.name, "'");
    CHECK(x.id == y.id);
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.phase == y.phase);
    CHECK(x.inputs == y.inputs);
    CHECK(x.outputs == y.outputs);
    CHECK(x.attrs == y.attrs);  // variant equality: an int64 1 differs from a double 1.0
    CHECK(x.flops == y.flops);
    CHECK(x.bytes_read == y.bytes_read);
    CHECK(x.bytes_written == y.bytes_written);
    CHECK(x.workspace_bytes == y.workspace_bytes);
    CHECK(x.forward_of == y.forward_of);
    CHECK(x.recomputable == y.recomputable);
    CHECK(x.width == y.width);
  }
}

void check_round_trip(const Trace& trace) {
  const std::string text = trace_to_json(trace);
  Trace back = trace_from_json(text);
  check_same_graph(trace.graph, back.graph);
  CHECK(back.device == trace.device);
  CHECK(back.op_duration_ns == trace.op_duration_ns);
  CHECK(trace_to_json(back) == text);  // write(read(write(g))) == write(g)
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("a hand-built training step with measured durations round-trips exactly") {
  OptimizerConfig adam;
  adam.kind = OptimizerKind::adamw;
  adam.lr = {3e-4};
  adam.weight_decay = {0.01};
  Trace trace;
  trace.graph = build_training_step(small_classifier(), adam);
  trace.device = "H100-SXM-80GB";
  for (const Op& op : trace.graph.ops) trace.op_duration_ns.push_back(1000 + 37 * op.id);  // distinct per op
  // Attribute types the JSON must keep apart: 1.0 stays a double, [1.0, 2.0] stays doubles,
  // [] stays an (empty) list of integers, a string stays a string.
  trace.graph.ops[0].attrs["scale"] = 1.0;
  trace.graph.ops[0].attrs["per_model"] = std::vector<double>{1.0, 2.0};
  trace.graph.ops[0].attrs["empty"] = std::vector<int64_t>{};
  trace.graph.ops[0].attrs["tag"] = std::string("fc1 \"quoted\" \u00b5s");
  trace.graph.ops[0].attrs["big"] = int64_t{9'007'199'254'740'993};  // 2^53 + 1: not exact as a double
  for (Op& op : trace.graph.ops) {  // a backward op carries its forward's attributes
    if (op.forward_of != 0) continue;
    for (const auto& [key, value] : trace.graph.ops[0].attrs) op.attrs.insert_or_assign(key, value);
  }
  validate(trace.graph);

  // 5 forward ops (fc1, relu, ln, fc2, loss) plus backward and 5 adamw steps (one per weight).
  CHECK(trace.graph.ops.size() > 10);
  int optimizer_ops = 0;
  for (const Op& op : trace.graph.ops) optimizer_ops += op.phase == Phase::optimizer;
  CHECK(optimizer_ops == 5);

  check_round_trip(trace);
  Trace back = trace_from_json(trace_to_json(trace));
  const Attributes& attrs = back.graph.ops[0].attrs;
  CHECK(std::holds_alternative<double>(attrs.at("scale")));
  CHECK(std::get<std::vector<double>>(attrs.at("per_model")) == std::vector<double>{1.0, 2.0});
  CHECK(std::holds_alternative<std::vector<int64_t>>(attrs.at("empty")));
  CHECK(std::get<int64_t>(attrs.at("big")) == 9'007'199'254'740'993);
  // ln eps: 1e-5 is not exactly representable; the shortest round-trip text reads back bit-exact.
  CHECK(std::get<double>(back.graph.ops[2].attrs.at("eps")) == 1e-5);
  CHECK(back.op_duration_ns.back() == 1000 + 37 * static_cast<int64_t>(back.graph.ops.size() - 1));
}

TEST_CASE("the JSON layout names enums and leaves optional fields out") {
  Trace trace;
  trace.graph = small_classifier();
  const std::string text = trace_to_json(trace);
  CHECK(text.find("\"format\": \"mutwo-trace\"") != std::string::npos);
  CHECK(text.find("\"version\": 1") != std::string::npos);
  CHECK(text.find("\"dtype\": \"int64\"") != std::string::npos);  // labels
  CHECK(text.find("\"role\": \"label\"") != std::string::npos);
  CHECK(text.find("\"kind\": \"layernorm\"") != std::string::npos);
  CHECK(text.find("\"phase\": \"forward\"") != std::string::npos);
  CHECK(text.find("\"eps\": 1e-05") != std::string::npos);
  // No durations measured: neither "device" nor "op_duration_ns" is written, producers never are.
  CHECK(text.find("op_duration_ns") == std::string::npos);
  CHECK(text.find("\"device\"") == std::string::npos);
  CHECK(text.find("producer") == std::string::npos);
  CHECK(text.find("consumers") == std::string::npos);
  check_round_trip(trace);
}

TEST_CASE("every zoo model that builds round-trips, forward and training step") {
  int built = 0;
  for (const ModelInfo& info : builtin_models().models()) {
    ModelConfig config;
    config.batch_size = 2;
    Graph forward;
    try {
      forward = build_model(info.name, config);
    } catch (const Error& e) {
      MESSAGE("skipping ", info.name, ": ", e.what());
      continue;
    }
    ++built;
    INFO("model ", info.name);
    Trace fwd;
    fwd.graph = forward;
    check_round_trip(fwd);
    Trace step;
    try {
      step.graph = build_training_step(forward, OptimizerConfig{});
    } catch (const Error& e) {
      MESSAGE("skipping the training step of ", info.name, ": ", e.what());
      continue;
    }
    step.device = "A100-SXM4-40GB";
    step.op_duration_ns.assign(step.graph.ops.size(), 12345);
    check_round_trip(step);
  }
  // The zoo registers 12 models (BERT x2, GPT-2 x2, ViT x2, ResNet x2, MobileNetV2, DLRM ...).
  CHECK(built >= 1);
}

TEST_CASE("write_trace then read_trace gives the same trace and leaves no temporary file") {
  const auto dir = std::filesystem::temp_directory_path() / "mutwo-test-trace-file";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Trace trace;
  trace.graph = small_classifier();
  trace.device = "cpu";
  trace.op_duration_ns = {10, 20, 30, 40, 50};
  write_trace(trace, dir / "small.json");
  Trace back = read_trace(dir / "small.json");
  check_same_graph(trace.graph, back.graph);
  CHECK(back.op_duration_ns == std::vector<int64_t>{10, 20, 30, 40, 50});
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++files;
  CHECK(files == 1);  // the temp file was renamed onto small.json
  CHECK(slurp(dir / "small.json") == trace_to_json(trace));

  // A write into a missing directory fails with a mutwo error and creates nothing.
  CHECK_THROWS_WITH_AS(write_trace(trace, dir / "missing" / "x.json"),
                       doctest::Contains("cannot write trace file"), Error);
  CHECK_FALSE(std::filesystem::exists(dir / "missing"));
  // Reading a missing file names it.
  CHECK_THROWS_WITH_AS(read_trace(dir / "nope.json"), doctest::Contains("nope.json"), Error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the valid fixture reads with its measured durations") {
  Trace t = read_trace(kFixtures / "traces" / "tiny_relu.json");
  CHECK(t.graph.name == "tiny-relu");
  CHECK(t.device == "H100-SXM-80GB");
  CHECK(t.op_duration_ns == std::vector<int64_t>{2500});
  CHECK(t.graph.tensor(1).producer == 0);  // rebuilt by link(), never stored
  CHECK(t.graph.tensor(0).consumers == std::vector<OpId>{0});
}

namespace {
enum class Expect { format, graph };
struct Malformed {
  const char* file;
  Expect type;
  const char* message;  // a part of the error that names the op/tensor and the field
};
}  // namespace

TEST_CASE("malformed traces throw the right error naming the op or tensor and the field") {
  const std::vector<Malformed> cases = {
      {"truncated.json", Expect::format, "invalid JSON at byte 301"},  // file cut after 300 bytes
      {"empty.json", Expect::format, "invalid JSON at byte 1"},
      {"not_object.json", Expect::format, "a trace must be a JSON object, got array"},
      {"unknown_version.json", Expect::format, "unsupported trace version 7; this mutwo reads version 1"},
      {"wrong_format.json", Expect::format,
       "not a mutwo trace: field 'format' is \"chrome-trace\", expected \"mutwo-trace\""},
      {"missing_format.json", Expect::format, "trace: missing field 'format'"},
      {"dangling_tensor_id.json", Expect::graph,
       "op 0 'relu': field 'inputs' refers to tensor 5 which does not exist"},
      {"cycle.json", Expect::graph,
       "op 0 'relu': input tensor 2 'z' is produced by op 1, later in program order"},
      {"negative_size.json", Expect::graph, "tensor 0 'x': field 'shape' has negative dimension -2"},
      {"bytes_mismatch.json", Expect::graph, "tensor 1 'y': field 'bytes' = 20 does not match shape [2,3]"},
      {"duplicate_tensor_id.json", Expect::graph, "tensor at position 1 has field 'id' = 0"},
      {"duplicate_op_id.json", Expect::graph, "op at position 1 has field 'id' = 0"},
      {"unknown_op_kind.json", Expect::format, "op 0: field 'kind': unknown op kind 'relu9'; valid: linear"},
      {"unknown_phase.json", Expect::format, "op 0: field 'phase': unknown phase 'sideways'"},
      {"missing_field.json", Expect::format, "tensor 1: missing field 'dtype'"},
      {"wrong_type.json", Expect::format, "op 0: field 'flops' must be an integer, got string"},
      {"unknown_field.json", Expect::format, "op 0: unknown field 'flop'"},
      {"durations_mismatch.json", Expect::format,
       "trace: field 'op_duration_ns' has 2 durations, the graph has 1 ops"},
      {"negative_duration.json", Expect::format,
       "op 0: field 'op_duration_ns' = -5 is outside [0, 1000000000000] ns"},
      // 2^62 ns an op: 152 of them summed to 0 ns per step and passed --check.
      {"huge_duration.json", Expect::format,
       "op 0: field 'op_duration_ns' = 4611686018427387904 is outside [0, 1000000000000] ns"},
      {"zero_durations.json", Expect::format,
       "trace: field 'op_duration_ns' is 0 ns for all 1 ops: nothing was measured"},
      {"unknown_dtype.json", Expect::format, "tensor 0: field 'dtype': unknown dtype 'fp8'; valid: fp32"},
      {"unknown_role.json", Expect::format, "tensor 1: field 'role': unknown tensor role 'scratch'"},
      {"wrong_phase_for_kind.json", Expect::graph, "op 0 'relu': field 'phase' = backward but kind 'relu'"},
      {"bad_attr.json", Expect::format,
       "op 0: attribute 'inplace' must be an integer, a number, a string or an "
       "array of numbers, got boolean"},
      // Sizes from input are checked (tests/test_checked_sizes.cpp).
      {"overflow_shape.json", Expect::graph,
       "tensor 0 'x': field 'shape' [1099511627776,1099511627776] of fp32: its size overflows 64-bit "
       "integers"},
      {"huge_tensor.json", Expect::graph, "tensor 0 'x': field 'bytes' = 4503599627370496 exceeds"},
      {"overflow_flops.json", Expect::graph, "op 'fc': FLOPs: 2 x 16777216 x 4194304 x 4194304 overflows"},
  };
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(kFixtures / "malformed"))
    ++files;
  CHECK(files == static_cast<int>(cases.size()));  // every fixture on disk is asserted here

  for (const Malformed& c : cases) {
    const auto path = kFixtures / "malformed" / c.file;
    INFO("fixture ", std::string(c.file));
    REQUIRE(std::filesystem::exists(path));
    // read_trace prefixes the path; the text-level parser gives the same message without it.
    const std::string with_path = path.string() + ": " + c.message;
    if (c.type == Expect::format) {
      CHECK_THROWS_WITH_AS(read_trace(path), doctest::Contains(with_path.c_str()), FormatError);
      CHECK_THROWS_WITH_AS(trace_from_json(slurp(path)), doctest::Contains(c.message), FormatError);
    } else {
      CHECK_THROWS_WITH_AS(read_trace(path), doctest::Contains(with_path.c_str()), GraphError);
      CHECK_THROWS_WITH_AS(trace_from_json(slurp(path)), doctest::Contains(c.message), GraphError);
    }
  }
}

TEST_CASE("a non-finite attribute cannot be written, and writing it leaves no file") {
  Trace trace;
  trace.graph = small_classifier();
  trace.graph.ops[2].attrs["eps"] = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH_AS(trace_to_json(trace),
                       doctest::Contains("op 2: attribute 'eps' = inf cannot be written"), FormatError);
  const auto path = std::filesystem::temp_directory_path() / "mutwo-test-nonfinite.json";
  std::filesystem::remove(path);
  CHECK_THROWS_AS(write_trace(trace, path), FormatError);
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a key given twice in one object of a trace is refused, not read as its last value") {
  // An edit adding "device" beside the one it meant to change ran on the second GPU named, unsaid.
  Trace trace;
  trace.graph = small_classifier();
  std::string text = trace_to_json(trace);
  const std::string format = "\"format\": \"mutwo-trace\",";
  REQUIRE(text.find(format) != std::string::npos);
  text.insert(text.find(format), format);
  CHECK_THROWS_WITH_AS(trace_from_json(text), "key 'format' is given twice in one object: give each key once",
                       FormatError);
  CHECK_NOTHROW(trace_from_json(trace_to_json(trace)));  // the same key in two objects is two keys
}
