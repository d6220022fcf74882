// An optimizer step is priced as the kernels torch.optim runs over the weight (ir/optimizer_kernels.hpp),
// counted by hand from torch/optim/adam.py and sgd.py (and exec/kernels/optimizer.cpp, which follows them).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_model.hpp"
#include "ir/memory_rule.hpp"
#include "ir/optimizer_kernels.hpp"
#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"
#include "tests/support/zoo_step.hpp"

namespace {

using namespace mutwo;
using namespace mutwo::ir;

Op step(OpKind kind, double weight_decay, double momentum = 0.0) {
  Op op;
  op.name = "w.step";
  op.kind = kind;
  op.attrs.emplace("weight_decay", std::vector<double>{weight_decay});
  if (kind == OpKind::sgd_step) op.attrs.emplace("momentum", std::vector<double>{momentum});
  return op;
}

void check(const OptimizerKernels& k, int64_t kernels, int64_t passes) {
  CHECK(k.kernels == kernels);
  CHECK(k.passes == passes);
}

}  // namespace

TEST_CASE("the kernels and passes of torch.optim's steps, counted by hand") {
  // Adam: lerp_ (m, g -> m: 3), mul_ (v -> v: 2), addcmul_ (v, g -> v: 3), sqrt (2), div (2),
  // add_ (2), addcdiv_ (p, m, denom -> p: 4).
  check(optimizer_kernels(step(OpKind::adam_step, 0.0)), 7, 18);
  check(optimizer_kernels(step(OpKind::adam_step, 0.01)), 8, 21);  // grad.add(p, wd): 3
  check(optimizer_kernels(step(OpKind::adamw_step, 0.0)), 7, 18);
  check(optimizer_kernels(step(OpKind::adamw_step, 0.01)), 8, 20);   // p.mul_(1 - lr wd): 2
  check(optimizer_kernels(step(OpKind::sgd_step, 0.0)), 1, 3);       // p.add_(g, -lr)
  check(optimizer_kernels(step(OpKind::sgd_step, 0.0, 0.9)), 3, 8);  // buf.mul_().add_(d): 2 + 3
  check(optimizer_kernels(step(OpKind::sgd_step, 1e-4, 0.9)), 4, 11);
  Op relu;
  relu.kind = OpKind::relu;
  check(optimizer_kernels(relu), 0, 0);
}

TEST_CASE("an Adam step is priced as its 7 kernels; a small one costs 7 launches, as on the H200") {
  const Graph g = test::zoo_step("resnet18", 32);
  const Op& bias = test::op_named(g, "bn1.bias.adam_step");
  const Op& big = test::op_named(g, "layer4.1.conv2.weight.adam_step");
  // layer4.1.conv2's weight: 512 x 512 x 3 x 3 fp32 = 9,437,184 bytes; 18 passes over 7 kernels.
  const std::vector<costmodel::OpKernel> k = costmodel::op_kernels(g, big);
  REQUIRE(k.size() == 1);
  CHECK(k[0].launches == 7);
  CHECK(k[0].sample.bytes == doctest::Approx(18.0 * 9'437'184 / 7));
  CHECK(k[0].sample.m == 512 * 512 * 9);
  // bn1's bias, 64 floats: 7 launches of the elementwise group's fixed cost (unfitted on eager ops:
  // 2,450 ns each, costmodel/models/waves.json) and a few bytes: 17.15 us. The H200 lease measured
  // 17.2 us for such steps (docs/VALIDATION.md).
  const auto waves = costmodel::builtin_cost_sources().create("waves", costmodel::find_device("h200"));
  const int64_t t = waves->op_duration_ns(g, bias);
  CHECK(t >= 7 * costmodel::kUnfittedFixedCostNs);
  CHECK(t <= 7 * costmodel::kUnfittedFixedCostNs + 10);
}

