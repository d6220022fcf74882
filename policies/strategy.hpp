#pragma once
// The baselines every search reports (docs/ARCHITECTURE.md "Policies"): sequential (one model at a time),
// hfta (HFTA, Wang et al., MLSys 2021: fuse as many models as fit, groups one after another, no
// memory optimisation) and hfta+capuchin (all models of an architecture fused, planned by Capuchin,
// Peng et al., ASPLOS 2020). The fourth strategy, mutwo, is the search itself (search.hpp).
//
// Runs: sequential and hfta train their models (groups) one after another as separate runs, so
// only one run's state is on the device at a time: a row's step time is the sum of its runs' step
// times, its peak the largest run's peak, its swap/recompute/stall figures the sums.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/graph.hpp"
#include "ir/schedule.hpp"
#include "policies/policy_registry.hpp"
#include "policies/search.hpp"
#include "sim/prediction.hpp"
#include "support/registry.hpp"

namespace mutwo::policies {

// The training-step graph of `width` fused models of architecture `arch` (an index into
// SearchConfig::architectures); the reference stays valid for the whole search.
using StepGraphFn = std::function<const ir::Graph&(size_t arch, int32_t width)>;

// One schedule simulated at a limit.
struct RunFigures {
  bool feasible = false;
  int64_t step_time_ns = 0;  // 0 when infeasible
  int64_t peak_bytes = 0;    // infeasible: the peak without a limit (the smallest limit it meets)
  int64_t bytes_swapped = 0;
  int64_t state_bytes_swapped = 0;  // of those, model state (Schedule::host_state), out + in
  int64_t recompute_ns = 0;
  int64_t compute_stall_ns = 0;
  int64_t compute_ns = 0;  // compute streams' busy time less recomputation: the step's own ops
  int64_t swap_ns = 0;     // copy streams' busy time (swap transfers)
  int64_t host_optimizer_ns = 0;  // optimizer updates on the host CPU (not in compute_ns)
};

// The figures of one simulation (feasible = no OOM).
RunFigures run_figures(const sim::Prediction& prediction);

// The figures of a prediction at its limit: on OOM infeasible, with the peak of the run continued
// past the limit (SimOptions::continue_past_limit), the smallest limit the schedule meets.
RunFigures figures_at_limit(const sim::Prediction& prediction);

// Simulates once at the limit, continuing past it on OOM for the peak.
RunFigures measure_schedule(const ir::Schedule& schedule, const costmodel::OpCostModel& cost,
                            int64_t memory_limit_bytes, sim::HostMode host_mode = sim::HostMode::none);

// partition_text of the sub-arrays with these widths per architecture (index into the config):
// {{3, 3, 2}} -> "bert-base:3+3+2".
std::string partition_label(const SearchConfig& config, const std::vector<std::vector<int32_t>>& sizes);

// A row from runs that execute one after another (see the header comment).
SearchRow combine_runs(const std::vector<RunFigures>& runs, int64_t samples_per_step);

// A strategy's row and the schedule kept should it win (the whole step, or its largest run).
struct StrategyOutcome {
  SearchRow row;
  std::optional<ir::Schedule> schedule;
  bool schedule_is_whole_step = true;
};

// Inputs shared by the baselines; the search fills it once.
struct StrategyContext {
  const SearchConfig* config = nullptr;
  const costmodel::OpCostModel* cost = nullptr;
  const PolicyRegistry* registry = nullptr;
  int64_t memory_limit_bytes = 0;
  int64_t samples_per_step = 0;
  StepGraphFn step_graph;
  sim::HostMode host_mode = sim::HostMode::none;
};

// Keeps the schedule of the run with the highest peak (the one the limit binds): the schedule a
// baseline of several runs keeps should it win.
struct LargestRun {
  int64_t peak_bytes = -1;
  std::optional<ir::Schedule> schedule;

  void offer(const RunFigures& f, ir::Schedule s) {
    if (f.peak_bytes <= peak_bytes) return;
    peak_bytes = f.peak_bytes;
    schedule = std::move(s);
  }
};

// What a strategy is to the code that runs and compares them: it says so in its entry, and no caller
// picks behaviour by its name.
struct StrategyInfo {
  std::string name;         // "hfta"
  std::string description;  // one line, for --help
  // A baseline's run (nullopt when it cannot be planned, as hfta+capuchin without capuchin); empty
  // for the strategy the partition search itself makes (mutwo).
  std::function<std::optional<StrategyOutcome>(const StrategyContext&)> run;
  bool reference = false;  // the row the others are compared with ("vs hfta"); exactly one
};

class StrategyRegistry : public Registry<StrategyInfo> {
 public:
  StrategyRegistry() : Registry("strategy") {}
  const StrategyInfo& reference() const;  // the entry with reference set
  const StrategyInfo& searched() const;   // the entry without a run: the partition search's
};

// The strategies in policies/strategies/, one file each, registering themselves
// (support/plugins.hpp): sequential, hfta (the reference), hfta+capuchin, mutwo (searched), in that
// order.
const StrategyRegistry& builtin_strategies();

}  // namespace mutwo::policies
