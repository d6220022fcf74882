// mutwo: the swap/recompute scheduler of μ-TWO (Purandare et al., "μ-TWO: 3× Faster Multi-Model
// Training with Orchestration and Memory Optimization", MLSys 2023, section 4), made incremental.
// Two candidate lists: by inactive time (last forward access -> first backward access, measured on
// the base schedule, so in a multiplexed schedule the other sub-array's forward ops interleaved in
// the window count as cover) and by recompute ratio (memory / recompute time, chain of evicted
// inputs included). Each step takes the head of each list, prices both ways of evicting it - swap
// overhead = copy time the compute in its window does not hide (copy queues included), recompute
// overhead = its chain's time (plus what it adds to chains already chosen) - and applies the
// cheaper option per byte saved. The lists are updated lazily (a recompute ratio only falls as
// inputs get evicted) and the memory curve incrementally, so a plan costs O(n log n) plus one
// simulation to confirm, where μ-TWO re-simulates after every choice (quadratic).
#include <algorithm>
#include <memory>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "policies/greedy_planner.hpp"
#include "policies/policy_registry.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

namespace {

using SwapMode = GreedyPlanState::SwapMode;

// How far down the inactive-time list to look for a swap the compute hides when the head's stalls.
constexpr size_t kLookahead = 16;

struct Ratio {
  double bytes_per_ns = 0;
  size_t candidate = 0;
  bool operator<(const Ratio& o) const {
    return bytes_per_ns != o.bytes_per_ns ? bytes_per_ns < o.bytes_per_ns : candidate > o.candidate;
  }
};

double ratio(int64_t bytes, int64_t duration_ns) {
  return static_cast<double>(bytes) / static_cast<double>(std::max<int64_t>(1, duration_ns));
}

// The cheaper way to evict one candidate that lowers memory above the target.
struct Option {
  size_t candidate = 0;
  bool swap = false;
  SwapPlacement placement;
  int64_t overhead_ns = 0;
  int64_t bytes = 0;
};

// With `guard`, a recomputation whose helpers would lift a reload above both the target and the
// current peak estimate is not an option.
std::optional<Option> cheapest(GreedyPlanState& state, size_t c, int64_t target, bool guard) {
  std::optional<Option> best;
  auto consider = [&](Option o) {
    if (!best || o.overhead_ns < best->overhead_ns) best = o;
  };
  const int64_t bytes = state.candidates()[c].rounded_bytes;
  for (SwapMode mode : {SwapMode::least_stall, SwapMode::most_saving}) {
    const std::optional<SwapPlacement> p = state.place_swap(c, mode);
    if (p && state.max_estimate(p->evict_after + 1, p->swap_in_after) > target) {
      consider({c, true, *p, p->stall_ns, bytes});
      break;
    }
  }
  if (state.candidates()[c].recomputable) {
    const auto cost = state.recompute_cost(c);
    if (cost && !(guard && cost->reload_peak_bytes > std::max(target, state.peak_estimate())))
      consider({c, false, {}, cost->duration_ns, bytes});
  }
  return best;
}

bool select_mutwo(GreedyPlanState& state, int64_t target, bool guard) {
  auto fits = [&] { return state.peak_estimate() <= target; };
  if (fits()) return true;
  const auto& cands = state.candidates();
  // By inactive time, longest first (ties: tensor id).
  std::vector<size_t> by_inactive;
  std::priority_queue<Ratio> by_ratio;
  for (size_t c = 0; c < cands.size(); ++c) {
    if (state.decided(c)) continue;
    by_inactive.push_back(c);
    if (cands[c].recomputable) {
      if (const auto cost = state.recompute_cost(c))
        by_ratio.push({ratio(cands[c].rounded_bytes, cost->duration_ns), c});
    }
  }
  std::stable_sort(by_inactive.begin(), by_inactive.end(), [&](size_t a, size_t b) {
    return cands[a].window.inactive_ns > cands[b].window.inactive_ns;
  });
  std::vector<uint8_t> dropped(cands.size(), 0);  // no way to evict it helps this round
  auto usable = [&](size_t c) { return !state.decided(c) && !dropped[c] && state.helps(c, target); };
  size_t next = 0;
  while (!fits()) {
    while (next < by_inactive.size() && !usable(by_inactive[next])) ++next;
    std::optional<size_t> ratio_head;
    while (!by_ratio.empty()) {
      const Ratio top = by_ratio.top();
      if (!usable(top.candidate)) {
        by_ratio.pop();
        continue;
      }
      const auto cost = state.recompute_cost(top.candidate);
      if (!cost) {
        by_ratio.pop();
        continue;
      }
      const double now = ratio(cands[top.candidate].rounded_bytes, cost->duration_ns);
      if (now < top.bytes_per_ns) {  // its chain grew since it was ranked
        by_ratio.pop();
        by_ratio.push({now, top.candidate});
        continue;
      }
      ratio_head = top.candidate;
      break;
    }
    std::optional<Option> a;
    std::optional<Option> b;
    if (next < by_inactive.size()) {
      a = cheapest(state, by_inactive[next], target, guard);
      if (!a) dropped[by_inactive[next]] = 1;
      // A head whose copy would stall: a hidden swap a little further down the list costs nothing.
      for (size_t j = next + 1, seen = 0;
           a && a->overhead_ns > 0 && j < by_inactive.size() && seen < kLookahead; ++j) {
        const size_t c = by_inactive[j];
        if (!usable(c)) continue;
        ++seen;
        const std::optional<SwapPlacement> p = state.place_swap(c, SwapMode::hidden);
        if (p && state.max_estimate(p->evict_after + 1, p->swap_in_after) > target) {
          a = Option{c, true, *p, 0, cands[c].rounded_bytes};
        }
      }
    }
    if (ratio_head) {
      b = *ratio_head == (next < by_inactive.size() ? by_inactive[next] : cands.size())
              ? a
              : cheapest(state, *ratio_head, target, guard);
      if (!b) dropped[*ratio_head] = 1;
    }
    if (!a && !b) {
      if (next >= by_inactive.size() && by_ratio.empty()) return false;
      continue;
    }
    // Less overhead per byte saved wins; ties go to the inactive-time head.
    const Option& pick = !b   ? *a
                         : !a ? *b
                              : (static_cast<double>(b->overhead_ns) * static_cast<double>(a->bytes) <
                                         static_cast<double>(a->overhead_ns) * static_cast<double>(b->bytes)
                                     ? *b
                                     : *a);
    if (pick.swap) {
      state.apply_swap(pick.candidate, pick.placement);
    } else {
      state.apply_recompute(pick.candidate);
    }
  }
  return true;
}

class MutwoPolicy : public MemoryPolicy {
 public:
  std::string_view name() const override { return "mutwo"; }
  // The greedy choice is myopic: a recomputation's chain can hold helpers at its reload that lift
  // the estimate above the plain peak, after which nothing fits and only the most-saving plan is
  // left (resnet18 x2 at batch 24: 6.15 ms against capuchin's 3.06). When the selection gives up,
  // it is run again with such recomputations forbidden, and the simulator decides between the two
  // plans of this input: the faster feasible one, else the lower peak; ties keep the first. A caller
  // that changes the plan afterwards can still lose by it: offloading the model state of bert-base
  // 2,2,2,2 at 6 GiB makes the kept plan 3.8 % slower than the other (docs/wrap_steady_state.csv).
  PolicyResult plan(const PolicyInput& input) const override {
    bool gave_up = false;
    PolicyResult plain = plan_greedy(input, name(), [&gave_up](GreedyPlanState& s, int64_t t) {
      const bool fits = select_mutwo(s, t, false);
      if (!fits && t >= 0) gave_up = true;
      return fits;
    });
    if (!gave_up) return plain;
    PolicyResult guarded =
        plan_greedy(input, name(), [](GreedyPlanState& s, int64_t t) { return select_mutwo(s, t, true); });
    const bool take_guarded = plain.feasible != guarded.feasible
                                  ? guarded.feasible
                                  : (plain.feasible ? guarded.step_time_ns < plain.step_time_ns
                                                    : guarded.peak_bytes < plain.peak_bytes);
    if (!take_guarded) return plain;
    guarded.note += " (recomputations kept under the peak)";
    return guarded;
  }
};

}  // namespace

namespace {

void register_mutwo_policy(PolicyRegistry& registry) {
  registry.add(
      {"mutwo",
       "greedy by inactive time and recompute ratio: swap or recompute, whichever costs less, until the "
       "memory estimate fits",
       "Purandare et al., MLSys 2023 (μ-TWO)", [] { return std::make_unique<MutwoPolicy>(); }});
}

[[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(50, register_mutwo_policy);

}  // namespace

}  // namespace mutwo::policies
