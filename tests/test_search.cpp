// The search over partitions x policies and its baselines (sequential, hfta, hfta+capuchin), on
// small arrays with the analytic cost model of an A100-40GB.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/device_catalog.hpp"
#include "policies/model_array.hpp"
#include "policies/multiplex.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_registry.hpp"
#include "policies/policy_result.hpp"
#include "policies/search.hpp"
#include "policies/strategy.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"

using namespace mutwo;
using namespace mutwo::policies;

namespace {

struct Device {
  std::unique_ptr<costmodel::OpCostModel> cost =
      costmodel::builtin_cost_sources().create("analytic", costmodel::find_device("a100-40gb"));
};
const Device& device() {
  static const Device d;
  return d;
}

// 4 resnet18 at batch 8, 64x64 images: state (weights, gradients, Adam) dominates memory.
ArchitectureCount resnet18(int32_t count) {
  ArchitectureCount a;
  a.model = "resnet18";
  a.count = count;
  a.config.batch_size = 8;
  a.config.image_size = 64;
  return a;
}

// 4 bert-base at batch 4, sequence length 64.
ArchitectureCount bert_small(int32_t count) {
  ArchitectureCount a;
  a.model = "bert-base";
  a.count = count;
  a.config.batch_size = 4;
  a.config.seq_len = 64;
  return a;
}

SearchConfig config_for(std::vector<ArchitectureCount> architectures, int64_t limit,
                        std::vector<std::string> policies = {}) {
  SearchConfig c;
  c.architectures = std::move(architectures);
  c.cost = device().cost.get();
  c.memory_limit_bytes = limit;
  c.policies = std::move(policies);
  return c;
}

const ir::Graph& step(const ArchitectureCount& a, int32_t width) {
  static std::vector<std::unique_ptr<StepGraphCache>> caches;
  for (const auto& c : caches) {
    const ArchitectureCount& k = c->architectures().front();
    if (k.model == a.model && k.config.batch_size == a.config.batch_size && k.count >= width)
      return c->get(0, width);
  }
  ArchitectureCount wide = a;
  wide.count = 8;
  caches.push_back(
      std::make_unique<StepGraphCache>(std::vector<ArchitectureCount>{wide}, transforms::OptimizerConfig{}));
  return caches.back()->get(0, width);
}

// The plain (no memory optimisation) step of `width` fused models, simulated without a limit.
sim::Prediction plain(const ArchitectureCount& a, int32_t width) {
  sim::SimOptions o;
  o.memory_limit_bytes = -1;
  return sim::simulate(build_plain_schedule({step(a, width)}), *device().cost, o);
}

const SearchRow& row_of(const SearchReport& r, const std::string& strategy, const std::string& partition = "",
                        const std::string& policy = "") {
  for (const SearchRow& row : r.rows) {
    if (row.strategy == strategy && (partition.empty() || row.partition == partition) &&
        (policy.empty() || row.policy == policy)) {
      return row;
    }
  }
  FAIL("no row " << strategy << " " << partition << " " << policy);
  return r.rows.front();
}

}  // namespace

TEST_CASE("rows are sorted by throughput with infeasible rows last, and feasible rows fit the limit") {
  // 4 resnet18 fused without memory optimisation peak at 806,742,016 B; 10 MB less makes the
  // plain {4} plan infeasible while capuchin, mutwo, ... still fit it.
  const int64_t limit = plain(resnet18(1), 4).peak_bytes - 10'000'000;
  SearchConfig c = config_for({resnet18(4)}, limit);
  c.top = 100;  // every plan the pruning rules let through
  const SearchReport r = run_search(c);
  REQUIRE(r.rows.size() >= 4);
  bool seen_infeasible = false;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const SearchRow& row = r.rows[i];
    if (row.feasible) {
      CHECK_FALSE(seen_infeasible);
      CHECK(row.peak_bytes <= limit);
      if (i > 0) CHECK(r.rows[i - 1].samples_per_s >= row.samples_per_s);
    } else {
      if (seen_infeasible) CHECK(r.rows[i - 1].peak_bytes <= row.peak_bytes);
      seen_infeasible = true;
      CHECK(row.peak_bytes > limit);  // the smallest limit it meets is above this one
    }
  }
  CHECK(seen_infeasible);  // mutwo resnet18:4 none: 806,742,016 B > limit
  CHECK(r.any_feasible());
  REQUIRE(r.best_schedule.has_value());
}

