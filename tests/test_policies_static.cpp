// The static policies none, checkpoint (Chen et al. 2016) and vdnn (Rhu et al. 2016) on small real
// training steps with the analytic cost model of an A100-40GB: what each saves and what it costs.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "ir/schedule_check.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "sim/simulator.hpp"

using namespace mutwo;
using policies::PolicyInput;
using policies::PolicyResult;

namespace {

struct Case {
  std::string label;
  ir::Schedule base;
  // The plain step's peak is set by activations (false: by something no activation policy moves).
  bool activation_bound = true;
};

// resnet18 at image 64, bert-base at sequence length `seq_len`.
ir::Schedule step(const std::string& model, std::vector<int32_t> partition, int64_t batch = 2,
                  int64_t seq_len = 32) {
  policies::ModelArray array;
  array.model = model;
  array.config.batch_size = batch;
  if (model == "resnet18") {
    array.config.image_size = 64;
  } else {
    array.config.seq_len = seq_len;
  }
  array.count = 0;
  for (int32_t n : partition) array.count += n;
  return policies::build_plain_schedule(policies::sub_array_steps(array, partition));
}

std::vector<Case> cases() {
  // bert-base at batch 2, sequence 32 peaks in word_embeddings.backward (its dense 30522 x 768 f32
  // gradient, 94 MB, at the very end of the backward), after every activation is gone.
  // resnet18 at batch 32: its activations, not Adam's temporaries beside the resident state
  // (ir/optimizer_kernels.hpp), set the plain peak.
  return {{"resnet18", step("resnet18", {1}, 32)},
          {"bert-base", step("bert-base", {1}), false},
          {"bert-base b8 s128", step("bert-base", {1}, 8, 128)},
          {"resnet18 x2 + x1", step("resnet18", {2, 1}, 32)}};
}

const costmodel::OpCostModel& a100() {
  static const std::unique_ptr<costmodel::OpCostModel> model =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  return *model;
}

PolicyResult run(const std::string& policy, const ir::Schedule& base, int64_t limit_bytes) {
  PolicyInput in;
  in.base = &base;
  in.cost = &a100();
  in.memory_limit_bytes = limit_bytes;
  return policies::builtin_policies().create(policy)->plan(in);
}

constexpr int64_t kRoomy = int64_t{40} << 30;  // 40 GiB: every plan here fits

}  // namespace

TEST_CASE("none returns the base schedule and its simulated step") {
  for (const Case& c : cases()) {
    CAPTURE(c.label);
    const PolicyResult r = run("none", c.base, kRoomy);
    CHECK(r.feasible);
    CHECK(r.schedule.policy == "none");
    CHECK(r.schedule.instructions.size() == c.base.instructions.size());
    const sim::Prediction p = sim::simulate(c.base, a100());
    CHECK(r.peak_bytes == p.peak_bytes);
    CHECK(r.step_time_ns == p.step_time_ns);
  }
}

TEST_CASE("checkpoint lowers the peak by recomputing, and the result validates") {
  for (const Case& c : cases()) {
    CAPTURE(c.label);
    const PolicyResult none = run("none", c.base, kRoomy);
    const PolicyResult r = run("checkpoint", c.base, kRoomy);
    CAPTURE(r.note);
    REQUIRE_NOTHROW(ir::validate_schedule(r.schedule));
    CHECK(r.schedule.policy == "checkpoint");
    CHECK(r.feasible);
    if (c.activation_bound) {
      CHECK(r.peak_bytes < none.peak_bytes);
    } else {
      CHECK(r.peak_bytes == none.peak_bytes);
    }
    const sim::Prediction p = sim::simulate(r.schedule, a100());
    CHECK(p.recompute_ns > 0);
    CHECK(p.bytes_swapped_out == 0);
    // Chen's sqrt(n) plan recomputes each dropped activation about once: at most one extra forward.
    int64_t forward_ns = 0;
    for (const ir::Op& op : c.base.graph.ops) {
      if (op.phase == ir::Phase::forward) forward_ns += a100().op_duration_ns(c.base.graph, op);
    }
    CHECK(p.recompute_ns <= forward_ns);
    CHECK(r.step_time_ns == p.step_time_ns);
    CHECK(r.step_time_ns > none.step_time_ns);
  }
}

