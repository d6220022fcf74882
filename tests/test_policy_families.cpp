// Every registered policy on every model family: the schedule it returns validates, a feasible
// plan runs within the limit in simulation, and an infeasible one names the smallest limit it meets
// (and really meets it). Limits: 60 % of the unoptimised peak (the figure) and resident
// bytes + 60 % of the activation part of that peak (weights, gradients and Adam state are never
// moved by these policies, so on small graphs 60 % of the whole peak is often below them).
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <set>
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

namespace {

struct Family {
  std::string model;
  int64_t batch = 2;
  int64_t seq_len = 0;
  int64_t image_size = 0;
};

// One small member per family: small enough for a unit test, real layer structure.
const std::vector<Family>& families() {
  static const std::vector<Family> f = {{"bert-base", 4, 64, 0},    {"gpt2", 2, 64, 0},
                                        {"vit-b16", 4, 0, 64},      {"resnet18", 32, 0, 64},
                                        {"mobilenet-v2", 8, 0, 64}, {"dlrm", 64, 0, 0}};
  return f;
}

ir::Schedule base_step(const Family& f) {
  policies::ModelArray array;
  array.model = f.model;
  array.count = 1;
  array.config.batch_size = f.batch;
  array.config.seq_len = f.seq_len;
  array.config.image_size = f.image_size;
  return policies::build_plain_schedule(policies::sub_array_steps(array, {1}));
}

const costmodel::OpCostModel& a100() {
  static const std::unique_ptr<costmodel::OpCostModel> model =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
  return *model;
}

sim::Prediction simulate_at(const ir::Schedule& s, int64_t limit_bytes) {
  sim::SimOptions options;
  options.memory_limit_bytes = limit_bytes;
  return sim::simulate(s, a100(), options);
}

// The contract of MemoryPolicy::plan, checked on one (family, policy, limit).
void check_contract(const policies::PolicyResult& r, int64_t limit_bytes) {
  CHECK_NOTHROW(ir::validate_schedule(r.schedule));
  if (r.feasible) {
    const sim::Prediction p = simulate_at(r.schedule, limit_bytes);
    CHECK_FALSE(p.oom);
    CHECK(p.peak_bytes <= limit_bytes);
    CHECK(r.peak_bytes == p.peak_bytes);
    CHECK(r.step_time_ns == p.step_time_ns);
  } else {
    CHECK(r.peak_bytes > limit_bytes);  // it did not fit, so what it needs is above the limit
  }
}

}  // namespace

TEST_CASE("every policy on every family returns a valid schedule that fits or says what it needs") {
  std::map<std::string, std::set<std::string>> fits;  // policy -> families it fits at activation_limit
  for (const Family& f : families()) {
    const ir::Schedule base = base_step(f);
    const sim::Prediction plain = simulate_at(base, -1);
    const int64_t whole_limit = plain.peak_bytes * 6 / 10;
    const int64_t activation_limit =
        plain.resident_bytes + (plain.peak_bytes - plain.resident_bytes) * 6 / 10;
    for (const policies::PolicyInfo& info : policies::builtin_policies().policies()) {
      CAPTURE(f.model);
      CAPTURE(info.name);
      const std::unique_ptr<policies::MemoryPolicy> policy = info.create();
      for (const int64_t limit : {whole_limit, activation_limit}) {
        CAPTURE(limit);
        policies::PolicyInput in;
        in.base = &base;
        in.cost = &a100();
        in.memory_limit_bytes = limit;
        const policies::PolicyResult r = policy->plan(in);
        check_contract(r, limit);
        if (limit == activation_limit && r.feasible) fits[info.name].insert(f.model);
      }
    }
  }
  // 60 % of the whole peak is below the resident bytes of every family here: nothing fits there
  // (checked by check_contract: every result at whole_limit is infeasible and says so).
  // At resident + 60 % of activations:
  // - none moves nothing, and every plain peak is above the limit;
  // - bert-base and gpt2 fit under no policy: their floor is the dense word-embedding gradient
  //   (94 MB / 154 MB) written at the end of the backward while every weight's gradient is live;
  //   only a policy that moved gradients or optimizer state could go lower;
  // - dlrm's floor is Adam's: its largest embedding table's update holds two temporaries of the
  //   table's size (ir/optimizer_kernels.hpp) beside 8.65 GB of tables and their Adam state, 1.3 GB
  //   above the resident bytes where its activations are 810 KB: no activation policy fits it;
  // - resnet18 at batch 32 (at batch 8 Adam's temporaries set its floor too).
  const std::set<std::string> vision_and_vit = {"mobilenet-v2", "resnet18", "vit-b16"};
  CHECK(fits["none"].empty());
  for (const char* policy : {"capuchin", "mutwo", "vdnn", "checkpoint", "dtr", "dtr-eqclass"}) {
    CAPTURE(policy);
    CHECK(fits[policy] == vision_and_vit);
  }
  CHECK(fits["checkmate"].empty());  // every family's step is over its 60-op limit
}
