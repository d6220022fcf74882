// An optimizer step is priced as the kernels torch.optim runs over the weight (ir/optimizer_kernels.hpp),
// counted by hand from torch/optim/adam.py and sgd.py (and exec/kernels/optimizer.cpp, which follows them).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/wave_model.hpp"
#include "ir/optimizer_kernels.hpp"
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