TEST_CASE("vdnn swaps every saved activation and lowers the peak") {
  for (const Case& c : cases()) {
    CAPTURE(c.label);
    const PolicyResult none = run("none", c.base, kRoomy);
    const PolicyResult r = run("vdnn", c.base, kRoomy);
    CAPTURE(r.note);
    REQUIRE_NOTHROW(ir::validate_schedule(r.schedule));
    CHECK(r.schedule.policy == "vdnn");
    CHECK(r.feasible);
    const sim::Prediction p = sim::simulate(r.schedule, a100());
    CHECK(p.bytes_swapped_out > 0);
    CHECK(p.bytes_swapped_in == p.bytes_swapped_out);  // everything that leaves comes back
    CHECK(p.recompute_ns == 0);
    // Prefetches are issued one layer ahead in the backward: a swap_in waits on a backward compute
    // (besides its free), unless the tensor's reader is the first backward op after the loss.
    size_t swap_ins = 0;
    size_t one_layer_ahead = 0;
    for (const ir::Instruction& in : r.schedule.instructions) {
      if (in.kind != ir::InstrKind::swap_in) continue;
      ++swap_ins;
      for (ir::InstrId w : in.waits) {
        const ir::Instruction& trigger = r.schedule.instructions[static_cast<size_t>(w)];
        if (trigger.kind == ir::InstrKind::compute &&
            r.schedule.graph.op(trigger.op).phase == ir::Phase::backward) {
          ++one_layer_ahead;
        }
      }
    }
    CHECK(swap_ins > 0);
    CHECK(one_layer_ahead * 10 >= swap_ins * 9);
    if (c.activation_bound) {
      CHECK(r.peak_bytes < none.peak_bytes);
    } else {
      CHECK(r.peak_bytes == none.peak_bytes);
    }
  }
}

TEST_CASE(
    "at 60 % of the plain peak the resident state alone does not fit; at 60 % of its activations it does") {
  for (const Case& c : cases()) {
    CAPTURE(c.label);
    const PolicyResult none = run("none", c.base, kRoomy);
    const int64_t resident = sim::simulate(c.base, a100()).resident_bytes;
    // Weights, gradients and optimizer state (momentum for resnet18, two Adam moments for bert) are
    // resident all step: 187 MB of resnet18's 191 MB peak, 1.76 GB of bert-base's 1.95 / 2.82 GB.
    // 60 % of the plain peak is below that, so no swap/recompute plan can fit there.
    const int64_t limit = none.peak_bytes * 6 / 10;
    REQUIRE(resident > limit);
    const PolicyResult r = run("checkpoint", c.base, limit);
    CHECK_FALSE(r.feasible);
    CHECK(r.peak_bytes > resident);
    if (!c.activation_bound) continue;
    // What checkpointing can reach is the activation part of the peak: resnet18 keeps 58 % of it
    // (its peak is the recompute of the first, largest-resolution segment), bert-base b8 s128 29 %.
    const int64_t activation_limit = resident + (none.peak_bytes - resident) * 6 / 10;
    const PolicyResult fit = run("checkpoint", c.base, activation_limit);
    CAPTURE(fit.note);
    CHECK(fit.feasible);
    CHECK(fit.peak_bytes <= activation_limit);
  }
}

TEST_CASE("a limit below what a plan needs is reported infeasible with the plan's peak") {
  const ir::Schedule base = step("resnet18", {1});
  // 1 byte over the weights, gradients, optimizer state and inputs resident at t = 0: no step fits.
  const int64_t limit = sim::simulate(base, a100()).resident_bytes + 1;
  for (const std::string policy : {"none", "checkpoint", "vdnn"}) {
    CAPTURE(policy);
    const PolicyResult r = run(policy, base, limit);
    CHECK_FALSE(r.feasible);
    CHECK(r.step_time_ns == 0);
    sim::SimOptions unlimited;
    unlimited.memory_limit_bytes = -1;
    CHECK(r.peak_bytes == sim::simulate(r.schedule, a100(), unlimited).peak_bytes);
    CHECK(r.peak_bytes > limit);
    // At exactly its peak the same plan fits.
    CHECK(run(policy, base, r.peak_bytes).feasible);
  }
}

TEST_CASE("bad policy input is refused naming the field") {
  const ir::Schedule base = step("resnet18", {1});
  for (const std::string policy : {"none", "checkpoint", "vdnn"}) {
    CAPTURE(policy);
    CHECK_THROWS_WITH_AS(
        run(policy, base, 0),
        ("policy '" + policy + "': input field 'memory_limit_bytes' = 0 must be > 0").c_str(), Error);
    PolicyInput in;
    in.cost = &a100();
    in.memory_limit_bytes = kRoomy;
    CHECK_THROWS_WITH_AS(policies::builtin_policies().create(policy)->plan(in),
                         ("policy '" + policy + "': input field 'base' is null").c_str(), Error);
  }
}
