// PyTorch execution traces (io/execution_trace.hpp) and their join with a profiler trace of
// the same step (io/execution_trace_join.hpp), on real traces: a training step of a small MLP
// (Linear(8,16), ReLU, Linear(16,4), cross entropy, Adam; batch 4) written by Debian's PyTorch 1.13
// on the CPU (scripts/make-execution-traces.py: ExecutionGraphObserver and the legacy profiler), and
// HTA's CUDA sample (tests/fixtures/execution_trace/simple_add_*, Kineto with record-function ids). Expected
// sizes are derived by hand from the model's shapes.
#include "io/execution_trace.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/execution_trace_join.hpp"
#include "io/trace_import.hpp"
#include "ir/graph.hpp"
#include "ir/memory_rule.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo;
using namespace mutwo::support;
using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

namespace {

const std::string kDir = std::string(MUTWO_TEST_FIXTURES) + "/execution_trace/";

std::vector<int64_t> bytes_of_role(const Graph& g, TensorRole role) {
  std::vector<int64_t> out;
  for (const Tensor& t : g.tensors) {
    if (t.role == role) out.push_back(t.bytes);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Op& op_named(const Graph& g, const std::string& name, int occurrence = 0) {
  for (const Op& op : g.ops) {
    if (op.name == name && occurrence-- == 0) return op;
  }
  FAIL("no op " << name);
  return g.ops.front();
}

}  // namespace

TEST_CASE("an MLP training step's execution trace: dataflow through storages, sizes and roles") {
  const TraceImport imported =
      import_execution_trace_pair(kDir + "mlp_et.json.gz", kDir + "mlp_profile.json.gz");
  const Graph& g = imported.trace.graph;
  // Weights (fp32): fc1 16x8 = 512 B, its bias 16 = 64 B, fc2 4x16 = 256 B, its bias 4 = 16 B. The
  // expanded bias views (4x16, stride 0) must not count: the storage is the bias.
  CHECK(bytes_of_role(g, TensorRole::weight) == std::vector<int64_t>{16, 64, 256, 512});
  // Adam state per parameter: exp_avg and exp_avg_sq of its size, and a 4-byte float step.
  CHECK(bytes_of_role(g, TensorRole::optimizer_state) ==
        std::vector<int64_t>{4, 4, 4, 4, 16, 16, 64, 64, 256, 256, 512, 512});
  // The batch: x 4x8 fp32 = 128 B, labels 4 int64 = 32 B.
  CHECK(bytes_of_role(g, TensorRole::input) == std::vector<int64_t>{32, 128});

  // The forward: fc1 reads x, its weight and bias, writes 4x16 fp32 = 256 B; relu 256 B; fc2 64 B.
  const Op& fc1 = op_named(g, "aten::linear", 0);
  CHECK(fc1.phase == Phase::forward);
  CHECK(fc1.kind == OpKind::opaque);
  CHECK(fc1.inputs.size() == 3);
  CHECK(fc1.bytes_read == 128 + 512 + 64);
  CHECK(fc1.flops == 2 * 4 * 8 * 16 + 4 * 16);  // x[4,8] W[16,8]: multiply-adds, then the bias
  REQUIRE(fc1.outputs.size() == 1);
  CHECK(g.tensor(fc1.outputs[0]).bytes == 256);
  CHECK(g.tensor(fc1.outputs[0]).role == TensorRole::activation);
  const Op& relu = op_named(g, "aten::relu");
  CHECK(relu.inputs == fc1.outputs);
  const Op& fc2 = op_named(g, "aten::linear", 1);
  CHECK(fc2.inputs.front() == relu.outputs.front());
  CHECK(g.tensor(fc2.outputs[0]).bytes == 64);

  // Backward: autograd functions paired with the forward op holding their sequence number.
  const Op& fc2_backward = op_named(g, "autograd::engine::evaluate_function: AddmmBackward0", 0);
  CHECK(fc2_backward.phase == Phase::backward);
  CHECK(fc2_backward.kind == OpKind::opaque_backward);
  CHECK(fc2_backward.forward_of == fc2.id);
  // It reads relu's output (saved for dW2) and writes the input gradient 4x16, dW2 4x16 and db2 4.
  CHECK(std::find(fc2_backward.inputs.begin(), fc2_backward.inputs.end(), relu.outputs.front()) !=
        fc2_backward.inputs.end());
  std::vector<int64_t> written;
  for (TensorId t : fc2_backward.outputs) written.push_back(g.tensor(t).bytes);
  CHECK(written == std::vector<int64_t>{256, 256, 16});
  CHECK(op_named(g, "autograd::engine::evaluate_function: AddmmBackward0", 1).forward_of == fc1.id);
  CHECK(op_named(g, "autograd::engine::evaluate_function: ReluBackward0").forward_of == relu.id);

  // Adam updates in place: the optimizer phase's ops read the gradients made in backward.
  const auto optimizer_ops =
      std::count_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.phase == Phase::optimizer; });
  CHECK(optimizer_ops == 41);
  CHECK(std::all_of(g.ops.begin(), g.ops.end(), [](const Op& op) {
    return op.phase != Phase::optimizer || op.kind == OpKind::opaque_optimizer;
  }));
  // Resident at the start: 18 tensors of one 512-B block each (4 weights, 12 states, x, labels).
  int64_t resident = 0;
  for (const Tensor& t : g.tensors) {
    if (resident_at_start(t.role)) resident += allocation_bytes(t.bytes);
  }
  CHECK(resident == 18 * 512);

