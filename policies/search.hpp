#pragma once
// The search over sub-array partitions x swap/recompute policies (μ-TWO, Purandare et al., MLSys
// 2023): every array partition is multiplexed once and planned by every selected policy (a
// partition whose plain multiplexed step fits gets one 'none' row); with several sub-arrays each
// policy also plans the back-to-back order and the better plan is kept, since a greedy plan on the
// interleaved order (higher peak) is not always faster.
//
// Separate runs (HFTA's way of fitting, Wang et al., MLSys 2021) are part of the strategy too: the
// array may be split into fused sub-arrays that run one after another, each alone on the device
// with only its own state resident. Each width w of each architecture is planned alone at the whole
// limit (its plain step when it fits, else the fastest feasible policy plan), widths up to the
// first that fits under no policy; the fastest split of every architecture's count into such runs
// is found exactly by dynamic programming over the last run's width, and reported as one row
// (`runs` > 1, note "separate runs: ..."). hfta's groups and sequential's single models are such
// splits, so the mutwo strategy is never slower than either. (Mixing separate runs with
// multiplexed sub-arrays inside one run is not searched yet.)
//
// Model-state offload (state_offload.hpp) is part of it as well: where a partition x policy does
// not fit with every model's state resident (pruned or infeasible), it is planned again with the
// state on the host between uses (policy shown as "<policy>+offload"; static policies only: DTR
// decides at run time), multiplexed order only, on
// the first such partitions by compute bound that pass rule 1' (SearchConfig::offload_partitions),
// on the separate runs' partition (HFTA-like groups, multiplexed in one run instead), and, when no
// one-run plan fits by then, on one model per sub-array (the least state at a handover). Where the
// multiplexed plan does not fit (two neighbours' state at once), back to back is tried.
// Rule 1' for those plans, memoised: every pair of neighbours in multiplex order (the sub-array
// alone when there is one) planned by the policy as a two-sub-array multiplexed step with its
// state offloaded at the whole limit (the others' state is on the host). A heuristic: a
// neighbour's overlap is where a multiplexed step peaks, but a chain can peak higher.
//
// The best feasible plans are reported beside the
// baselines sequential, hfta and hfta+capuchin (strategy.hpp), so that every result reads against them.
//
// Pruning (each rule only skips plans that cannot enter the reported rows):
// 1. Memory, per (architecture, width, policy), memoised: the policy plans the sub-array of that
//    width alone, at the limit less the persistent bytes (weights, gradients, optimizer state,
//    inputs, labels) of every other model of the array, which stay resident beside it in any
//    partition. If that plan is infeasible, every partition holding such a sub-array is skipped
//    for that policy (counted in SearchStats::pruned_by_memory); it may still be reported as an
//    infeasible row marked `pruned`, its peak the lone plan's smallest limit plus that state.
// 2. Throughput bound: a partition's step time is at least the sum of its sub-arrays' compute
//    times (one compute stream; swaps and recomputation only add); where state offload may run the
//    optimizer steps on the host CPU, the longer of the rest and the host's steps, if that is less.
//    Partitions are visited by that bound, ascending; once `top` feasible plans are faster than a partition's
//    bound, it and every later one are skipped (SearchStats::partitions_pruned_by_bound). With
//    SearchConfig::prune_below_separate_runs, also once the separate runs' plan (planned first) is
//    strictly faster than the bound: no later one-run plan can win the mutwo strategy then.
// 3. Partition shapes: SearchConfig::prune (partition.hpp) limits the partitions enumerated.
// Deterministic: one thread, fixed enumeration order, ties broken by enumeration order.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "policies/partition.hpp"
#include "policies/policy_registry.hpp"
#include "transforms/autodiff.hpp"

