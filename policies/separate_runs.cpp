// The search's separate runs (policies/search.hpp): each architecture's models as fused sub-arrays
// run one after another, each at the whole limit (HFTA's groups, with a policy where a group does
// not fit), and the same sub-arrays multiplexed in one run with the model state offloaded.
#include "policies/partition_search.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "policies/multiplex.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_result.hpp"
#include "policies/state_offload.hpp"
#include "policies/strategy.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::policies::partition_search {

const std::optional<Search::Run>& Search::separate_run(size_t arch, int32_t width, SearchStats& stats) {
  auto it = runs_.find({arch, width});
  if (it != runs_.end()) return it->second;
  const ir::Schedule base = build_plain_schedule({step_graph(arch, width)});
  const PolicyInput input = whole_limit_input(&base);
  std::optional<Run> best;
  PolicyResult as_is = evaluate_schedule(base, input, "fits without a memory policy");
  ++stats.plans;
  if (as_is.feasible) {
    best = Run{figures_at_limit(as_is.prediction), "none", std::move(as_is.schedule)};
  } else {
    for (size_t p = 0; p < policies_.size(); ++p) {
      PolicyResult result = policies_[p]->plan(input);
      ++stats.plans;
      if (result.feasible && (!best || result.step_time_ns < best->figures.step_time_ns)) {
        best = Run{figures_at_limit(result.prediction), names_[p], std::move(result.schedule)};
      }
    }
  }
  return runs_.emplace(std::make_pair(arch, width), std::move(best)).first->second;
}

std::optional<StrategyOutcome> Search::separate_runs(SearchStats& stats) {
  Sizes sizes(config_.architectures.size());
  std::vector<const Run*> chosen;
  for (size_t a = 0; a < config_.architectures.size(); ++a) {
    const int32_t n = config_.architectures[a].count;
    // Widths that fit as runs, smallest first; the first that fits under no policy ends them (a
    // wider fused step needs at least as much memory).
    std::vector<const Run*> by_width{nullptr};
    for (int32_t w = 1; w <= n; ++w) {
      const std::optional<Run>& r = separate_run(a, w, stats);
      if (!r) break;
      by_width.push_back(&*r);
    }
    // best[m]: the fastest runs of m models, by exact dynamic programming over the last run's width.
    std::vector<int64_t> best(static_cast<size_t>(n) + 1, -1);
    std::vector<int32_t> last(static_cast<size_t>(n) + 1, 0);
    best[0] = 0;
    for (int32_t m = 1; m <= n; ++m) {
      for (int32_t w = 1; w < static_cast<int32_t>(by_width.size()) && w <= m; ++w) {
        if (best[static_cast<size_t>(m - w)] < 0) continue;
        const int64_t t =
            best[static_cast<size_t>(m - w)] + by_width[static_cast<size_t>(w)]->figures.step_time_ns;
        if (best[static_cast<size_t>(m)] < 0 || t < best[static_cast<size_t>(m)]) {
          best[static_cast<size_t>(m)] = t;
          last[static_cast<size_t>(m)] = w;
        }
      }
    }
    if (best[static_cast<size_t>(n)] < 0) return std::nullopt;
    for (int32_t m = n; m > 0; m -= last[static_cast<size_t>(m)])
      sizes[a].push_back(last[static_cast<size_t>(m)]);
    std::sort(sizes[a].rbegin(), sizes[a].rend());
    for (int32_t w : sizes[a]) chosen.push_back(by_width[static_cast<size_t>(w)]);
  }
  // One run of the whole array is the one-sub-array partition the partition search plans already.
  if (chosen.size() < 2) return std::nullopt;
  separate_sizes_ = sizes;
  std::vector<RunFigures> figures;
  std::vector<std::string> policies;
  const Run* largest = nullptr;
  for (const Run* r : chosen) {
    figures.push_back(r->figures);
    if (std::find(policies.begin(), policies.end(), r->policy) == policies.end())
      policies.push_back(r->policy);
    if (!largest || r->figures.peak_bytes > largest->figures.peak_bytes) largest = r;
  }
  StrategyOutcome o;
  o.row = combine_runs(figures, samples_per_step_);
  o.row.strategy = "mutwo";
  o.row.partition = partition_label(config_, sizes);
  o.row.policy = fmt::format("{}", fmt::join(policies, "+"));
  o.row.note =
      fmt::format("separate runs: {} sub-arrays one after another, each alone on the device", chosen.size());
  o.schedule = largest->schedule;
  o.schedule_is_whole_step = false;
  return o;
}

void Search::offload_separate_partition(SearchStats& stats) {
  if (config_.offload_partitions <= 0) return;
  auto try_partition = [&](const Sizes& sizes) {
    if (std::find(offload_tried_.begin(), offload_tried_.end(), sizes) != offload_tried_.end()) return;
    offload_tried_.push_back(sizes);
    std::optional<ir::Schedule> base;
    for (size_t p = 0; p < policies_.size(); ++p) offer_offloaded(sizes, p, base, stats);
  };
  if (separate_sizes_) try_partition(*separate_sizes_);
  // Still no one-run plan: every model its own sub-array holds the least state at a handover.
  const bool one_run_fits =
      std::any_of(kept_.begin(), kept_.end(), [](const Candidate& c) { return c.row.feasible; });
  if (!one_run_fits) {
    Sizes singles(config_.architectures.size());
    for (size_t a = 0; a < singles.size(); ++a)
      singles[a].assign(static_cast<size_t>(config_.architectures[a].count), 1);
    try_partition(singles);
  }
}

}  // namespace mutwo::policies::partition_search