namespace {

Op hyper_step(OpKind kind, std::vector<double> lr, std::vector<double> weight_decay,
              std::vector<double> momentum = {0.0}) {
  Op op;
  op.name = "w.step";
  op.kind = kind;
  op.attrs.emplace("lr", std::move(lr));
  op.attrs.emplace("weight_decay", std::move(weight_decay));
  if (kind == OpKind::sgd_step) {
    op.attrs.emplace("momentum", std::move(momentum));
  } else {
    op.attrs.emplace("beta1", std::vector<double>{0.9, 0.9});
    op.attrs.emplace("beta2", std::vector<double>{0.999, 0.999});
    op.attrs.emplace("eps", std::vector<double>{1e-8, 1e-8});
  }
  return op;
}

}  // namespace

TEST_CASE("fused Adam and AdamW: one kernel and 7 passes, decay inside; no temporaries unless per model") {
  for (OpKind kind : {OpKind::adam_step, OpKind::adamw_step}) {
    for (double wd : {0.0, 0.01}) {
      Op op = step(kind, wd);
      op.attrs.emplace("fused", int64_t{1});
      CHECK(is_fused_update(op));
      // Reads param, grad, exp_avg, exp_avg_sq; writes param, exp_avg, exp_avg_sq.
      check(optimizer_kernels(op), 1, 7);
    }
  }
  CHECK_FALSE(is_fused_update(step(OpKind::adam_step, 0.0)));
  Op bad = step(OpKind::adam_step, 0.0);
  bad.attrs.emplace("fused", int64_t{2});
  CHECK_THROWS_WITH_AS(is_fused_update(bad), "op 'w.step': attribute 'fused' = 2; expected 0 or 1",
                       GraphError);
  const std::vector<double> same{1e-3, 1e-3}, apart{1e-3, 1e-2}, decay{1e-2, 1e-2};
  Op uniform = hyper_step(OpKind::adam_step, same, decay);
  uniform.attrs.emplace("fused", int64_t{1});
  CHECK(optimizer_temporaries(uniform) == 0);
  // Per-model learning rates: the executor runs the broadcast form (exec/kernels/optimizer.cpp).
  Op per_model = hyper_step(OpKind::adam_step, apart, decay);
  per_model.attrs.emplace("fused", int64_t{1});
  CHECK(optimizer_temporaries(per_model) == 4);
  // A fused step in a zoo model's training step: resnet18's largest weight, one launch over 7 passes,
  // no workspace; under amp-fp16 GradScaler leaves the unscale to the fused kernel.
  zoo::ModelConfig config;
  config.batch_size = 32;
  config.precision = Precision::amp_fp16;
  transforms::OptimizerConfig fused;
  fused.kind = transforms::OptimizerKind::adam_fused;
  const Graph g = transforms::build_training_step(zoo::build_model("resnet18", config), fused);
  const Op& big = test::op_named(g, "layer4.1.conv2.weight.adam_step");
  CHECK(big.workspace_bytes == 0);
  const std::vector<costmodel::OpKernel> k = costmodel::op_kernels(g, big);
  REQUIRE(k.size() == 1);
  CHECK(k[0].launches == 1);
  CHECK(k[0].sample.bytes == doctest::Approx(7.0 * 9'437'184));
  for (const Op& op : g.ops) CHECK(op.kind != OpKind::amp_unscale);
  const Graph plain = transforms::build_training_step(zoo::build_model("resnet18", config), {});
  CHECK(test::op_named(plain, "layer4.1.conv2.weight.adam_step").workspace_bytes ==
        2 * allocation_bytes(9'437'184));
}