namespace mutwo::policies {

// The most array partitions a search plans (partition.hpp's options narrow them): p(44) = 75,175
// partitions of one architecture's 44 models fit; the shipped experiments need at most p(32) = 8,349.
inline constexpr int64_t kMaxSearchPartitions = 100000;

struct SearchConfig {
  std::vector<ArchitectureCount> architectures;  // the model array; per-model config in each
  transforms::OptimizerConfig optimizer;
  const costmodel::OpCostModel* cost = nullptr;  // required; its device gives the host link
  int64_t memory_limit_bytes = 0;                // 0: the cost model's device memory
  std::vector<std::string> policies;             // empty: default_search_policies()
  PartitionPruneOptions prune;                   // which partitions are enumerated
  int32_t top = 10;                              // rows of the mutwo strategy kept; >= 1
  const PolicyRegistry* registry = nullptr;      // null: builtin_policies()
  sim::HostMode host_mode = sim::HostMode::none;  // how every plan is simulated (sim/host_mode.hpp)
  // Model-state offload (state_offload.hpp) is tried until this many partitions have a feasible
  // offloaded plan (or 2x as many were tried): the first, by the compute bound, where a plan with
  // the state resident does not fit and some policy passes rule 1' (above). 0: never. Each costs a
  // whole-array plan per policy, hence the budget.
  int32_t offload_partitions = 3;
  // Rule 2 with the separate runs as the incumbent (above): for callers that want the mutwo
  // strategy's best plan only (experiments), not its best one-run plans.
  bool prune_below_separate_runs = false;
  // Tempo's lean layers (transforms/lean_ops.hpp) as a lever: each option is searched with every
  // partition and policy (every architecture's config.lean_ops set to it) and the rows merged; the
  // report's lean_effects say what each option saves and costs. Empty: the architectures' own.
  std::vector<transforms::LeanOps> lean_options;
  // Called before each partition is planned, with the partitions visited so far and their total
  // (those the throughput bound prunes end the visit early); may throw to stop the search. Null:
  // none. The Python module reports progress through it.
  std::function<void(int64_t visited, int64_t partitions)> progress;
  // Threads for the policies' plans of one partition (support::worker_threads: 0 is one per hardware
  // thread). The rows and counts are the same for any value. 1 for callers that run searches in
  // parallel themselves (the experiment runner).
  int32_t jobs = 1;
};

// One strategy's result (for the mutwo strategy: one partition x policy).
struct SearchRow {
  std::string strategy;   // "sequential", "hfta", "hfta+capuchin", "mutwo"
  std::string partition;  // partition_text: "bert-base:3+3+2", "bert-base:4+4, vit-b16:2"
  std::string policy;     // "none", "capuchin", ...
  bool feasible = false;
  int64_t step_time_ns = 0;      // one step over all models (0 when infeasible)
  double samples_per_s = 0;      // samples_per_step / step time (0 when infeasible)
  double speedup_over_hfta = 0;  // samples_per_s / the hfta row's (0 when either is infeasible)
  int64_t peak_bytes = 0;        // highest memory of the plan; infeasible: the smallest limit it meets
  int64_t bytes_swapped = 0;     // out + in
  int64_t state_bytes_swapped = 0;  // of those, model state (weights, optimizer state), out + in
  bool state_offloaded = false;     // model state kept on the host between uses (state_offload.hpp)
  bool optimizer_on_host = false;   // the optimizer step on the host CPU (Schedule::host_stream)
  int64_t host_optimizer_ns = 0;    // its busy time
  int64_t recompute_ns = 0;
  int64_t compute_stall_ns = 0;
  int64_t compute_ns = 0;  // compute streams' busy time less recomputation (RunFigures)
  int64_t swap_ns = 0;     // copy streams' busy time
  int32_t runs = 1;        // separate runs one after another (sequential, hfta groups)
  bool pruned = false;     // skipped by pruning rule 1: peak_bytes is a lower bound, not a plan's
  std::string lean_ops = "none";  // transforms::lean_ops_name of the architectures' lean layers
  std::string note;
};

// What a lean option does to one model of an architecture (one training step, width 1): the bytes
// kept for backward it saves, and the compute it adds (each op's cost, summed; negative if less).
struct LeanEffect {
  std::string lean_ops;
  std::string model;
  int64_t saved_bytes = 0;       // saved_for_backward_bytes(plain step) - (lean step)
  int64_t extra_compute_ns = 0;  // sum of op costs, lean step - plain step
};

struct SearchStats {
  int64_t partitions = 0;        // array partitions enumerated
  int64_t policies = 0;          // policies searched
  int64_t plans = 0;             // policy plans computed (memory-rule plans of lone sub-arrays included)
  int64_t pruned_by_memory = 0;  // partition x policy pairs skipped by rule 1
  int64_t partitions_pruned_by_bound = 0;  // partitions skipped by rule 2
};

struct SearchReport {
  int64_t memory_limit_bytes = 0;
  int64_t samples_per_step = 0;  // over all models
  // Feasible rows by throughput, descending; then infeasible rows by smallest limit, ascending.
  // The baselines always; the mutwo strategy's best `top`.
  std::vector<SearchRow> rows;
  // The first row's schedule when it is feasible. For a strategy of separate runs (sequential,
  // hfta groups, hfta+capuchin over several architectures) it is the schedule of the run with the
  // highest peak, and best_schedule_is_whole_step is false.
  std::optional<ir::Schedule> best_schedule;
  bool best_schedule_is_whole_step = true;
  int64_t smallest_limit_bytes =
      0;  // the smallest peak of any plan made, feasible or not (pruned rows aside)
  // A lower bound on what the plans pruned before they were planned need (state offload, whose
  // neighbouring sub-arrays did not fit the limit alone: at least the smallest such pair's peak); 0
  // when none was pruned. Without it the smallest limit above depended on the limit asked for.
  int64_t smallest_pruned_bytes = 0;
  SearchStats stats;
  std::vector<LeanEffect> lean_effects;  // per lean option other than none, per architecture

  bool any_feasible() const { return !rows.empty() && rows.front().feasible; }
};

// Policies searched when SearchConfig::policies is empty: every registered one whose entry says
// in_default_search (checkmate, a MILP too slow for whole arrays, says not), in registration order.
std::vector<std::string> default_search_policies(const PolicyRegistry& registry);

// Throws mutwo::Error naming the field on an empty array, a count < 1, a model or policy given twice,
// no cost model, top < 1 or a limit < 0; UnknownNameError on an unknown policy or model.
SearchReport run_search(const SearchConfig& config);

}  // namespace mutwo::policies