  // Joined with the legacy profiler trace by name and occurrence: every op timed on the CPU, fc1
  // by the profiler's first aten::linear event.
  CHECK(imported.trace.device == "cpu");
  REQUIRE(imported.trace.op_duration_ns.size() == g.ops.size());
  CHECK(std::all_of(imported.trace.op_duration_ns.begin(), imported.trace.op_duration_ns.end(),
                    [](int64_t ns) { return ns > 0; }));
  const nlohmann::json profile = nlohmann::json::parse(read_text_file(kDir + "mlp_profile.json.gz"));
  double first_linear_us = -1;
  double first_ts = 1e300;
  for (const nlohmann::json& e : profile) {
    if (e["name"] == "aten::linear" && e["ts"].get<double>() < first_ts) {
      first_ts = e["ts"].get<double>();
      first_linear_us = e["dur"].get<double>();
    }
  }
  CHECK(imported.trace.op_duration_ns[static_cast<size_t>(fc1.id)] ==
        static_cast<int64_t>(first_linear_us * 1000));
}

TEST_CASE("HTA's CUDA sample: Kineto joined by record-function id, GPU time through launches") {
  // 2 x rand(256, 256) on cuda (256 KiB each), then per iteration a host zeros/to/mul (CPU tensors,
  // left out of a GPU trace) and add of the two on the GPU. Kernel times: each rand's
  // distribution kernel 5 us, each add's elementwise kernel 3 us (the Kineto trace's durations).
  const TraceImport imported =
      import_execution_trace_pair(kDir + "simple_add_et.json.gz", kDir + "simple_add_kineto.json.gz");
  const Graph& g = imported.trace.graph;
  CHECK(imported.trace.device == "NVIDIA A100-PG509-200");  // the Kineto trace's deviceProperties
  const Op& rand = op_named(g, "aten::rand");
  REQUIRE(rand.outputs.size() == 1);
  CHECK(g.tensor(rand.outputs[0]).bytes == 256 * 256 * 4);
  CHECK(imported.trace.op_duration_ns[static_cast<size_t>(rand.id)] == 5000);
  const Op& add = op_named(g, "aten::add");
  CHECK(add.inputs.size() == 2);
  CHECK(imported.trace.op_duration_ns[static_cast<size_t>(add.id)] == 3000);
  CHECK(imported.trace.op_duration_ns[static_cast<size_t>(op_named(g, "aten::mul").id)] == 0);
  CHECK(imported.trace.op_host_ns.size() == g.ops.size());
  CHECK(std::any_of(imported.warnings.begin(), imported.warnings.end(), [](const std::string& w) {
    return w.find("8 host tensor(s) left out of a GPU trace") != std::string::npos;
  }));
}