TEST_CASE("the hfta row's speed-up over hfta is exactly 1") {
  const SearchReport r = run_search(config_for({resnet18(4)}, 0));  // the device's 40 GiB
  CHECK(row_of(r, "hfta").speedup_over_hfta == 1.0);
  // Every feasible row: its throughput over hfta's.
  for (const SearchRow& row : r.rows) {
    CHECK(row.speedup_over_hfta == doctest::Approx(row.samples_per_s / row_of(r, "hfta").samples_per_s));
  }
}

TEST_CASE("sequential runs each model alone: 4 x the single model's step") {
  const SearchReport r = run_search(config_for({resnet18(4)}, 0));
  const sim::Prediction one = plain(resnet18(1), 1);
  const SearchRow& seq = row_of(r, "sequential");
  // 4 x 1,929,620 ns = 7,718,480 ns; 4 models x batch 8 = 32 samples per step.
  CHECK(seq.step_time_ns == 4 * one.step_time_ns);
  CHECK(seq.samples_per_s == doctest::Approx(32e9 / static_cast<double>(4 * one.step_time_ns)));
  CHECK(seq.peak_bytes == one.peak_bytes);  // one model on the device at a time
  CHECK(seq.partition == "resnet18:1+1+1+1");
  CHECK(seq.runs == 4);
  CHECK(r.samples_per_step == 32);
}

TEST_CASE("hfta fuses the widest group that fits and runs ceil(n / w) groups") {
  const sim::Prediction w1 = plain(resnet18(1), 1);
  const sim::Prediction w2 = plain(resnet18(1), 2);
  const sim::Prediction w3 = plain(resnet18(1), 3);
  REQUIRE(w2.peak_bytes < w3.peak_bytes);
  SUBCASE("a limit at width 3's peak: groups 3 + 1") {
    // peak(3) = 605,070,336 B fits at the limit; 4 does not: step(3) + step(1).
    const SearchReport r = run_search(config_for({resnet18(4)}, w3.peak_bytes, {"none"}));
    const SearchRow& hfta = row_of(r, "hfta");
    CHECK(hfta.partition == "resnet18:3+1");
    CHECK(hfta.step_time_ns == w3.step_time_ns + w1.step_time_ns);  // 2,871,503 + 1,929,620 ns
    CHECK(hfta.peak_bytes == w3.peak_bytes);
    CHECK(hfta.runs == 2);
  }
  SUBCASE("one byte less: width 2, groups 2 + 2") {
    const SearchReport r = run_search(config_for({resnet18(4)}, w3.peak_bytes - 1, {"none"}));
    const SearchRow& hfta = row_of(r, "hfta");
    CHECK(hfta.partition == "resnet18:2+2");
    CHECK(hfta.step_time_ns == 2 * w2.step_time_ns);  // 2 x 2,398,943 ns
  }
  SUBCASE("5 models at width 2's peak: groups 2 + 2 + 1") {
    const SearchReport r = run_search(config_for({resnet18(5)}, w2.peak_bytes, {"none"}));
    const SearchRow& hfta = row_of(r, "hfta");
    CHECK(hfta.partition == "resnet18:2+2+1");
    CHECK(hfta.step_time_ns == 2 * w2.step_time_ns + w1.step_time_ns);
  }
}

TEST_CASE("multiplexing two sub-arrays is no slower than running them back to back under vdnn") {
  // bert-base x4 (batch 4, seq 64) as 2 + 2 at 7 GiB: all 4 models' state is 7,046,846,976 B,
  // so vdnn must swap; multiplexed, one sub-array's swaps overlap the other's compute
  // (measured: 120.5 ms multiplexed against 124.6 ms back to back).
  const int64_t limit = int64_t{7} << 30;
  const SearchReport r = run_search(config_for({bert_small(4)}, limit, {"vdnn"}));
  const SearchRow& mux = row_of(r, "mutwo", "bert-base:2+2", "vdnn");
  REQUIRE(mux.feasible);
  const ir::Schedule back_to_back = build_plain_schedule({step(bert_small(4), 2), step(bert_small(4), 2)});
  PolicyInput input;
  input.base = &back_to_back;
  input.cost = device().cost.get();
  input.memory_limit_bytes = limit;
  const PolicyResult sequential = builtin_policies().create("vdnn")->plan(input);
  REQUIRE(sequential.feasible);
  CHECK(mux.step_time_ns <= sequential.step_time_ns);
  CHECK(mux.bytes_swapped > 0);
}

