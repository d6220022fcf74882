// The measured cost source: op signatures, median look-up, fallback to analytic, trace checks,
// product-name -> catalog device matching, the registry entry, and an end-to-end replay.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/measured_cost_model.hpp"
#include "io/trace_file.hpp"
#include "ir/graph_builder.hpp"
#include "ir/schedule.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

using namespace mutwo::costmodel;
using namespace mutwo::ir;
using namespace mutwo::io;
using namespace mutwo::transforms;
using namespace mutwo::zoo;

namespace {

// x[2,4] -> fc1 -> r1 -> fc2 -> r2 (W1, W2 both [4,4]): two identical layers, so fc1 and fc2 share
// one signature, and r1 and r2 another. Ops: 0 fc1, 1 r1, 2 fc2, 3 r2.
Graph two_layer_graph(int32_t width = 1) {
  GraphBuilder b("two-layer", DType::f32, width, 2);
  TensorId x = b.add_input("x", {2, 4}, TensorRole::input, FuseAxis::stack);
  TensorId w1 = b.add_weight("w1", {4, 4}, FuseAxis::stack);
  TensorId w2 = b.add_weight("w2", {4, 4}, FuseAxis::stack);
  TensorId h = b.op(OpKind::relu, "r1", {b.op(OpKind::linear, "fc1", {x, w1})});
  b.op(OpKind::relu, "r2", {b.op(OpKind::linear, "fc2", {h, w2})});
  return std::move(b).finish();
}

// x[2,3] -> relu -> relu -> relu: three ops of one signature.
Graph relu_chain(int64_t n) {
  GraphBuilder b("relu-chain", DType::f32, 1, 2);
  TensorId t = b.add_input("x", {2, 3}, TensorRole::input, FuseAxis::stack);
  for (int64_t i = 0; i < n; ++i) t = b.op(OpKind::relu, "relu" + std::to_string(i), {t});
  return std::move(b).finish();
}

Trace measured(Graph graph, std::vector<int64_t> durations, std::string device = "NVIDIA H100 80GB HBM3") {
  Trace t;
  t.graph = std::move(graph);
  t.op_duration_ns = std::move(durations);
  t.device = std::move(device);
  return t;
}

std::unique_ptr<OpCostModel> analytic(std::string_view device = "a100-40gb") {
  return std::make_unique<AnalyticCostModel>(find_device(device));
}

Graph resnet18_step() {
  ModelConfig config;
  config.batch_size = 2;
  config.image_size = 32;
  return build_training_step(build_model("resnet18", config), OptimizerConfig{});
}

}  // namespace