TEST_CASE("execution traces: detected by content; mismatched pairs and malformed nodes refused") {
  CHECK(detect_trace_format(read_text_file(kDir + "mlp_et.json.gz")) == TraceFormat::et);
  // The MLP's execution trace with the CNN's profiler trace: not the same step.
  CHECK_THROWS_WITH_AS(import_execution_trace_pair(kDir + "mlp_et.json.gz", kDir + "cnn_profile.json.gz"),
                       doctest::Contains("mlp_et.json.gz and cnn_profile.json.gz are not traces of the same step"),
                       FormatError);
  nlohmann::json doc = nlohmann::json::parse(read_text_file(kDir + "mlp_et.json.gz"));
  for (nlohmann::json& n : doc["nodes"]) {
    if (n["name"] == "aten::relu") n["inputs"][0] = nlohmann::json::array({1, 2, 3});
  }
  CHECK_THROWS_WITH_AS(import_execution_trace(doc, "bad.json"),
                       doctest::Contains("bad.json: execution trace node"), FormatError);
  CHECK_THROWS_WITH_AS(import_execution_trace(doc, "bad.json"),
                       doctest::Contains("field 'inputs[0]' must be a tensor [tensor_id, storage_id, offset, numel, "
                                         "element_size, device], not [1,2,3]"),
                       FormatError);
  // A size whose bytes overflow 64 bits names the node and the field.
  doc = nlohmann::json::parse(read_text_file(kDir + "mlp_et.json.gz"));
  for (nlohmann::json& n : doc["nodes"]) {
    if (n["name"] == "aten::relu") n["inputs"][0][3] = int64_t{1} << 62;
  }
  CHECK_THROWS_WITH_AS(import_execution_trace(doc, "big.json"),
                       doctest::Contains("x element_size 4 overflows 64-bit bytes"), FormatError);
  const nlohmann::json empty = {{"schema", "1.0.1"}, {"nodes", nlohmann::json::array()}};
  CHECK_THROWS_WITH_AS(import_execution_trace(empty, "empty.json"),
                       "empty.json: execution trace has no operator nodes (0 nodes)", FormatError);
}

TEST_CASE("execution traces and their profiler traces: eight more malformed inputs, each named") {
  const nlohmann::json good = nlohmann::json::parse(read_text_file(kDir + "mlp_et.json.gz"));
  auto with = [&](auto&& edit) {
    nlohmann::json doc = good;
    edit(doc);
    return doc;
  };
  auto relu = [](nlohmann::json& doc) -> nlohmann::json& {
    for (nlohmann::json& n : doc["nodes"]) {
      if (n["name"] == "aten::relu") return n;
    }
    throw std::runtime_error("no relu");
  };
  const int64_t relu_id = relu(const_cast<nlohmann::json&>(good))["id"].get<int64_t>();
  CHECK_THROWS_WITH_AS(import_execution_trace(with([&](nlohmann::json& d) { relu(d).erase("id"); }), "t.json"),
                       "t.json: execution trace node -1: field 'id' is missing", FormatError);
  CHECK_THROWS_WITH_AS(
      import_execution_trace(with([&](nlohmann::json& d) { d["nodes"].push_back(relu(d)); }), "t.json"),
      fmt::format("t.json: execution trace node {}: field 'id' appears twice", relu_id).c_str(), FormatError);
  CHECK_THROWS_WITH_AS(import_execution_trace(with([&](nlohmann::json& d) { relu(d)["name"] = 7; }), "t.json"),
                       fmt::format("t.json: execution trace node {}: field 'name' must be a string", relu_id).c_str(),
                       FormatError);
  CHECK_THROWS_WITH_AS(
      import_execution_trace(with([&](nlohmann::json& d) { relu(d)["input_types"].push_back("Int"); }), "t.json"),
      fmt::format("t.json: execution trace node {}: field 'input_types' has 2 entries for 1 values", relu_id).c_str(),
      FormatError);
  CHECK_THROWS_WITH_AS(
      import_execution_trace(with([&](nlohmann::json& d) { relu(d)["inputs"][0][3] = -5; }), "t.json"),
      doctest::Contains(fmt::format("node {}: field 'inputs[0]' has offset 0, numel -5, element_size 4: sizes must "
                                    "be >= 0",
                                    relu_id)
                            .c_str()),
      FormatError);

  TraceImport et = import_execution_trace(good, "mlp_et.json");
  CHECK_THROWS_WITH_AS(join_profiler_trace(et, nlohmann::json{{"events", 1}}, "mlp_et.json", "p.json"),
                       "p.json: not a profiler trace (no \"traceEvents\" array)", FormatError);
  nlohmann::json profile = nlohmann::json::parse(read_text_file(kDir + "mlp_profile.json.gz"));
  profile[3]["dur"] = -1;
  CHECK_THROWS_WITH_AS(join_profiler_trace(et, profile, "mlp_et.json", "p.json"),
                       doctest::Contains("' has 'dur' = -1 < 0"), FormatError);
  profile[3].erase("ts");
  CHECK_THROWS_WITH_AS(join_profiler_trace(et, profile, "mlp_et.json", "p.json"),
                       doctest::Contains("needs numeric 'ts' and 'dur'"), FormatError);
  // A Kineto trace missing one op's cpu_op: the record-function id names what is missing.
  nlohmann::json kineto = nlohmann::json::parse(read_text_file(kDir + "simple_add_kineto.json.gz"));
  auto& events = kineto["traceEvents"];
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const nlohmann::json& e) {
                                return e.value("cat", "") == "cpu_op" && e.value("name", "") == "aten::add";
                              }),
               events.end());
  TraceImport add = import_execution_trace(nlohmann::json::parse(read_text_file(kDir + "simple_add_et.json.gz")),
                                           "simple_add_et.json");
  CHECK_THROWS_WITH_AS(join_profiler_trace(add, kineto, "simple_add_et.json", "k.json"),
                       doctest::Contains("op 5 'aten::add' (execution trace node 36) has rf_id 22, which no cpu_op's "
                                         "External id is"),
                       FormatError);
}

