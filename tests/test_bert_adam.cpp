// NVIDIA's BertAdam (optimizer bert-adam): its kernels and passes counted by hand from
// DeepLearningExamples' BERT optimization.py (ir/optimizer_kernels.hpp), the AdamW steps autodiff
// marks with it, and its host side: every kernel a Python statement (python_op_ns), the loop
// started after `.item()` on the global gradient norm. The executor's update is
// tests/test_exec_families.cpp's.
#include <doctest/doctest.h>

#include <map>
#include <vector>

#include "costmodel/device_catalog.hpp"
#include "ir/memory_rule.hpp"
#include "ir/optimizer_kernels.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"
#include "tests/support/fixed_cost_model.hpp"
#include "tests/support/test_autodiff_fixtures.hpp"

namespace {

using namespace mutwo;

constexpr int64_t kUs = 1'000;  // ns

Op bert_step(double weight_decay) {
  Op op;
  op.name = "w.adamw_step";
  op.kind = OpKind::adamw_step;
  op.attrs.emplace("weight_decay", std::vector<double>{weight_decay});
  op.attrs.emplace("bert_adam", int64_t{1});
  return op;
}

Graph bert_mlp(OptimizerKind kind = OptimizerKind::bert_adam) {
  OptimizerConfig c;
  c.kind = kind;
  return transforms::build_training_step(mlp(1), c);
}

}  // namespace

TEST_CASE("BertAdam's kernels and passes, counted by hand; the attribute is refused where it cannot be") {
  // mul_ m (2), add_ m (3), mul_ v (2), addcmul_ v (3), sqrt (2), + eps (2), m / (3), lr * update (2),
  // neg (2), p.add_ (3), and the global norm's read of the gradient (1).
  const OptimizerKernels plain = optimizer_kernels(bert_step(0.0));
  CHECK(plain.kernels == 10);
  CHECK(plain.passes == 25);
  // update += wd * p.data: mul (2) and add (3).
  const OptimizerKernels decayed = optimizer_kernels(bert_step(0.01));
  CHECK(decayed.kernels == 12);
  CHECK(decayed.passes == 30);
  // update, lr * update and its negation live together.
  CHECK(optimizer_temporaries(bert_step(0.01)) == 3);
  CHECK(is_bert_adam(bert_step(0.0)));
  Op not_bert = bert_step(0.0);
  not_bert.attrs["bert_adam"] = int64_t{0};
  CHECK_FALSE(is_bert_adam(not_bert));
  CHECK(optimizer_kernels(not_bert).kernels == 7);  // torch.optim's AdamW

  // pytorch-pretrained-bert's: each gradient's own norm in place of the global one's read: +1 kernel.
  Op hf = bert_step(0.0);
  hf.attrs["bert_adam"] = int64_t{2};
  CHECK(bert_adam_form(hf) == 2);
  CHECK(optimizer_kernels(hf).kernels == 11);
  CHECK(optimizer_kernels(hf).passes == 25);
  hf.attrs["weight_decay"] = std::vector<double>{0.01};
  CHECK(optimizer_kernels(hf).kernels == 13);
  CHECK(optimizer_kernels(hf).passes == 30);

  hf.attrs["max_grad_norm"] = -1.0;
  CHECK_THROWS_WITH_AS(optimizer_kernels(hf),
                       "op 'w.adamw_step': attribute 'max_grad_norm' = -1; expected a finite value > 0",
                       GraphError);

  Op bad = bert_step(0.0);
  bad.attrs["bert_adam"] = int64_t{3};
  CHECK_THROWS_WITH_AS(is_bert_adam(bad), "op 'w.adamw_step': attribute 'bert_adam' = 3; expected 0, 1 or 2",
                       GraphError);
  Op on_adam = bert_step(0.0);
  on_adam.kind = OpKind::adam_step;
  CHECK_THROWS_WITH_AS(
      optimizer_kernels(on_adam),
      "op 'w.adamw_step': attribute 'bert_adam' = 1 on a adam_step op; BertAdam is an adamw_step",
      GraphError);
  Op fused = bert_step(0.0);
  fused.attrs.emplace("fused", int64_t{1});
  CHECK_THROWS_WITH_AS(is_bert_adam(fused),
                       "op 'w.adamw_step': attributes 'bert_adam' = 1 and 'fused' = 1; BertAdam is not fused",
                       GraphError);
}

