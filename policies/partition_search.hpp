#pragma once
// The search over partitions x policies behind run_search (policies/search.hpp): the baselines,
// separate runs, every partition of the model array planned by every policy with the pruning rules
// search.hpp states, and the ranking. One object per search; search.cpp runs it once per lean option.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "policies/search.hpp"
#include "policies/strategy.hpp"

namespace mutwo::policies::partition_search {

// Sizes per architecture, e.g. {{3, 3, 2}} or {{4, 4}, {2}}.
using Sizes = std::vector<std::vector<int32_t>>;

// A mutwo-strategy plan ranked while the search runs; its schedule is kept until it drops out.
struct Candidate {
  SearchRow row;
  RunFigures figures;     // the policy's own simulation of `schedule` (not re-simulated)
  ir::Schedule schedule;  // empty when row.pruned
  int64_t sequence = 0;   // enumeration order, the tie-break
};

// Feasible by step time (samples per step are the same for all), then infeasible by peak.
bool better(const SearchRow& a, int64_t seq_a, const SearchRow& b, int64_t seq_b);

// Sub-arrays over every architecture.
size_t total_sub_arrays(const Sizes& sizes);

// The mutwo strategy's row of `sizes` planned by `policy`, unranked (sequence 0): without a result,
// strategy, partition and policy only; with one, its figures and schedule too.
Candidate partition_candidate(const SearchConfig& config, const Sizes& sizes, std::string policy);
Candidate partition_candidate(const SearchConfig& config, const Sizes& sizes, std::string policy,
                              PolicyResult result);

// Bytes of a graph's persistent tensors (weights, gradients, optimizer state).
int64_t persistent_bytes(const ir::Graph& graph);

// Throws Error naming what is wrong: an empty array, an unknown model or policy, a model given twice,
// no cost model, top < 1, a negative limit.
void validate(const SearchConfig& config, const PolicyRegistry& registry);

class Search {
 public:
  Search(const SearchConfig& config, const PolicyRegistry& registry)
      : config_(config),
        registry_(registry),
        cost_(*config.cost),
        graphs_(config.architectures, config.optimizer) {
    limit_ = config.memory_limit_bytes > 0 ? config.memory_limit_bytes : cost_.device().memory_bytes;
    if (limit_ <= 0)
      throw Error(fmt::format("search: device '{}' has no memory size; give a limit", cost_.device().name));
    names_ = config.policies.empty() ? default_search_policies(registry) : config.policies;
    for (const std::string& n : names_) policies_.push_back(registry.create(n));
    plan_seconds_.assign(policies_.size(), 0);
    for (size_t a = 0; a < config.architectures.size(); ++a) {
      samples_per_step_ += config.architectures[a].count * step_graph(a, 1).batch_size;
      total_persistent_bytes_ += config.architectures[a].count * persistent_bytes(step_graph(a, 1));
    }
  }

  SearchReport run();

 private:
  const ir::Graph& step_graph(size_t arch, int32_t width);
  int64_t compute_ns(size_t arch, int32_t width);
  // Pruning rule 2's terms for the sub-array: its optimizer steps' time on the device and on the host
  // CPU, where state offload may run them beside the compute stream.
  struct OptimizerNs {
    int64_t device = 0;
    int64_t host = 0;
  };
  OptimizerNs optimizer_ns(size_t arch, int32_t width);
  // Pruning rule 2's bound for a partition (search.hpp).
  int64_t bound_ns(const Sizes& sizes);
  // Rule 1's verdict: fits, or the limit the whole plan needs at least (the lone plan's smallest
  // limit plus the other models' state).
  struct Lone {
    bool fits = false;
    int64_t needs_bytes = 0;
  };
  Lone lone(size_t arch, int32_t width, size_t policy, SearchStats& stats);
  // A plan of `base` at the whole limit, simulated as the search's host mode says.
  PolicyInput whole_limit_input(const ir::Schedule* base) const;
  // Rule 1' for offloaded plans: each pair of neighbours in multiplex order (or the one
  // sub-array) planned alone, multiplexed, with its state offloaded, at the whole limit.
  using SubArrayKey = std::pair<size_t, int32_t>;  // (architecture, width)
  bool offload_fits(const std::vector<SubArrayKey>& neighbours, size_t policy, SearchStats& stats);
  std::vector<SubArrayKey> multiplex_sequence(const Sizes& sizes);
  // The partition x policy planned with the model state on the host, offered as a row.
  // Returns 0 when rule 1' pruned it, 1 when plans were made, 2 when one of them is feasible.
  int offer_offloaded(const Sizes& sizes, size_t policy, std::optional<ir::Schedule>& base,
                      SearchStats& stats);
  std::vector<Sizes> enumerate_partitions() const;
  ir::Schedule multiplexed(const Sizes& sizes, bool interleave);
  void offer(Candidate c);
  void search_partitions(SearchStats& stats);
  // One partition planned by every policy (rule 1, the plain step, the plans, the rows offered);
  // returns offer_offloaded's best verdict over the policies (0 when none was offloaded).
  int plan_partition(const Sizes& sizes, bool offload_allowed, SearchStats& stats);
  // One fused sub-array of `width` models as a run of its own, at the whole limit: its plain step
  // when that fits, else the fastest feasible policy plan; nullopt when none fits.
  struct Run {
    RunFigures figures;
    std::string policy;
    ir::Schedule schedule;
  };
  const std::optional<Run>& separate_run(size_t arch, int32_t width, SearchStats& stats);
  // The fastest array of separate runs (search.hpp), nullopt when some architecture has none.
  std::optional<StrategyOutcome> separate_runs(SearchStats& stats);
  // The separate runs' sub-arrays as one multiplexed run with the state offloaded (μ-TWO's answer
  // to HFTA's groups), per static policy, unless the partition search tried that partition; then,
  // when no one-run plan fits yet, every model as its own sub-array.
  void offload_separate_partition(SearchStats& stats);

  const SearchConfig& config_;
  const PolicyRegistry& registry_;
  const costmodel::OpCostModel& cost_;
  int64_t limit_ = 0;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<MemoryPolicy>> policies_;
  int64_t samples_per_step_ = 0;
  int64_t total_persistent_bytes_ = 0;
  int64_t smallest_peak_ = 0;      // over every whole-step plan of the mutwo strategy
  int64_t smallest_pruned_ = 0;    // over the sub-plans that pruned an offload plan unplanned
  int64_t separate_runs_ns_ = -1;  // rule 2's incumbent with prune_below_separate_runs (-1: none)
  int64_t sequence_ = 0;
  StepGraphCache graphs_;
  std::map<std::pair<size_t, int32_t>, int64_t> compute_ns_;
  std::map<std::pair<size_t, int32_t>, OptimizerNs> optimizer_ns_;
  std::map<std::tuple<size_t, int32_t, size_t>, Lone> lone_;
  std::map<std::pair<std::vector<SubArrayKey>, size_t>, bool> offload_fits_;
  std::vector<Sizes> offload_tried_;     // partitions planned with the state offloaded
  std::optional<Sizes> separate_sizes_;  // the separate runs' partition, when there is one
  std::map<std::pair<size_t, int32_t>, std::optional<Run>> runs_;
  std::vector<Candidate> kept_;  // best first, at most config.top
  // Per policy, seconds its last plan took (plan_partition starts the longest first).
  std::vector<double> plan_seconds_;
};

}  // namespace mutwo::policies::partition_search