TEST_CASE("torchvision's resnet18 trained one step: the execution trace holds the zoo's parameters") {
  // scripts/make-execution-traces.py (torchvision 0.14, batch 2 of 224x224, Adam): the weights are
  // the 62 parameters (20 convolutions, 20 batch norms x 2, fc weight and bias) and the 20 batch
  // norms' num_batches_tracked (int64, updated in place by the forward); their fp32 elements are
  // resnet18's 11,689,512 parameters. Adam keeps exp_avg, exp_avg_sq and step per parameter:
  // 186 optimizer states. Inputs: the images, the labels and the 40 running means and variances
  // (batch norm updates them inside native_batch_norm, not by an in-place op).
  const TraceImport imported =
      import_execution_trace_pair(kDir + "resnet18_et.json.gz", kDir + "resnet18_profile.json.gz");
  const Graph& g = imported.trace.graph;
  int64_t parameter_bytes = 0, counters = 0, weights = 0;
  for (const Tensor& t : g.tensors) {
    if (t.role != TensorRole::weight) continue;
    ++weights;
    if (t.bytes == 8) {
      ++counters;
    } else {
      parameter_bytes += t.bytes;
    }
  }
  CHECK(weights == 82);
  CHECK(counters == 20);
  CHECK(parameter_bytes / 4 == 11'689'512);
  CHECK(bytes_of_role(g, TensorRole::optimizer_state).size() == 186);
  const std::vector<int64_t> inputs = bytes_of_role(g, TensorRole::input);
  CHECK(inputs.size() == 42);
  CHECK(inputs.back() == 2 * 3 * 224 * 224 * 4);  // the images
  CHECK(imported.trace.op_duration_ns.size() == g.ops.size());
  // Each forward aten call with a mutwo kind gets its FLOPs from the kind's rule, each backward
  // from the kind's autodiff rule (the first layer's input gets no gradient, as in the zoo): the
  // step's FLOPs equal the zoo's exactly (below, for five torchvision models).
  ModelConfig config;
  config.batch_size = 2;
  const Graph zoo = build_training_step(build_model("resnet18", config), OptimizerConfig{});
  CHECK(flops_in_phase(g, Phase::forward) == flops_in_phase(zoo, Phase::forward));
  CHECK(flops_in_phase(g, Phase::backward) == flops_in_phase(zoo, Phase::backward));
  // Coverage, with the time the legacy profiler measured for each op on the CPU.
  const auto coverage = std::find_if(imported.warnings.begin(), imported.warnings.end(),
                                     [](const std::string& w) { return w.find("typed ops") != std::string::npos; });
  REQUIRE(coverage != imported.warnings.end());
  // Untyped: the 20 int64 num_batches_tracked += 1 (and 2 more, 0.5 % of the forward's time), one
  // autograd function, and the optimizer's 62 step.item() (a copy to the host) and one more. Views
  // (t, reshape, their backward functions, AccumulateGrad taking the gradient) count as typed.
  CHECK(coverage->find("forward 70/92 (99.5 % of its time); backward 134/135 (100.0 % of its time); "
                       "optimizer 558/621 (99.2 % of its time)") != std::string::npos);
  // Adam's single-tensor step: 12 FLOPs per parameter element, as the zoo counts it (kAdamFlops),
  // and each of the 62 parameters' step counter += 1 (a float tensor in PyTorch 1.13).
  CHECK(flops_in_phase(g, Phase::optimizer) == flops_in_phase(zoo, Phase::optimizer) + 62);
}