TEST_CASE("pruning keeps the best plan an exhaustive search finds") {
  // Exhaustive: every partition of 4 x every policy on the multiplexed base and, with several
  // sub-arrays, on the back-to-back base (the search keeps the better of the two), no pruning.
  const ArchitectureCount a = bert_small(4);
  const int64_t limit = int64_t{7} << 30;
  const std::vector<std::string> names = {"none", "vdnn", "capuchin", "mutwo"};
  int64_t best_ns = 0;
  for (const std::vector<int32_t>& p : integer_partitions(4)) {
    std::vector<ir::Graph> parts;
    std::vector<int64_t> est;
    for (int32_t w : p) est.push_back(estimated_step_ns(step(a, w), *device().cost));
    for (int32_t i : multiplex_order(est)) parts.push_back(step(a, p[static_cast<size_t>(i)]));
    std::vector<ir::Schedule> bases = {build_multiplexed_schedule(parts, *device().cost)};
    if (p.size() > 1) bases.push_back(build_plain_schedule(parts));
    for (const ir::Schedule& base : bases) {
      for (const std::string& n : names) {
        PolicyInput input{&base, device().cost.get(), limit};
        const PolicyResult res = builtin_policies().create(n)->plan(input);
        if (res.feasible && (best_ns == 0 || res.step_time_ns < best_ns)) best_ns = res.step_time_ns;
      }
    }
  }
  REQUIRE(best_ns > 0);
  SearchConfig c = config_for({a}, limit, names);
  c.top = 1;
  const SearchReport r = run_search(c);
  CHECK(row_of(r, "mutwo").step_time_ns == best_ns);
  CHECK(r.stats.partitions == 5);  // p(4) = 5
}

TEST_CASE("the search is deterministic") {
  const SearchConfig c = config_for({resnet18(3), bert_small(2)}, int64_t{12} << 30, {"none", "capuchin"});
  const SearchReport a = run_search(c);
  const SearchReport b = run_search(c);
  REQUIRE(a.rows.size() == b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    CHECK(a.rows[i].partition == b.rows[i].partition);
    CHECK(a.rows[i].policy == b.rows[i].policy);
    CHECK(a.rows[i].step_time_ns == b.rows[i].step_time_ns);
    CHECK(a.rows[i].peak_bytes == b.rows[i].peak_bytes);
  }
  // 3 resnet18 x 2 bert-base: p(3) x p(2) = 3 x 2 = 6 partitions; samples 3 x 8 + 2 x 4 = 32.
  CHECK(a.stats.partitions == 6);
  CHECK(a.samples_per_step == 32);
  CHECK(row_of(a, "sequential").partition == "resnet18:1+1+1, bert-base:1+1");
}

TEST_CASE("a limit no plan meets: every row infeasible, the smallest limit reported") {
  // One resnet18 alone peaks at 201,699,328 B; its weights alone are 46,758,816 B (11,689,512
  // parameters), which every plan holds at once between the forward and the backward, even with
  // the state offloaded and the optimizer on the host: 40 MB holds nothing.
  const SearchReport r = run_search(config_for({resnet18(4)}, 40'000'000, {"none", "capuchin"}));
  CHECK_FALSE(r.any_feasible());
  CHECK_FALSE(r.best_schedule.has_value());
  for (const SearchRow& row : r.rows) CHECK_FALSE(row.feasible);
  // The sequential row's single model is the smallest plan made: its plain peak (offloaded plans
  // are not made: one model alone with its state offloaded does not fit, rule 1').
  CHECK(r.smallest_limit_bytes == plain(resnet18(1), 1).peak_bytes);
}

