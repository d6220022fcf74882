// A scheduled step under any policy, partition and sub-array order (swaps, recomputes,
// multiplexing) leaves bit-identical state to the `none` schedule of the same partition on the CPU:
// swapping a tensor out and back in, or recomputing it (dropout draws its mask again from the same
// seeded stream), must not change a single bit of any weight, gradient or optimizer state.
#include "tests/support/torch_doctest.hpp"

#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "exec/device_backend.hpp"
#include "exec/interpreter.hpp"
#include "policies/array_plan.hpp"
#include "policies/model_array.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "policies/state_offload.hpp"
#include "sim/simulator.hpp"
#include "tests/support/exec_arrays.hpp"

namespace {

using namespace mutwo;

using ir::Schedule;
using test::sim_options;

constexpr int kSteps = 2;  // two steps: Adam's second step reads the moments the first wrote

struct Outcome {
  std::vector<at::Tensor> state;  // every persistent tensor after the steps, by tensor id
  std::vector<double> losses;     // last step, per model
};

Outcome run(const Schedule& schedule) {
  auto backend = exec::make_backend("cpu");
  exec::InterpreterOptions options;
  options.seed = 7;
  exec::Interpreter interpreter(schedule, *backend, options);
  Outcome out;
  for (int i = 0; i < kSteps; ++i) {
    const exec::StepResult r = interpreter.step();
    REQUIRE_FALSE(r.oom);
    out.losses = r.losses;
  }
  for (const ir::Tensor& t : schedule.graph.tensors) {
    // Gradients a schedule keeps on the host exist only during the step: left undefined.
    const at::Tensor value = ir::is_persistent(t.role) ? interpreter.tensor(t.id) : at::Tensor();
    out.state.push_back(value.defined() ? value.clone() : at::Tensor());
  }
  return out;
}

struct Actions {
  int swaps = 0;
  int recomputes = 0;
  int dropout_recomputes = 0;
};

Actions count_actions(const Schedule& s) {
  Actions a;
  for (const ir::Instruction& i : s.instructions) {
    if (i.kind == ir::InstrKind::swap_out) ++a.swaps;
    if (i.kind == ir::InstrKind::recompute) {
      ++a.recomputes;
      if (s.graph.op(i.op).kind == ir::OpKind::dropout) ++a.dropout_recomputes;
    }
  }
  return a;
}

// Every persistent tensor equal bit for bit (at::equal compares every element exactly; NaN would
// differ, and none appears in these steps).
void check_identical(const Schedule& schedule, const Outcome& reference, const Outcome& got,
                     const std::string& what) {
  REQUIRE(reference.state.size() == got.state.size());
  int differing = 0;
  std::string first;
  for (size_t i = 0; i < got.state.size(); ++i) {
    if (!got.state[i].defined()) continue;
    if (!at::equal(reference.state[i], got.state[i])) {
      if (differing++ == 0) first = schedule.graph.tensors[i].name;
    }
  }
  INFO(what << ": first differing tensor " << first);
  CHECK(differing == 0);
  CHECK(got.losses == reference.losses);
}

struct Family {
  std::string model;
  transforms::OptimizerKind optimizer;
};

}  // namespace

TEST_CASE("every policy x partition x order gives bit-identical state to the none schedule") {
  const auto cost = costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  const std::vector<std::string> policy_names = {"none",  "checkpoint", "vdnn",       "capuchin",
                                                 "mutwo", "dtr",        "dtr-eqclass"};
  const std::vector<Family> families = {
      {"bert-mini", transforms::OptimizerKind::adam},        {"gpt2-mini", transforms::OptimizerKind::adamw},
      {"vit-mini", transforms::OptimizerKind::adam},         {"resnet-mini", transforms::OptimizerKind::sgd},
      {"mobilenetv3-mini", transforms::OptimizerKind::adam}, {"dlrm-mini", transforms::OptimizerKind::sgd}};
  const std::vector<std::vector<int32_t>> partitions = {{3}, {1, 2}};
  Actions total;
  for (const Family& family : families) {
    policies::ModelArray array;
    array.model = family.model;
    array.count = 3;
    array.optimizer.kind = family.optimizer;
    array.optimizer.lr = {1e-2, 2e-2, 3e-2};  // per model, as an HFTA sweep
    array.optimizer.weight_decay = {0.01};
    for (const auto& partition : partitions) {
      const std::vector<ir::Graph> parts = policies::sub_array_steps(array, partition);
      // The reference: the none plan of the same sub-arrays in the same (multiplex) order.
      const auto none = policies::builtin_policies().create("none");
      const Schedule plain = policies::plan_sub_arrays(parts, *none, *cost, int64_t{1} << 40,
                                                       policies::SubArrayOrder::back_to_back)
                                 .result.schedule;
      const Outcome reference = run(plain);
      const sim::Prediction unlimited = sim::simulate(plain, *cost, sim_options(-1));
      // Resident state plus 60 % of the activations: tight enough that every policy acts.
      const int64_t limit =
          unlimited.resident_bytes + (unlimited.peak_bytes - unlimited.resident_bytes) * 6 / 10;
      for (const std::string& name : policy_names) {
        for (auto order : {policies::SubArrayOrder::multiplexed, policies::SubArrayOrder::back_to_back}) {
          if (partition.size() == 1 && order == policies::SubArrayOrder::back_to_back) continue;
          const auto policy = policies::builtin_policies().create(name);
          const Schedule planned =
              policies::plan_sub_arrays(parts, *policy, *cost, limit, order).result.schedule;
          const Actions a = count_actions(planned);
          total.swaps += a.swaps;
          total.recomputes += a.recomputes;
          total.dropout_recomputes += a.dropout_recomputes;
          const std::string what =
              fmt::format("{} [{}] {} {} ({} swaps, {} recomputes)", family.model, fmt::join(partition, ","),
                          name, policies::order_name(order), a.swaps, a.recomputes);
          CAPTURE(what);
          check_identical(planned, reference, run(planned), what);
        }
      }
    }
  }
  // The property is only tested if the plans act: swaps, recomputes, and recomputed dropout masks.
  CHECK(total.swaps > 100);
  CHECK(total.recomputes > 100);
  CHECK(total.dropout_recomputes > 0);
}