TEST_CASE("execution traces of five torchvision models: the zoo's parameters, FLOPs and saved bytes") {
  // scripts/make-execution-traces.py (Debian's PyTorch 1.13 and torchvision 0.14 on the CPU; batch 2
  // of 224x224, Adam, the second step). Issue 18's bar: parameters equal, forward FLOPs within 1 %,
  // saved-for-backward bytes within 2 % of the zoo's. Measured: parameters and FLOPs (forward and
  // backward) equal, but for vit_b_16's forward: PyTorch's multi_head_attention_forward scales q
  // before the scores (q / sqrt(64): 2 x 197 x 768 = 302,592 divisions in each of 12 layers), which
  // the zoo folds into attn_scores; saved bytes +0.00 % (resnets: the int64 counters' 8 B reads by backward are
  // all), -0.32 % (mobilenet_v2), -0.42 % (mobilenet_v3_large), +0.43 % (vit_b_16: the packed q/k/v
  // projection and its head split, which the zoo writes as three linears).
  // (pair members, not structured bindings: doctest's CAPTURE is a lambda, which clang 14 does not
  // let capture a binding)
  for (const auto& names : std::vector<std::pair<std::string, std::string>>{
           {"resnet18", "resnet18"},
           {"resnet50", "resnet50"},
           {"mobilenet-v2", "mobilenet_v2"},
           {"mobilenet-v3-large", "mobilenet_v3_large"},
           {"vit-b16", "vit_b_16"}}) {
    const std::string& zoo_name = names.first;
    const std::string& file = names.second;
    CAPTURE(file);
    const std::string path = kDir + file + "_et.json.gz";
    const TraceImport imported =
        import_execution_trace(nlohmann::json::parse(read_text_file(path, "execution trace")), file);
    const Graph& g = imported.trace.graph;
    ModelConfig config;
    config.batch_size = 2;
    const Graph zoo = build_training_step(build_model(zoo_name, config), OptimizerConfig{});
    int64_t parameter_bytes = 0;
    for (const Tensor& t : g.tensors) {
      if (t.role == TensorRole::weight && t.bytes != 8) parameter_bytes += t.bytes;  // not the int64 counters
    }
    CHECK(parameter_bytes / 4 == parameter_count(zoo));
    CHECK(flops_in_phase(g, Phase::forward) == flops_in_phase(zoo, Phase::forward) +
                                                   (file == "vit_b_16" ? 3'631'104 : 0));
    CHECK(static_cast<double>(flops_in_phase(g, Phase::backward)) ==
          doctest::Approx(static_cast<double>(flops_in_phase(zoo, Phase::backward))).epsilon(0.001));
    const auto saved = static_cast<double>(saved_for_backward_bytes(g));
    CHECK(saved == doctest::Approx(static_cast<double>(saved_for_backward_bytes(zoo))).epsilon(0.005));
    // Typed forward ops are recomputable unless they write in place.
    const auto recomputable =
        std::count_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.recomputable; });
    CHECK(recomputable > 0);
    for (const Op& op : g.ops) {
      if (op.recomputable) CHECK(op.attrs.contains("typed_kind"));
    }
  }
}