TEST_CASE("bad search configurations name the field") {
  CHECK_THROWS_WITH_AS(run_search(config_for({}, 0)),
                       "search: the model array is empty; give at least one model", Error);
  ArchitectureCount zero = resnet18(0);
  CHECK_THROWS_WITH_AS(run_search(config_for({zero}, 0)), "search: model 'resnet18' count 0 must be >= 1",
                       Error);
  CHECK_THROWS_AS(run_search(config_for({resnet18(2)}, 0, {"lru"})), UnknownNameError);
  // Each model and policy once: a policy given twice planned every partition twice and printed its
  // rows twice.
  CHECK_THROWS_WITH_AS(run_search(config_for({resnet18(1), resnet18(1)}, 0)),
                       "search: model 'resnet18' is given twice; give it once with the total count", Error);
  CHECK_THROWS_WITH_AS(run_search(config_for({resnet18(2)}, 0, {"none", "capuchin", "none"})),
                       "search: policy 'none' is given twice; give each policy once", Error);
  SearchConfig c = config_for({resnet18(2)}, 0);
  c.top = 0;
  CHECK_THROWS_WITH_AS(run_search(c), "search: top 0 must be >= 1", Error);
  c.top = 1;
  c.cost = nullptr;
  CHECK_THROWS_WITH_AS(run_search(c), "search: no cost model", Error);
  CHECK(default_search_policies(builtin_policies()) != builtin_policies().names());  // checkmate left out
}

TEST_CASE("mutwo beats hfta+capuchin on 8 bert-base at 2x oversubscription") {
  // The μ-TWO setup: 8 bert-base, batch 16, A100-40GB. All 8 fused without memory optimisation
  // peak at 28.91 GiB < 40 GiB, so the limit is half that peak (2x oversubscribed).
  ArchitectureCount a;
  a.model = "bert-base";
  a.count = 8;
  a.config.batch_size = 16;
  const int64_t fused_peak = plain(a, 8).peak_bytes;
  const int64_t limit = fused_peak / 2;
  const SearchReport r = run_search(config_for({a}, limit));
  const SearchRow& mutwo = r.rows.front().strategy == "mutwo" ? r.rows.front() : row_of(r, "mutwo");
  const SearchRow& hc = row_of(r, "hfta+capuchin");
  REQUIRE(mutwo.feasible);
  // hfta+capuchin holds all 8 models fused: capuchin cannot bring them under 14.46 GiB, so the
  // mutwo strategy wins by being feasible at all.
  CHECK_FALSE(hc.feasible);
  CHECK(hc.peak_bytes > limit);
  CHECK(mutwo.peak_bytes <= limit);
}

// The fastest feasible row of a strategy; nullptr when it has none.
const SearchRow* best_of(const SearchReport& r, const std::string& strategy) {
  for (const SearchRow& row : r.rows) {
    if (row.strategy == strategy && row.feasible) return &row;  // rows are sorted by step time
  }
  return nullptr;
}

TEST_CASE("separate runs are part of the mutwo strategy: 2 + 2 beats hfta's 3 + 1") {
  const sim::Prediction w1 = plain(resnet18(1), 1);
  const sim::Prediction w2 = plain(resnet18(1), 2);
  const sim::Prediction w3 = plain(resnet18(1), 3);
  // At width 3's peak, hfta fuses 3 + 1 (2,871,503 + 1,929,620 ns); runs of 2 + 2 take 2 x
  // 2,398,943 ns, faster: the best split into separate runs is exact (dynamic programming over the
  // last run's width), so it never loses to hfta's or sequential's split.
  REQUIRE(2 * w2.step_time_ns < w3.step_time_ns + w1.step_time_ns);
  const SearchReport r = run_search(config_for({resnet18(4)}, w3.peak_bytes, {"none"}));
  const SearchRow& separate = row_of(r, "mutwo", "resnet18:2+2", "none");
  CHECK(separate.feasible);
  CHECK(separate.runs == 2);
  CHECK(separate.step_time_ns == 2 * w2.step_time_ns);
  CHECK(separate.peak_bytes == w2.peak_bytes);
  CHECK(separate.note == "separate runs: 2 sub-arrays one after another, each alone on the device");
  CHECK(r.rows.front().strategy == "mutwo");
  CHECK_FALSE(r.best_schedule_is_whole_step);  // the schedule kept is one run's
}

