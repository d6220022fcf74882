#pragma once
// The greedy swap-or-recompute planner that capuchin and mutwo share: the candidate set (one
// candidate per inactive window), the plan state that prices each choice, and the driver that
// confirms the plan with the simulator. The state keeps an estimated memory curve over the compute
// order with the chosen evictions applied, updated incrementally (MaxSegmentTree, O(log n) per
// change); copy-engine queues on the estimated compute timeline, which price a swap's stall
// (CopyQueue); and recompute chains (the producer plus every input that is not resident at the
// reload, as emit_plan rebuilds them). The policies only rank and choose; evaluate_schedule
// confirms the result.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/schedule.hpp"
#include "policies/copy_queue.hpp"
#include "policies/max_segment_tree.hpp"
#include "policies/memory_plan.hpp"
#include "policies/memory_policy.hpp"

namespace mutwo::policies {

// One inactive window with what both policies need to price it.
struct SwapRecomputeCandidate {
  InactiveWindow window;
  int32_t producer_pos = -1;
  int64_t rounded_bytes = 0;  // as the allocator holds it (512 B blocks)
  int64_t swap_out_ns = 0;    // costmodel::transfer_duration_ns on the cost model's device
  int64_t swap_in_ns = 0;
  bool recomputable = false;  // its producer is a forward op marked recomputable
};

struct SwapPlacement {
  int32_t evict_after = -1;    // free point: the first position ending after the swap_out did
  int32_t swap_in_after = -1;  // the prefetch trigger (> evict_after, so the swap saves memory)
  int64_t out_ready_ns = 0;
  int64_t in_ready_ns = 0;
  int64_t stall_ns = 0;  // estimated compute stall: its own lateness plus what it adds to queued copies
};

struct RecomputeCost {
  int64_t duration_ns = 0;  // its chain, plus the chain time it adds to recomputations already chosen
  int64_t extra_bytes = 0;  // helpers alive at the reload besides the tensor itself
  // The memory estimate at its reload and at the reloads of the chosen recomputations it lengthens,
  // once applied (their helpers counted): a chain's helpers can raise a reload above the peak.
  int64_t reload_peak_bytes = 0;
};

class GreedyPlanState {
 public:
  // Throws what compute_order / inactive_windows throw on a base schedule that is not one.
  GreedyPlanState(const ir::Schedule& base, const costmodel::OpCostModel& cost);

  const ComputeOrder& order() const { return order_; }
  const std::vector<SwapRecomputeCandidate>& candidates() const { return candidates_; }
  bool decided(size_t c) const { return decision_of_[c] >= 0; }
  int64_t peak_estimate() const { return memory_.max_all(); }
  int64_t max_estimate(int32_t first, int32_t last) const { return memory_.max(first, last); }
  // Whether evicting c over its whole window could lower memory where it exceeds target_bytes.
  bool helps(size_t c, int64_t target_bytes) const;
  // Capuchin's FreeTime on the ideal timeline: swap-in start - swap-out end, both as late / as early
  // as the window allows (reload start - in, producer end + out).
  int64_t free_time_ns(size_t c) const;

  // The swap of c: swap_out after its producer, free at the first position ending after the copy
  // is done, swap_in triggered by the latest position that still lets it finish before the reload
  // (up to a few positions earlier when the host->device queue is busy). Empty when the swap would
  // save nothing, would break a chosen recomputation that reads c, or (hidden) would stall.
  enum class SwapMode : uint8_t {
    hidden,       // only a placement that adds no stall at all
    least_stall,  // the latest trigger adding the least stall, at least one position after the free
    most_saving,  // trigger right before the reload: memory saved over the whole window
  };
  std::optional<SwapPlacement> place_swap(size_t c, SwapMode mode) const;
  // Empty when c cannot be rebuilt at its reload (an input is gone for good, or swapped out), or
  // when evicting it would leave a chosen recomputation that reads it unable to rebuild.
  std::optional<RecomputeCost> recompute_cost(size_t c);

  void apply_swap(size_t c, const SwapPlacement& placement);
  void apply_recompute(size_t c);

  MemoryPlan plan() const;   // decisions in tensor id order
  std::string note() const;  // "3 swapped (12.5 MB), 7 recomputed"

 private:
  struct Chain {
    int64_t duration_ns = 0;
    int64_t extra_bytes = 0;
    std::vector<ir::TensorId> leaves;  // resident inputs it reads at the reload
  };
  bool resident_before(ir::TensorId t, int32_t k) const;
  std::optional<Chain> chain(ir::TensorId t, int32_t k) const;
  bool chain_visit(ir::TensorId t, int32_t k, Chain& out) const;
  // Recomputations whose chains read t at a reload inside [first, last].
  std::vector<size_t> readers_in(ir::TensorId t, int32_t first, int32_t last) const;
  void set_chain(size_t d, Chain chain);
  int64_t end_of(int32_t k) const { return ends_[static_cast<size_t>(k)]; }

  const ir::Schedule& base_;
  ComputeOrder order_;
  std::vector<int64_t> ends_;  // position -> estimated end (start + duration), nondecreasing
  std::vector<SwapRecomputeCandidate> candidates_;
  MaxSegmentTree memory_;
  CopyQueue out_queue_;
  CopyQueue in_queue_;
  bool shared_engine_ = false;  // half duplex: one queue for both directions

  std::vector<int32_t> produced_at_;  // tensor -> producer position (-1: resident at the start)
  std::vector<int32_t> last_read_;    // tensor -> last reader position (-1: none)
  std::vector<int32_t> gone_first_;   // tensor -> first position of a decision's off-device span
  std::vector<int32_t> gone_last_;
  std::vector<uint8_t> swapped_;  // tensor -> has a swap decision

  std::vector<TensorDecision> decisions_;
  std::vector<int32_t> decision_of_;                // candidate -> index in decisions_ (-1: none)
  std::vector<Chain> chains_;                       // per decision (recompute only)
  std::vector<int64_t> bump_bytes_;                 // per decision: extra bytes added at the reload
  std::vector<std::vector<size_t>> chain_readers_;  // tensor -> recompute decisions reading it
  int64_t swapped_bytes_ = 0;
  int32_t swaps_ = 0;
  int32_t recomputes_ = 0;

  mutable std::vector<uint32_t> visit_mark_;  // chain scratch, stamped per walk
  mutable uint32_t visit_stamp_ = 0;
  mutable size_t out_ops_ = 0;  // ops in the chain being walked
};

// The driver both policies share. select(state, target_bytes) adds decisions until the estimate is
// at most target_bytes (true) or it runs out (false). The plan is emitted and confirmed with
// evaluate_schedule at the input's limit; when the simulator disagrees with the estimate, the target
// drops by the difference and selection continues from where it was (a few rounds). When nothing
// fits, every candidate is evicted (target -1) and that most-saving plan is returned.
using GreedySelect = std::function<bool(GreedyPlanState& state, int64_t target_bytes)>;
PolicyResult plan_greedy(const PolicyInput& input, std::string_view policy, const GreedySelect& select);

}  // namespace mutwo::policies