TEST_CASE("the weight-sized temporaries each step holds at once, counted by hand from the executor") {
  const std::vector<double> same{1e-3, 1e-3}, apart{1e-3, 1e-2}, none{0.0, 0.0}, decay{1e-2, 1e-2};
  // Uniform Adam: v.sqrt() and its quotient by sqrt(bias_correction2) coexist; + grad.add(p, wd).
  CHECK(optimizer_temporaries(hyper_step(OpKind::adam_step, same, none)) == 2);
  CHECK(optimizer_temporaries(hyper_step(OpKind::adam_step, same, decay)) == 3);
  CHECK(optimizer_temporaries(hyper_step(OpKind::adamw_step, same, decay)) == 2);  // p.mul_ in place
  // Per-model learning rates: denom, m * (lr / bias_correction1) and its quotient; + grad + wd * p.
  CHECK(optimizer_temporaries(hyper_step(OpKind::adam_step, apart, none)) == 3);
  CHECK(optimizer_temporaries(hyper_step(OpKind::adam_step, apart, decay)) == 4);
  CHECK(optimizer_temporaries(hyper_step(OpKind::adamw_step, apart, decay)) == 3);
  // SGD: in place unless decayed (grad.add(p, wd); per model wd * p and grad + wd * p) or the
  // learning rates differ (d * lr), the decayed direction held until momentum replaces it.
  CHECK(optimizer_temporaries(hyper_step(OpKind::sgd_step, same, none, {0.9, 0.9})) == 0);
  CHECK(optimizer_temporaries(hyper_step(OpKind::sgd_step, same, decay, {0.9, 0.9})) == 1);
  CHECK(optimizer_temporaries(hyper_step(OpKind::sgd_step, same, {1e-2, 1e-3}, {0.9, 0.9})) == 2);
  CHECK(optimizer_temporaries(hyper_step(OpKind::sgd_step, apart, none, {0.9, 0.9})) == 1);
  CHECK(optimizer_temporaries(hyper_step(OpKind::sgd_step, apart, decay, {0.9, 0.9})) == 1);
  CHECK(optimizer_temporaries(hyper_step(OpKind::sgd_step, apart, decay, {0.0, 0.0})) == 2);
  Op relu;
  relu.kind = OpKind::relu;
  CHECK(optimizer_temporaries(relu) == 0);
}

TEST_CASE("an Adam step's temporaries are its workspace; dlrm's peak on the H100 lease is Adam's") {
  // 4 fused dlrm at batch 128, the H100 lease's plain run (tests/fixtures/device/h100-2026-11-27,
  // results.db run 59): torch.cuda.max_memory_allocated 39,834,057,728 B, which the accounting
  // without the temporaries missed by 13.1 %.
  const Graph g = test::zoo_step("dlrm", 128, 4);
  const Op& adam = test::op_named(g, "emb_l.2.weight.adam_step");
  const int64_t table = g.tensor(adam.inputs[0]).bytes;  // the largest table, 4 models' rows
  CHECK(table == 2'593'594'112);
  CHECK(adam.workspace_bytes == 2 * allocation_bytes(table));
  const auto h100 =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("h100-sxm-80gb"));
  const Schedule plain = policies::build_plain_schedule({g});
  const sim::Prediction p = sim::simulate(plain, *h100);
  REQUIRE(p.peak_instruction != kNoId);
  CHECK(plain.instructions[static_cast<size_t>(p.peak_instruction)].op == adam.id);
  const double measured = 39'834'057'728.0;
  // 41.5 MiB short: cuBLAS's 32 MiB workspace on Hopper (PyTorch's, from the caching allocator) is
  // not in the memory rule.
  CHECK(static_cast<double>(p.peak_bytes) == doctest::Approx(measured).epsilon(0.002));
  CHECK(p.peak_bytes < measured);
  // Without the workspace the step peaks where the lease's stored prediction did, to the byte.
  Graph without = g;
  for (Op& op : without.ops) {
    if (is_optimizer_update(op.kind)) op.workspace_bytes = 0;
  }
  const sim::Prediction q = sim::simulate(policies::build_plain_schedule({without}), *h100);
  CHECK(q.peak_bytes == 34'609'979'392);
}