TEST_CASE("rule 2 with the separate runs as incumbent: the same best plan, fewer plans made") {
  // The array above at width 3's peak: the separate runs 2 + 2 (2 x 2,398,943 ns) win the mutwo
  // strategy. Every one-run partition whose compute bound is above that cannot beat them: with
  // prune_below_separate_runs they are skipped, and the strategy's best row is the same.
  const sim::Prediction w3 = plain(resnet18(1), 3);
  SearchConfig c = config_for({resnet18(4)}, w3.peak_bytes, {"none", "capuchin", "mutwo"});
  c.top = 1;
  const SearchReport full = run_search(c);
  c.prune_below_separate_runs = true;
  const SearchReport pruned = run_search(c);
  const SearchRow& a = row_of(full, "mutwo");
  const SearchRow& b = row_of(pruned, "mutwo");
  CHECK(a.partition == "resnet18:2+2");
  CHECK(b.partition == a.partition);
  CHECK(b.policy == a.policy);
  CHECK(b.runs == a.runs);
  CHECK(b.step_time_ns == a.step_time_ns);
  CHECK(pruned.stats.partitions_pruned_by_bound > full.stats.partitions_pruned_by_bound);
  CHECK(pruned.stats.plans < full.stats.plans);
}

TEST_CASE("mutwo is never slower than hfta or sequential, and feasible wherever they are (reduced grid)") {
  const sim::Prediction r1 = plain(resnet18(1), 1);
  const sim::Prediction b1 = plain(bert_small(1), 1);
  for (const auto& [arch, one] : {std::pair{resnet18(1), r1}, std::pair{bert_small(1), b1}}) {
    for (int32_t count : {2, 3, 5}) {
      // Limits from one model's plain peak (only separate runs of one fit) to twice it.
      for (double factor : {1.0, 1.5, 2.0}) {
        ArchitectureCount a = arch;
        a.count = count;
        const int64_t limit = static_cast<int64_t>(static_cast<double>(one.peak_bytes) * factor);
        const SearchReport r = run_search(config_for({a}, limit, {"none", "capuchin"}));
        CAPTURE(a.model);
        CAPTURE(count);
        CAPTURE(factor);
        const SearchRow* mutwo = best_of(r, "mutwo");
        for (const char* baseline : {"hfta", "sequential"}) {
          const SearchRow* b = best_of(r, baseline);
          if (b == nullptr) continue;
          REQUIRE(mutwo != nullptr);
          CHECK(mutwo->step_time_ns <= b->step_time_ns);
        }
      }
    }
  }
}

TEST_CASE("where no plan with resident model state fits in one run, one with the state offloaded does") {
  // 3 GPT-2 (124M) at batch 2 on 7 GiB: the state (weights, gradients, Adam moments) is 2.0 GB per
  // model, so one run holding all three models' state resident leaves too little for activations
  // (the best resident plan needs >= 7.53 GiB); with the state on the host between uses it fits, and
  // each weight and moment crosses the link once each way.
  ArchitectureCount a;
  a.model = "gpt2";
  a.count = 3;
  a.config.batch_size = 2;
  int64_t moved_bytes = 0;  // one model's weights and moments
  for (const ir::Tensor& t : step(a, 1).tensors) {
    if (ir::is_persistent(t.role) && t.role != ir::TensorRole::gradient) moved_bytes += t.bytes;
  }
  const int64_t limit = int64_t{7} << 30;
  const SearchReport r = run_search(config_for({a}, limit, {"none", "capuchin"}));
  int offloaded = 0;
  for (const SearchRow& row : r.rows) {
    if (row.strategy != "mutwo" || row.runs != 1 || !row.feasible) continue;
    CAPTURE(row.partition);
    CAPTURE(row.policy);
    CHECK(row.state_offloaded);  // resident, no one-run plan fits
    CHECK(row.policy.ends_with("+offload"));
    CHECK(row.state_bytes_swapped == 2 * 3 * moved_bytes);
    CHECK(row.peak_bytes <= limit);
    ++offloaded;
  }
  CHECK(offloaded >= 2);
  const SearchRow& none = row_of(r, "mutwo", "gpt2:1+1+1", "none+offload");
  CHECK(none.feasible);
  // Without offload, no one-run plan is feasible.
  SearchConfig without = config_for({a}, limit, {"none", "capuchin"});
  without.offload_partitions = 0;
  for (const SearchRow& row : run_search(without).rows) {
    CHECK_FALSE((row.strategy == "mutwo" && row.runs == 1 && row.feasible));
    CHECK_FALSE(row.state_offloaded);
  }
}