TEST_CASE("bert-adam: AdamW steps marked BertAdam, in weight order; the first waits for the gradients") {
  CHECK(transforms::parse_optimizer("bert-adam") == OptimizerKind::bert_adam);
  CHECK(transforms::optimizer_name(OptimizerKind::bert_adam) == "bert-adam");
  CHECK(transforms::unfused(OptimizerKind::bert_adam) == OptimizerKind::adamw);
  CHECK_FALSE(transforms::is_fused(OptimizerKind::bert_adam));
  const Graph g = bert_mlp();
  std::vector<std::string> updates;
  for (const Op& op : g.ops) {
    if (op.phase != Phase::optimizer) continue;
    updates.push_back(op.name);
    CHECK(op.kind == OpKind::adamw_step);
    CHECK(is_bert_adam(op));
    CHECK(op.attrs.contains("host_sync") == (updates.size() == 1));
    CHECK(op.workspace_bytes == 3 * allocation_bytes(g.tensor(op.inputs[0]).bytes));
  }
  CHECK(updates == std::vector<std::string>{"fc1.weight.adamw_step", "fc1.bias.adamw_step",
                                            "fc2.weight.adamw_step", "fc2.bias.adamw_step"});
  // pytorch-pretrained-bert's: every update waits (its clip_grad_norm_'s .item()), clipping to norm 1.
  CHECK(transforms::parse_optimizer("bert-adam-hf") == OptimizerKind::bert_adam_hf);
  CHECK(transforms::unfused(OptimizerKind::bert_adam_hf) == OptimizerKind::adamw);
  const Graph hf = bert_mlp(OptimizerKind::bert_adam_hf);
  int waits = 0;
  for (const Op& op : hf.ops) {
    if (op.phase != Phase::optimizer) continue;
    CHECK(bert_adam_form(op) == 2);
    CHECK(attr_double(op.attrs, "max_grad_norm", op.name) == 1.0);
    waits += op.attrs.contains("host_sync") ? 1 : 0;
  }
  CHECK(waits == 4);
}

TEST_CASE("every BertAdam kernel is a Python statement on the host, measured at 27 us on a V100 server") {
  const costmodel::DeviceSpec& v100 = costmodel::find_device("v100-32gb");
  CHECK(v100.host.python_op_ns == 27'000);
  const Graph g = bert_mlp();
  test::FixedCostModel cost({});
  cost.set_host(v100.host);
  const Op& first = *find_op(g, "fc1.weight.adamw_step");
  CHECK(cost.op_host_ns(g, first) == 10 * 27'000);
  // From C++ (mutwo's executor) the step is one call, as every op.
  CHECK(cost.op_host_ns(g, first, costmodel::HostIssuer::cpp) == v100.host.backward_op_ns);
  // torch.optim's AdamW runs as foreach kernels inside one call: a launch per update.
  const Graph foreach = transforms::build_training_step(mlp(1), OptimizerConfig{});
  CHECK(cost.op_host_ns(foreach, *find_op(foreach, "fc1.weight.adam_step")) == v100.host.launch_ns);
}

TEST_CASE("the wait on the gradient norm exposes BertAdam's loop: the step, derived by hand") {
  // Forward and backward ops run 500 us on the GPU and issue in no host time; each update runs 1 us
  // and issues its 10 statements at 100 us each. The GPU reaches the first update at T = 500 us x
  // the fwd/bwd ops; the host issued it by 1000 us (< T), waits until it ends at T + 1 us, then
  // issues the other three back to back, 1000 us each; the last runs 1 us after its issue:
  // step = T + 1 + 3 x 1000 + 1 us.
  const Graph g = bert_mlp();
  std::map<OpId, int64_t> durations;
  int64_t fwd_bwd = 0;
  for (const Op& op : g.ops) {
    const bool update = op.phase == Phase::optimizer;
    durations[op.id] = update ? 1 * kUs : 500 * kUs;
    fwd_bwd += update ? 0 : 1;
  }
  REQUIRE(fwd_bwd >= 3);
  const int64_t t = fwd_bwd * 500 * kUs;
  test::FixedCostModel cost(durations);
  costmodel::HostDispatch host;
  host.python_op_ns = 100 * kUs;
  cost.set_host(host);
  sim::SimOptions eager;
  eager.host_mode = sim::HostMode::eager;
  const Schedule s = policies::build_plain_schedule({g});
  const sim::Prediction p = sim::simulate(s, cost, eager);
  CHECK(p.step_time_ns == t + 1 * kUs + 3 * 1000 * kUs + 1 * kUs);
  // Without the wait the host issues all four updates by 4000 us, under the GPU's fwd/bwd time when
  // T >= 4000 us: the step is the GPU's, T + 4 us.
  Graph unsynced = g;
  for (Op& op : unsynced.ops) op.attrs.erase("host_sync");
  const sim::Prediction q = sim::simulate(policies::build_plain_schedule({unsynced}), cost, eager);
  CHECK(q.step_time_ns == std::max(t + 3 * kUs, 4000 * kUs) + 1 * kUs);
  // With no host (the engine's default) it is the GPU's.
  CHECK(sim::simulate(s, cost).step_time_ns == t + 4 * kUs);
  // pytorch-pretrained-bert's waits after every update, each now 11 statements (its own norm): the
  // first is issued by 1100 us (< T) and runs T..T + 1 us; each later one is issued after the wait,
  // 1100 us, and runs 1 us: step = T + 1 + 3 x (1100 + 1) us.
  const Graph hf = bert_mlp(OptimizerKind::bert_adam_hf);
  const sim::Prediction h = sim::simulate(policies::build_plain_schedule({hf}), cost, eager);
  CHECK(h.step_time_ns == t + 1 * kUs + 3 * 1101 * kUs);
}