TEST_CASE("model state kept on the host gives bit-identical state and losses to the resident none schedule") {
  // Every family, 1+2 multiplexed, planned with state offload at a limit below the resident state,
  // the optimizer on the device (weights and optimizer state go to the host and back every step,
  // gradients live only in the step) and on the host (gradients copied out, the update run on the
  // host copies, weights back in; ZeRO-Offload). Weights and optimizer state after two steps (read
  // from their host homes) and the losses equal the resident none schedule's bit for bit.
  const auto cost = costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  const std::vector<Family> families = {
      {"bert-mini", transforms::OptimizerKind::adam},        {"gpt2-mini", transforms::OptimizerKind::adamw},
      {"vit-mini", transforms::OptimizerKind::adam},         {"resnet-mini", transforms::OptimizerKind::sgd},
      {"mobilenetv3-mini", transforms::OptimizerKind::adam}, {"dlrm-mini", transforms::OptimizerKind::sgd}};
  int state_swaps = 0;
  int host_updates = 0;
  for (const Family& family : families) {
    policies::ModelArray array;
    array.model = family.model;
    array.count = 3;
    array.optimizer.kind = family.optimizer;
    array.optimizer.lr = {1e-2, 2e-2, 3e-2};
    const std::vector<ir::Graph> parts = policies::sub_array_steps(array, {1, 2});
    const auto none = policies::builtin_policies().create("none");
    const policies::ArrayPlan reference_plan =
        policies::plan_sub_arrays(parts, *none, *cost, int64_t{1} << 40, policies::SubArrayOrder::multiplexed);
    const Outcome reference = run(reference_plan.result.schedule);
    const sim::Prediction unlimited = sim::simulate(reference_plan.result.schedule, *cost, sim_options(-1));
    for (const std::string name : {"none", "capuchin"}) {
      for (const policies::OptimizerPlace place : {policies::OptimizerPlace::device, policies::OptimizerPlace::host}) {
        const auto policy = policies::builtin_policies().create(name);
        policies::PolicyInput input;
        input.base = &reference_plan.result.schedule;
        input.cost = cost.get();
        input.memory_limit_bytes = unlimited.peak_bytes;
        const policies::PolicyResult r = policies::plan_with_state_offload(*policy, input, place);
        CAPTURE(family.model);
        CAPTURE(name);
        CAPTURE(policies::optimizer_place_name(place));
        REQUIRE(r.feasible);
        REQUIRE_FALSE(r.schedule.host_state.empty());
        CHECK((r.schedule.host_stream != ir::kNoStream) == (place == policies::OptimizerPlace::host));
        CHECK(r.prediction.resident_bytes < unlimited.resident_bytes);
        for (const ir::Instruction& i : r.schedule.instructions) {
          if (i.kind == ir::InstrKind::swap_in && ir::is_persistent(r.schedule.graph.tensor(i.tensor).role))
            ++state_swaps;
          if (ir::runs_on_host(r.schedule, i)) ++host_updates;
        }
        check_identical(r.schedule, reference, run(r.schedule),
                        fmt::format("{} {}+offload, optimizer on the {}", family.model, name,
                                    policies::optimizer_place_name(place)));
      }
    }
  }
  CHECK(state_swaps > 100);
  CHECK(host_updates > 100);
}
