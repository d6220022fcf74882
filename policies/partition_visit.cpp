// Search::search_partitions (partition_search.hpp): the partitions visited by the compute bound, each
// planned by every policy. The policies' plans of one partition are independent of each other and of
// the search's state, so they run on SearchConfig::jobs threads; everything that reads or writes the
// search's state (pruning rule 1, the plain step, the ranking, the offloaded plans) runs in policy
// order on the calling thread, so the rows, their order and the counts do not depend on the threads.
#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "policies/partition_search.hpp"
#include "policies/policy_result.hpp"
#include "support/parallel_for.hpp"

namespace mutwo::policies::partition_search {

void Search::search_partitions(SearchStats& stats) {
  std::vector<Sizes> partitions = enumerate_partitions();
  stats.partitions = static_cast<int64_t>(partitions.size());
  // Pruning rule 2: visit by the compute bound, ascending (stable: enumeration order on ties).
  std::vector<std::pair<int64_t, size_t>> by_bound;
  for (size_t i = 0; i < partitions.size(); ++i) {
    by_bound.emplace_back(bound_ns(partitions[i]), i);
  }
  std::stable_sort(by_bound.begin(), by_bound.end());
  // Partitions with a feasible offloaded plan, and partitions planned with the state offloaded at all
  // (at most 2x the budget: each costs whole-array plans per policy).
  int32_t offload_partitions = 0;
  int32_t offload_attempts = 0;
  for (size_t visit = 0; visit < by_bound.size(); ++visit) {
    if (config_.progress)
      config_.progress(static_cast<int64_t>(visit), static_cast<int64_t>(by_bound.size()));
    const auto [bound, index] = by_bound[visit];
    const Sizes& sizes = partitions[index];
    if ((kept_.size() >= static_cast<size_t>(config_.top) && kept_.back().row.feasible &&
         kept_.back().row.step_time_ns <= bound) ||
        (separate_runs_ns_ >= 0 && separate_runs_ns_ < bound)) {
      stats.partitions_pruned_by_bound = static_cast<int64_t>(by_bound.size() - visit);
      break;
    }
    const bool offload_allowed =
        offload_partitions < config_.offload_partitions && offload_attempts < 2 * config_.offload_partitions;
    const int offloaded = plan_partition(sizes, offload_allowed, stats);
    if (offloaded > 0) {
      ++offload_attempts;
      if (offloaded == 2) ++offload_partitions;
      offload_tried_.push_back(sizes);
    }
  }
}

int Search::plan_partition(const Sizes& sizes, bool offload_allowed, SearchStats& stats) {
  std::optional<ir::Schedule> base;
  std::optional<ir::Schedule> back_to_back;
  // 1. Rule 1 per policy, in order, until the first policy it does not prune: there the plain
  // multiplexed step is built and, when it already fits, stands for every policy (swaps and
  // recomputation only add time) and no later policy is looked at.
  std::vector<Lone> worst(policies_.size(), Lone{true, 0});
  std::optional<PolicyResult> as_is;
  size_t last = policies_.size();  // policies [0, last) are offered
  for (size_t p = 0; p < policies_.size(); ++p) {
    for (size_t a = 0; a < sizes.size() && worst[p].fits; ++a) {
      for (int32_t w : sizes[a]) {
        const Lone l = lone(a, w, p, stats);
        if (!l.fits) {
          worst[p] = l;
          break;
        }
      }
    }
    if (!worst[p].fits || as_is) continue;
    base = multiplexed(sizes, true);
    as_is =
        evaluate_schedule(*base, whole_limit_input(&*base), "fits without a memory policy; policies not run");
    ++stats.plans;
    if (as_is->feasible) {
      last = p + 1;
      break;
    }
  }
  const bool as_is_fits = as_is && as_is->feasible;

  // 2. The policies' plans, on the multiplexed order and, with several sub-arrays, back to back
  // (a greedy plan can come out worse multiplexed: it raises the peak); the better one is kept.
  std::vector<size_t> planned;
  if (!as_is_fits) {
    for (size_t p = 0; p < last; ++p) {
      if (worst[p].fits) planned.push_back(p);
    }
  }
  const bool both_orders = total_sub_arrays(sizes) > 1;
  if (!planned.empty() && both_orders) back_to_back = multiplexed(sizes, false);
  const size_t orders = both_orders ? 2 : 1;
  std::vector<std::optional<PolicyResult>> results(planned.size() * orders);
  std::vector<std::exception_ptr> errors(results.size());
  auto plan = [&](size_t k) {
    return policies_[planned[k / orders]]->plan(whole_limit_input(k % orders == 0 ? &*base : &*back_to_back));
  };
  // On one thread each plan is made where its row is (below), so that at most two are held at once.
  if (support::worker_threads(config_.jobs) > 1) {
    // Longest first, by each policy's time on the last partition it planned (threads that take the
    // long plans last leave the others idle at the end); the order does not change the results.
    std::vector<size_t> start(results.size());
    std::iota(start.begin(), start.end(), 0);
    std::stable_sort(start.begin(), start.end(), [&](size_t x, size_t y) {
      return plan_seconds_[planned[x / orders]] > plan_seconds_[planned[y / orders]];
    });
    std::vector<double> seconds(results.size(), 0);
    support::parallel_for(results.size(), config_.jobs, [&](size_t i) {
      const size_t k = start[i];
      const auto began = std::chrono::steady_clock::now();
      try {
        results[k] = plan(k);
      } catch (...) {
        errors[k] = std::current_exception();  // thrown where its row is, as on one thread
      }
      seconds[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    });
    for (size_t k = 0; k < results.size(); ++k) plan_seconds_[planned[k / orders]] = seconds[k];
  }
  auto take = [&](size_t k) {
    if (errors[k]) std::rethrow_exception(errors[k]);
    return results[k] ? std::move(*results[k]) : plan(k);
  };

  // 3. The rows, in policy order.
  int offloaded = 0;
  size_t next_plan = 0;
  for (size_t p = 0; p < last; ++p) {
    if (!worst[p].fits) {
      // Reported as infeasible with the lower bound of the limit it needs (no schedule kept).
      ++stats.pruned_by_memory;
      Candidate c = partition_candidate(config_, sizes, names_[p]);
      c.row.peak_bytes = worst[p].needs_bytes;
      c.row.note = "pruned: a sub-array alone does not fit beside the other models' state";
      c.row.pruned = true;
      c.sequence = sequence_++;
      offer(std::move(c));
      if (offload_allowed) offloaded = std::max(offloaded, offer_offloaded(sizes, p, base, stats));
      continue;
    }
    if (as_is_fits) {
      Candidate c = partition_candidate(config_, sizes, "none", std::move(*as_is));
      c.sequence = sequence_++;
      offer(std::move(c));
      break;
    }
    PolicyResult result = take(next_plan * orders);
    ++stats.plans;
    if (both_orders) {
      PolicyResult alt = take(next_plan * orders + 1);
      ++stats.plans;
      if (better_result(alt, result)) {
        result = std::move(alt);
        result.note += " (sub-arrays back to back: better than multiplexed here)";
      }
    }
    ++next_plan;
    const bool fits = result.feasible;
    Candidate c = partition_candidate(config_, sizes, names_[p], std::move(result));
    c.sequence = sequence_++;
    offer(std::move(c));
    if (!fits && offload_allowed) offloaded = std::max(offloaded, offer_offloaded(sizes, p, base, stats));
  }
  return offloaded;
}

}  // namespace mutwo::policies::partition_search
