// capuchin: Peng et al., "Capuchin: Tensor-based GPU Memory Management for Deep Learning",
// ASPLOS 2020, its hybrid static policy (section 4.3) over the base schedule's compute order:
// 1. swap, in decreasing FreeTime (swap-in start - swap-out end on the estimated timeline), every
//    tensor whose copies the compute can hide: swap_in triggered by the position that starts about
//    one swap-in time before the reload (clamped after the free), checked against the copy queues;
// 2. once no more swaps hide, recompute in decreasing MSPS (memory saved per second of recompute,
//    the chain of inputs that are gone by then included; updated after each choice);
// 3. if the limit is still not met, swap the rest even where the copy stalls compute.
// Each stops as soon as the estimated peak meets the limit; the simulator confirms it.
#include <algorithm>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "policies/greedy_planner.hpp"
#include "policies/policy_registry.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

namespace {

using SwapMode = GreedyPlanState::SwapMode;

// Memory saved per ns of recompute (bytes / max(1, ns)); ties by candidate index (tensor id order).
struct Msps {
  double bytes_per_ns = 0;
  size_t candidate = 0;
  bool operator<(const Msps& o) const {
    return bytes_per_ns != o.bytes_per_ns ? bytes_per_ns < o.bytes_per_ns : candidate > o.candidate;
  }
};

double msps(int64_t bytes, int64_t duration_ns) {
  return static_cast<double>(bytes) / static_cast<double>(std::max<int64_t>(1, duration_ns));
}

// Candidates not yet decided, in decreasing FreeTime (ties: tensor id).
std::vector<size_t> by_free_time(const GreedyPlanState& state) {
  std::vector<std::pair<int64_t, size_t>> ranked;
  for (size_t c = 0; c < state.candidates().size(); ++c) {
    if (!state.decided(c)) ranked.emplace_back(state.free_time_ns(c), c);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<size_t> out;
  out.reserve(ranked.size());
  for (const auto& [free_ns, c] : ranked) out.push_back(c);
  return out;
}

bool try_swap(GreedyPlanState& state, size_t c, SwapMode mode, int64_t target) {
  const std::optional<SwapPlacement> p = state.place_swap(c, mode);
  if (!p || state.max_estimate(p->evict_after + 1, p->swap_in_after) <= target) return false;
  state.apply_swap(c, *p);
  return true;
}

bool select_capuchin(GreedyPlanState& state, int64_t target) {
  auto fits = [&] { return state.peak_estimate() <= target; };
  if (fits()) return true;
  const std::vector<size_t> ranked = by_free_time(state);
  // 1. Hidden swaps. A negative FreeTime cannot hide, nor can anything after it in this order.
  for (size_t c : ranked) {
    if (fits()) return true;
    if (state.free_time_ns(c) < 0) break;
    if (!state.decided(c) && state.helps(c, target)) try_swap(state, c, SwapMode::hidden, target);
  }
  if (fits()) return true;
  // 2. Recomputation by MSPS; a chain only grows as inputs get evicted, so a popped value that
  //    dropped is pushed back with its new value (lazy update).
  std::priority_queue<Msps> heap;
  for (size_t c : ranked) {
    if (state.decided(c) || !state.candidates()[c].recomputable) continue;
    if (const auto cost = state.recompute_cost(c))
      heap.push({msps(state.candidates()[c].rounded_bytes, cost->duration_ns), c});
  }
  while (!heap.empty() && !fits()) {
    const Msps top = heap.top();
    heap.pop();
    if (state.decided(top.candidate) || !state.helps(top.candidate, target)) continue;
    const auto cost = state.recompute_cost(top.candidate);
    if (!cost) continue;
    const double now = msps(state.candidates()[top.candidate].rounded_bytes, cost->duration_ns);
    if (now < top.bytes_per_ns) {
      heap.push({now, top.candidate});
      continue;
    }
    state.apply_recompute(top.candidate);
  }
  if (fits()) return true;
  // 3. Whatever is left, swapped even if it stalls (recomputed where a swap cannot be placed).
  for (size_t c : ranked) {
    if (fits()) return true;
    if (state.decided(c) || !state.helps(c, target)) continue;
    if (try_swap(state, c, SwapMode::most_saving, target)) continue;
    if (state.recompute_cost(c)) state.apply_recompute(c);
  }
  return fits();
}

class CapuchinPolicy : public MemoryPolicy {
 public:
  std::string_view name() const override { return "capuchin"; }
  PolicyResult plan(const PolicyInput& input) const override {
    return plan_greedy(input, name(), select_capuchin);
  }
};

}  // namespace

namespace {

void register_capuchin_policy(PolicyRegistry& registry) {
  registry.add({"capuchin",
                "swap tensors whose copies the free time hides, then recompute by memory saved per second",
                "Peng et al., ASPLOS 2020 (Capuchin)", [] { return std::make_unique<CapuchinPolicy>(); }});
}

[[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(40, register_capuchin_policy);

}  // namespace

}  // namespace mutwo::policies