TEST_CASE("a measured op is priced at exactly its measured duration") {
  const Graph g = two_layer_graph();
  // Every op measured once: r1 and r2 measure the same value, as do fc1 and fc2.
  const MeasuredCostModel model({measured(g, {700, 2'500, 700, 2'500})}, analytic());
  CHECK(model.name() == "measured");
  CHECK(model.op_duration_ns(g, g.ops[0]) == 700);
  CHECK(model.op_duration_ns(g, g.ops[1]) == 2'500);
  CHECK(model.measured_duration_ns(g, g.ops[3]) == std::optional<int64_t>(2'500));
  CHECK(model.signature_count() == 2);  // linear [2,4]x[4,4], relu [2,4]
}

TEST_CASE("identical layers share the median of their measured times") {
  SUBCASE("odd count: the middle value") {
    // relu0..2 measured 10, 30, 20 -> sorted 10, 20, 30 -> 20 for every one of them.
    const Graph g = relu_chain(3);
    const MeasuredCostModel model({measured(g, {10, 30, 20})}, analytic());
    for (const Op& op : g.ops) CHECK(model.op_duration_ns(g, op) == 20);
  }
  SUBCASE("even count: the lower middle value") {
    // fc1 10, fc2 40 -> {10, 40} -> 10; r1 300, r2 100 -> {100, 300} -> 100.
    const Graph g = two_layer_graph();
    const MeasuredCostModel model({measured(g, {10, 300, 40, 100})}, analytic());
    CHECK(model.op_duration_ns(g, g.ops[0]) == 10);
    CHECK(model.op_duration_ns(g, g.ops[2]) == 10);
    CHECK(model.op_duration_ns(g, g.ops[1]) == 100);
    CHECK(model.op_duration_ns(g, g.ops[3]) == 100);
  }
  SUBCASE("durations of several traces are pooled") {
    // relu measured 10, 30, 20 in one trace and 50 in another: {10, 20, 30, 50} -> 20.
    const MeasuredCostModel model({measured(relu_chain(3), {10, 30, 20}), measured(relu_chain(1), {50})},
                                  analytic());
    const Graph g = relu_chain(1);
    CHECK(model.op_duration_ns(g, g.ops[0]) == 20);
    CHECK(model.traces().size() == 2);
  }
}

TEST_CASE("an op missing from the traces is priced exactly as the analytic fallback") {
  // The trace measured only relus; the linears of the two-layer graph fall back.
  const MeasuredCostModel model({measured(relu_chain(1), {123})}, analytic("h100-sxm-80gb"));
  const Graph g = two_layer_graph();
  // The relus of the two-layer graph are [2,4], the traced one [2,3]: every op falls back.
  const AnalyticCostModel reference(find_device("h100-sxm-80gb"));
  for (const Op& op : g.ops) {
    CHECK_FALSE(model.measured_duration_ns(g, op).has_value());
    CHECK(model.op_duration_ns(g, op) == reference.op_duration_ns(g, op));
  }
  CHECK(model.device().name == "h100-sxm-80gb");  // the fallback's device
  CHECK(model.fallback().name() == "analytic");
  const MeasuredCoverage coverage = measured_coverage(model, g);
  CHECK(coverage.ops == 4);
  CHECK(coverage.measured_ops == 0);
}

TEST_CASE("the same step concatenated as two sub-arrays matches every op") {
  const Graph g = two_layer_graph();
  const MeasuredCostModel model({measured(g, {10, 300, 40, 100})}, analytic());
  std::vector<SubArray> ranges;
  const Graph both = concat_graphs({g, g}, &ranges);
  REQUIRE(both.ops.size() == 8);
  CHECK(both.ops[4].name == "s1/fc1");
  // Op i of the second part is op i - 4 of the traced graph: same medians (10, 100, 10, 100).
  for (const Op& op : both.ops) {
    CHECK(model.op_duration_ns(both, op) == model.op_duration_ns(g, g.ops[static_cast<size_t>(op.id % 4)]));
  }
  const MeasuredCoverage coverage = measured_coverage(model, both);
  CHECK(coverage.ops == 8);
  CHECK(coverage.measured_ops == 8);
}

TEST_CASE("a fused op of another width does not match") {
  const MeasuredCostModel model({measured(two_layer_graph(1), {10, 300, 40, 100})}, analytic());
  const Graph fused = two_layer_graph(2);
  for (const Op& op : fused.ops) CHECK_FALSE(model.measured_duration_ns(fused, op).has_value());
  CHECK(measured_coverage(model, fused).measured_ops == 0);
}

TEST_CASE("the signature keeps kind, phase, width, attributes, shapes and dtypes, not names") {
  const Graph g = relu_chain(2);
  CHECK(op_signature(g, g.ops[0]) == "relu|forward|w1|{}|(fp32[2,3])->(fp32[2,3])");
  CHECK(op_signature(g, g.ops[0]) == op_signature(g, g.ops[1]));  // other name, id and tensors

  GraphBuilder b("attrs", DType::f32, 1, 2);
  TensorId x = b.add_input("x", {2, 8}, TensorRole::input, FuseAxis::stack);
  TensorId gamma = b.add_weight("gamma", {8}, FuseAxis::stack);
  TensorId beta = b.add_weight("beta", {8}, FuseAxis::stack);
  b.add_op(OpKind::layernorm, "ln1", {x, gamma, beta}, {{"eps", 1e-5}});
  b.add_op(OpKind::layernorm, "ln2", {x, gamma, beta}, {{"eps", 1e-6}});
  const Graph ln = std::move(b).finish();
  // 1e-5 as an exact hex float; outputs y, mean, rstd ([2,1] each).
  CHECK(op_signature(ln, ln.ops[0]) ==
        "layernorm|forward|w1|{\"eps\"=0x1.4f8b588e368f1p-17}|(fp32[2,8],fp32[8],fp32[8])->"
        "(fp32[2,8],fp32[2,1],fp32[2,1])");
  CHECK(op_signature(ln, ln.ops[0]) != op_signature(ln, ln.ops[1]));  // another eps

  Op strings = g.ops[0];
  strings.attrs.emplace("mode", std::string("a\"b"));
  strings.attrs.emplace("sizes", std::vector<int64_t>{1, 2});
  strings.attrs.emplace("scales", std::vector<double>{0.5});
  CHECK(op_signature(g, strings) ==
        "relu|forward|w1|{\"mode\"=\"a\\\"b\";\"scales\"=[0x1p-1];\"sizes\"=[1,2]}|(fp32[2,3])->(fp32[2,3])");
}

TEST_CASE("signatures survive a JSON round trip of a training step") {
  // resnet18's step carries doubles (batchnorm eps, Adam lr, betas, eps) and int lists.
  const Graph step = resnet18_step();
  const Trace back = trace_from_json(trace_to_json(measured(step, {}, "")));
  REQUIRE(back.graph.ops.size() == step.ops.size());
  for (size_t i = 0; i < step.ops.size(); ++i) {
    CHECK(op_signature(back.graph, back.graph.ops[i]) == op_signature(step, step.ops[i]));
  }
}

TEST_CASE("a trace that is not a measurement is refused naming the trace and the field") {
  const Graph g = relu_chain(2);
  CHECK_THROWS_WITH_AS(MeasuredCostModel({measured(g, {})}, analytic()),
                       "trace 'relu-chain': field 'op_duration_ns' is empty: the trace has no measured "
                       "durations (write one with `mutwo profile`)",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(MeasuredCostModel({measured(g, {5})}, analytic()),
                       "trace 'relu-chain': field 'op_duration_ns' has 1 values for 2 ops", mutwo::Error);
  CHECK_THROWS_WITH_AS(MeasuredCostModel({measured(g, {5, -1})}, analytic()),
                       "trace 'relu-chain': field 'op_duration_ns'[1] (op 'relu1') = -1 must be >= 0",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(MeasuredCostModel({}, analytic()), "measured cost model: no measured traces given",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(MeasuredCostModel({measured(g, {5, 5})}, nullptr),
                       "measured cost model: no fallback cost model given", mutwo::Error);
}

TEST_CASE("runtime product names map to catalog devices") {
  struct Row {
    const char* product;
    std::optional<std::string> device;
  };
  const std::vector<Row> rows = {
      {"NVIDIA H100 80GB HBM3", "h100-sxm-80gb"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H200", "h200"},
      {"NVIDIA A100-SXM4-40GB", "a100-40gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-80gb"},
      {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
      {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
      {"Tesla V100-PCIE-32GB", "v100-pcie-32gb"},
      {"NVIDIA L4", "l4"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L40", std::nullopt},  // not L4: the word must match
      {"NVIDIA A10", "a10"},
      {"NVIDIA B200", "b200"},
      {"Tesla P4", "p4"},
      {"Tesla V100-SXM2-32GB", "v100-32gb"},
      {"Tesla V100-SXM2-16GB", "v100-16gb"},
      {"Tesla V100-PCIE-16GB", "v100-16gb"},
      {"NVIDIA GeForce RTX 4090", "rtx4090"},
      {"nvidia h100 80gb hbm3", "h100-sxm-80gb"},  // case-insensitive
      {"cpu", std::nullopt},
      {"NVIDIA GeForce RTX 3090", "rtx3090"},
      {"NVIDIA GeForce RTX 3080", std::nullopt},
      {"", std::nullopt},
  };
  for (const Row& r : rows) {
    CAPTURE(r.product);
    CHECK(match_device(r.product) == r.device);
    if (r.device) CHECK(builtin_devices().contains(*r.device));
  }
}

TEST_CASE("the registry builds measured from traces on the caller's device") {
  const CostSourceRegistry& registry = builtin_cost_sources();
  const CostSourceInfo& info = registry.find("measured");
  CHECK(info.reads_measured_traces);
  CHECK_FALSE(registry.find("analytic").reads_measured_traces);
  CHECK(info.citation.find("MLSys 2023") != std::string::npos);
  CHECK_THROWS_WITH_AS(registry.create("measured", find_device("a100-40gb")),
                       "cost source 'measured' needs at least one measured trace (--trace FILE)",
                       mutwo::Error);
  CHECK_THROWS_WITH_AS(
      registry.create("measured", find_device("a100-40gb"), CostSourceInputs{{measured(relu_chain(1), {})}}),
      doctest::Contains("field 'op_duration_ns' is empty"), mutwo::Error);

  const Graph g = two_layer_graph();
  const std::unique_ptr<OpCostModel> model =
      registry.create("measured", find_device("v100-32gb"), CostSourceInputs{{measured(g, {1, 2, 3, 4})}});
  CHECK(model->name() == "measured");
  CHECK(model->device().name == "v100-32gb");
  CHECK(model->op_duration_ns(g, g.ops[2]) == 1);  // fc {1, 3} -> 1
  const Graph other = relu_chain(1);               // relu [2,3]: analytic on the v100-32gb
  CHECK(model->op_duration_ns(other, other.ops[0]) ==
        AnalyticCostModel(find_device("v100-32gb")).op_duration_ns(other, other.ops[0]));
  // analytic ignores the traces it is given.
  CHECK(registry.create("analytic", find_device("a100-40gb"), CostSourceInputs{{measured(g, {1, 2, 3, 4})}})
            ->name() == "analytic");
}

TEST_CASE("concurrent const look-ups give the same durations") {
  const Graph step = resnet18_step();
  const MeasuredCostModel model({measured(step, std::vector<int64_t>(step.ops.size(), 1'000))}, analytic());
  const std::vector<int64_t> expected = op_durations_ns(model, step);
  std::vector<std::vector<int64_t>> got(4);
  std::vector<std::thread> threads;
  for (auto& out : got) threads.emplace_back([&model, &step, &out] { out = op_durations_ns(model, step); });
  for (std::thread& t : threads) t.join();
  for (const auto& out : got) CHECK(out == expected);
}

TEST_CASE("end to end: a step whose every op measured 1000 ns simulates in 1000 ns per op") {
  // resnet18, batch 2, 32 px, Adam. Plain schedule: one compute stream, no swaps, no recompute,
  // so the step is the sum of the op durations: 1,000 ns x ops.
  const Graph step = resnet18_step();
  const auto ops = static_cast<int64_t>(step.ops.size());
  const MeasuredCostModel model({measured(step, std::vector<int64_t>(step.ops.size(), 1'000))},
                                analytic("h100-sxm-80gb"));
  CHECK(measured_coverage(model, step).measured_ops == ops);

  const mutwo::sim::Prediction one =
      mutwo::sim::simulate(mutwo::policies::build_plain_schedule({step}), model);
  CHECK_FALSE(one.oom);
  CHECK(one.step_time_ns == 1'000 * ops);
  CHECK(one.bytes_swapped_in == 0);

  // Two sub-arrays of the same model, names prefixed "s0/", "s1/": every op still measured,
  // 2 x ops x 1,000 ns.
  const Schedule two = mutwo::policies::build_plain_schedule({step, step});
  CHECK(measured_coverage(model, two.graph).measured_ops == 2 * ops);
  CHECK(mutwo::sim::simulate(two, model).step_time_ns == 2'000 * ops);
}