TEST_CASE("the rows, their order and the counts are the same on any number of threads") {
  // 3 resnet18 (batch 64, 128 px) and 2 bert-base on 5000 MiB: every kind of row, policies pruned
  // by rule 1, plans on both orders, plain steps that fit and plans with the state offloaded
  // (2, 12, 4 and 2 of the 24 rows of one-run plans).
  ArchitectureCount wide = resnet18(3);
  wide.config.batch_size = 64;
  wide.config.image_size = 128;
  SearchConfig c = config_for({wide, bert_small(2)}, int64_t{5000} << 20);
  c.top = 1000;
  const SearchReport one = run_search(c);
  c.jobs = 4;
  const SearchReport four = run_search(c);
  REQUIRE(one.rows.size() == four.rows.size());
  int pruned = 0, offloaded = 0, as_is = 0, planned = 0;
  for (size_t i = 0; i < one.rows.size(); ++i) {
    const SearchRow& a = one.rows[i];
    const SearchRow& b = four.rows[i];
    CAPTURE(i);
    CHECK(a.strategy == b.strategy);
    CHECK(a.partition == b.partition);
    CHECK(a.policy == b.policy);
    CHECK(a.feasible == b.feasible);
    CHECK(a.step_time_ns == b.step_time_ns);
    CHECK(a.peak_bytes == b.peak_bytes);
    CHECK(a.bytes_swapped == b.bytes_swapped);
    CHECK(a.note == b.note);
    if (a.strategy != "mutwo" || a.runs != 1) continue;
    pruned += a.pruned;
    offloaded += a.state_offloaded;
    as_is += a.policy == "none" && a.note.starts_with("fits without");
    planned += !a.pruned && !a.state_offloaded && a.policy != "none";
  }
  CHECK(one.stats.plans == four.stats.plans);
  CHECK(one.stats.pruned_by_memory == four.stats.pruned_by_memory);
  CHECK(one.stats.partitions_pruned_by_bound == four.stats.partitions_pruned_by_bound);
  CHECK(pruned > 0);
  CHECK(offloaded > 0);
  CHECK(as_is > 0);
  CHECK(planned > 0);
}

namespace {

// Plans a base of one sub-array as it is (`repeats` times, to take longer) and calls it feasible (so
// rule 1 passes it); throws on a base of several.
class ThrowsOnArrays : public MemoryPolicy {
 public:
  ThrowsOnArrays(std::string name, int repeats) : name_(std::move(name)), repeats_(repeats) {}
  std::string_view name() const override { return name_; }
  PolicyResult plan(const PolicyInput& input) const override {
    if (input.base->sub_arrays.size() > 1) throw Error(name_ + ": several sub-arrays");
    PolicyResult r = evaluate_schedule(*input.base, input, "fixture");
    for (int i = 1; i < repeats_; ++i) r = evaluate_schedule(*input.base, input, "fixture");
    r.feasible = true;
    return r;
  }

 private:
  std::string name_;
  int repeats_ = 1;
};

}  // namespace

TEST_CASE("a policy's error reaches the caller as a search on one thread reports it") {
  PolicyRegistry registry;
  for (const auto& [name, repeats] : {std::pair{"fixture-a", 20}, std::pair{"fixture-b", 1}}) {
    registry.add({name, "throws on several sub-arrays", "test",
                  [n = std::string(name), r = repeats] { return std::make_unique<ThrowsOnArrays>(n, r); }});
  }
  // resnet18:2 is visited first (fused, its compute bound is lower), where fixture-a takes longer, so
  // on several threads it starts first on resnet18:1+1, where both throw: the error reported is still
  // the first policy's in --policies order, as on one thread.
  SearchConfig c = config_for({resnet18(2)}, int64_t{250} << 20, {"fixture-b", "fixture-a"});
  c.registry = &registry;
  c.offload_partitions = 0;
  for (int32_t jobs : {1, 4}) {
    CAPTURE(jobs);
    c.jobs = jobs;
    CHECK_THROWS_WITH_AS(run_search(c), "fixture-b: several sub-arrays", Error);
  }
}
