#include "policies/greedy_planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "ir/memory_rule.hpp"
#include "policies/plan_emitter.hpp"
#include "policies/policy_result.hpp"
#include "sim/memory_simulator.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

using ir::InstrKind;
using ir::kNoId;
using ir::Op;
using ir::OpId;
using ir::Tensor;
using ir::TensorId;
using ir::TensorRole;

namespace {

// A recomputation that needs more ops than this rebuilds half the network; treat it as impossible.
constexpr size_t kMaxChainOps = 64;
// How many positions before the latest trigger a swap_in may move to find a free host->device slot.
constexpr int32_t kTriggerTries = 8;

// Device memory during each position's compute (outputs and workspace allocated), replaying the
// base schedule's list order through the simulator's own allocator model.
std::vector<int64_t> memory_per_position(const ir::Schedule& base, const ComputeOrder& order) {
  sim::MemorySimulator memory(base.graph, 0);
  memory.allocate_resident();
  std::vector<int64_t> at(order.op_at.size(), 0);
  for (const ir::Instruction& in : base.instructions) {
    if (in.kind == InstrKind::compute) {
      memory.start_op(in.op, 0, in.id);
      at[static_cast<size_t>(order.position_of[static_cast<size_t>(in.op)])] = memory.in_use_bytes();
      memory.end_op(in.op, 0);
    } else if (in.kind == InstrKind::free) {
      memory.free_tensor(in.tensor, 0);
    }
  }
  return at;
}

}  // namespace

GreedyPlanState::GreedyPlanState(const ir::Schedule& base, const costmodel::OpCostModel& cost)
    : base_(base),
      order_(compute_order(base, cost)),
      memory_(memory_per_position(base, order_)),
      shared_engine_(!cost.device().full_duplex) {
  const ir::Graph& g = base.graph;
  const size_t n = order_.op_at.size();
  ends_.resize(n);
  for (size_t k = 0; k < n; ++k) ends_[k] = order_.start_ns[k] + order_.duration_ns[k];

  const size_t tensors = g.tensors.size();
  produced_at_.assign(tensors, -1);
  last_read_.assign(tensors, -1);
  gone_first_.assign(tensors, std::numeric_limits<int32_t>::max());
  gone_last_.assign(tensors, -1);
  swapped_.assign(tensors, 0);
  chain_readers_.resize(tensors);
  for (const Tensor& t : g.tensors) {
    const auto ut = static_cast<size_t>(t.id);
    if (t.producer != kNoId) produced_at_[ut] = order_.position_of[static_cast<size_t>(t.producer)];
    for (OpId c : t.consumers)
      last_read_[ut] = std::max(last_read_[ut], order_.position_of[static_cast<size_t>(c)]);
  }
  visit_mark_.assign(g.ops.size(), 0);

  const costmodel::DeviceSpec& device = cost.device();
  for (const InactiveWindow& w : inactive_windows(base, order_)) {
    const Tensor& t = g.tensor(w.tensor);
    const Op& producer = g.op(t.producer);
    SwapRecomputeCandidate c;
    c.window = w;
    c.producer_pos = produced_at_[static_cast<size_t>(t.id)];
    c.rounded_bytes = ir::allocation_bytes(t.bytes);
    c.swap_out_ns =
        costmodel::transfer_duration_ns(device, t.bytes, costmodel::CopyDirection::device_to_host);
    c.swap_in_ns = costmodel::transfer_duration_ns(device, t.bytes, costmodel::CopyDirection::host_to_device);
    c.recomputable = producer.phase == ir::Phase::forward && producer.recomputable;
    candidates_.push_back(c);
  }
  decision_of_.assign(candidates_.size(), -1);
}

bool GreedyPlanState::helps(size_t c, int64_t target_bytes) const {
  const InactiveWindow& w = candidates_[c].window;
  return memory_.max(w.evict_after + 1, w.reload_before - 1) > target_bytes;
}

int64_t GreedyPlanState::free_time_ns(size_t c) const {
  const SwapRecomputeCandidate& k = candidates_[c];
  const int64_t in_start = order_.start_ns[static_cast<size_t>(k.window.reload_before)] - k.swap_in_ns;
  const int64_t out_end = end_of(k.producer_pos) + k.swap_out_ns;
  return in_start - out_end;
}

bool GreedyPlanState::resident_before(TensorId t, int32_t k) const {
  const auto ut = static_cast<size_t>(t);
  const TensorRole role = base_.graph.tensors[ut].role;
  if (ir::is_persistent(role)) return true;
  if (gone_first_[ut] <= k && k <= gone_last_[ut]) return false;
  return produced_at_[ut] < k && last_read_[ut] >= k;
}

// Rebuild t before position k: its producer, after any of that op's inputs that are gone then.
bool GreedyPlanState::chain_visit(TensorId t, int32_t k, Chain& out) const {
  const ir::Graph& g = base_.graph;
  const Tensor& tensor = g.tensor(t);
  const auto ut = static_cast<size_t>(t);
  if (tensor.producer == kNoId) return false;
  // A swapped tensor between its free and its reload is in flight; emit_plan would race its swap_in.
  if (swapped_[ut] && gone_first_[ut] <= k && k <= gone_last_[ut]) return false;
  const Op& p = g.op(tensor.producer);
  if (p.phase != ir::Phase::forward || !p.recomputable) return false;
  uint32_t& mark = visit_mark_[static_cast<size_t>(p.id)];
  if (mark == visit_stamp_) return true;
  mark = visit_stamp_;
  out.duration_ns += order_.duration_ns[static_cast<size_t>(order_.position_of[static_cast<size_t>(p.id)])];
  for (TensorId o : p.outputs) {
    if (!resident_before(o, k)) out.extra_bytes += ir::allocation_bytes(g.tensor(o).bytes);
  }
  if (++out_ops_ > kMaxChainOps) return false;
  for (TensorId in : p.inputs) {
    if (resident_before(in, k)) {
      out.leaves.push_back(in);
    } else if (!chain_visit(in, k, out)) {
      return false;
    }
  }
  return true;
}

std::optional<GreedyPlanState::Chain> GreedyPlanState::chain(TensorId t, int32_t k) const {
  if (++visit_stamp_ == 0) {  // wrapped: clear the marks once
    std::fill(visit_mark_.begin(), visit_mark_.end(), 0);
    visit_stamp_ = 1;
  }
  out_ops_ = 0;
  Chain c;
  if (!chain_visit(t, k, c)) return std::nullopt;
  // The tensor itself is on the device at its reload in the base curve already.
  if (!resident_before(t, k)) c.extra_bytes -= ir::allocation_bytes(base_.graph.tensor(t).bytes);
  std::sort(c.leaves.begin(), c.leaves.end());
  c.leaves.erase(std::unique(c.leaves.begin(), c.leaves.end()), c.leaves.end());
  return c;
}

std::vector<size_t> GreedyPlanState::readers_in(TensorId t, int32_t first, int32_t last) const {
  std::vector<size_t> out;
  for (size_t d : chain_readers_[static_cast<size_t>(t)]) {
    const int32_t r = decisions_[d].reload_before;
    if (first <= r && r <= last) out.push_back(d);
  }
  return out;
}

void GreedyPlanState::set_chain(size_t d, Chain c) {
  for (TensorId leaf : chains_[d].leaves) {
    auto& readers = chain_readers_[static_cast<size_t>(leaf)];
    readers.erase(std::remove(readers.begin(), readers.end(), d), readers.end());
  }
  for (TensorId leaf : c.leaves) chain_readers_[static_cast<size_t>(leaf)].push_back(d);
  const int32_t r = decisions_[d].reload_before;
  memory_.add(r, r, c.extra_bytes - bump_bytes_[d]);
  bump_bytes_[d] = c.extra_bytes;
  chains_[d] = std::move(c);
}

std::optional<SwapPlacement> GreedyPlanState::place_swap(size_t c, SwapMode mode) const {
  const SwapRecomputeCandidate& k = candidates_[c];
  const int32_t e = k.window.evict_after;
  const int32_t r = k.window.reload_before;
  const TensorId t = k.window.tensor;
  if (!readers_in(t, e + 1, r).empty()) return std::nullopt;
  const bool hidden = mode == SwapMode::hidden;
  const CopyQueue& in_queue = shared_engine_ ? out_queue_ : in_queue_;

  SwapPlacement p;
  p.out_ready_ns = end_of(k.producer_pos);
  const CopyQueue::Trial out = out_queue_.trial(p.out_ready_ns, k.swap_out_ns, 2 * int64_t{t});
  // Free once the copy is done: the first position from e on that ends no earlier.
  const auto first_end = std::lower_bound(ends_.begin() + e, ends_.begin() + r, out.end_ns);
  int64_t out_stall = out.added_lateness_ns;
  if (first_end == ends_.begin() + r) {
    if (hidden) return std::nullopt;
    p.evict_after = e;  // the free waits for the copy: compute stalls meanwhile
    out_stall += out.end_ns - end_of(e);
  } else {
    p.evict_after = static_cast<int32_t>(first_end - ends_.begin());
  }
  if (hidden && out_stall > 0) return std::nullopt;
  if (p.evict_after + 1 >= r) return std::nullopt;
  const int64_t free_ns = std::max(end_of(p.evict_after), out.end_ns);

  // Latest trigger whose end leaves the whole copy before the reload starts.
  const int64_t reload_ns = order_.start_ns[static_cast<size_t>(r)];
  const auto latest =
      std::upper_bound(ends_.begin() + p.evict_after, ends_.begin() + r, reload_ns - k.swap_in_ns);
  int32_t s = static_cast<int32_t>(latest - ends_.begin()) - 1;
  if (mode == SwapMode::most_saving) s = r - 1;
  if (s <= p.evict_after) {
    if (hidden) return std::nullopt;
    s = p.evict_after + 1;  // saves one position; the rest of the copy stalls
  }
  int64_t best_stall = std::numeric_limits<int64_t>::max();
  for (int32_t tries = 0; tries < kTriggerTries && s > p.evict_after; ++tries, --s) {
    const int64_t ready = std::max(end_of(s), free_ns);
    const CopyQueue::Trial in = in_queue.trial(ready, k.swap_in_ns, 2 * int64_t{t} + 1);
    const int64_t stall = lateness(in.end_ns, reload_ns) + in.added_lateness_ns;
    if (stall < best_stall) {
      best_stall = stall;
      p.swap_in_after = s;
      p.in_ready_ns = ready;
    }
    if (stall == 0 || mode == SwapMode::most_saving) break;
  }
  if (p.swap_in_after <= p.evict_after) return std::nullopt;
  if (hidden && best_stall > 0) return std::nullopt;
  p.stall_ns = out_stall + best_stall;
  return p;
}

std::optional<RecomputeCost> GreedyPlanState::recompute_cost(size_t c) {
  const SwapRecomputeCandidate& k = candidates_[c];
  if (!k.recomputable) return std::nullopt;
  const InactiveWindow& w = k.window;
  const std::optional<Chain> own = chain(w.tensor, w.reload_before);
  if (!own) return std::nullopt;
  RecomputeCost cost{own->duration_ns, own->extra_bytes,
                     memory_.max(w.reload_before, w.reload_before) + own->extra_bytes};
  // Recomputations that read the tensor inside its window must now rebuild it too.
  const std::vector<size_t> readers = readers_in(w.tensor, w.evict_after + 1, w.reload_before);
  if (readers.empty()) return cost;
  const auto ut = static_cast<size_t>(w.tensor);
  gone_first_[ut] = w.evict_after + 1;
  gone_last_[ut] = w.reload_before;
  bool ok = true;
  for (size_t d : readers) {
    const std::optional<Chain> longer = chain(decisions_[d].tensor, decisions_[d].reload_before);
    if (!longer) {
      ok = false;
      break;
    }
    cost.duration_ns += longer->duration_ns - chains_[d].duration_ns;
    // At a reader's reload inside the window the tensor itself is gone; its chain holds the helpers.
    const int32_t r = decisions_[d].reload_before;
    const int64_t gone = r < w.reload_before ? k.rounded_bytes : 0;
    cost.reload_peak_bytes = std::max(
        cost.reload_peak_bytes, memory_.max(r, r) - gone + longer->extra_bytes - chains_[d].extra_bytes);
  }
  gone_first_[ut] = std::numeric_limits<int32_t>::max();
  gone_last_[ut] = -1;
  if (!ok) return std::nullopt;
  return cost;
}

void GreedyPlanState::apply_swap(size_t c, const SwapPlacement& p) {
  const SwapRecomputeCandidate& k = candidates_[c];
  const TensorId t = k.window.tensor;
  const int32_t r = k.window.reload_before;
  out_queue_.insert(p.out_ready_ns, k.swap_out_ns, 2 * int64_t{t}, end_of(p.evict_after));
  (shared_engine_ ? out_queue_ : in_queue_)
      .insert(p.in_ready_ns, k.swap_in_ns, 2 * int64_t{t} + 1, order_.start_ns[static_cast<size_t>(r)]);
  memory_.add(p.evict_after + 1, p.swap_in_after, -k.rounded_bytes);
  const auto ut = static_cast<size_t>(t);
  gone_first_[ut] = p.evict_after + 1;
  gone_last_[ut] = r;
  swapped_[ut] = 1;
  decision_of_[c] = static_cast<int32_t>(decisions_.size());
  decisions_.push_back({t, TensorAction::swap, p.evict_after, r, p.swap_in_after});
  chains_.emplace_back();
  bump_bytes_.push_back(0);
  swapped_bytes_ += k.window.bytes;
  ++swaps_;
}

void GreedyPlanState::apply_recompute(size_t c) {
  const SwapRecomputeCandidate& k = candidates_[c];
  const InactiveWindow& w = k.window;
  const std::vector<size_t> readers = readers_in(w.tensor, w.evict_after + 1, w.reload_before);
  const auto ut = static_cast<size_t>(w.tensor);
  gone_first_[ut] = w.evict_after + 1;
  gone_last_[ut] = w.reload_before;
  std::optional<Chain> own = chain(w.tensor, w.reload_before);
  if (!own)
    throw Error(
        fmt::format("greedy plan: tensor {} cannot be recomputed (check recompute_cost first)", w.tensor));
  memory_.add(w.evict_after + 1, w.reload_before - 1, -k.rounded_bytes);
  const size_t d = decisions_.size();
  decision_of_[c] = static_cast<int32_t>(d);
  decisions_.push_back({w.tensor, TensorAction::recompute, w.evict_after, w.reload_before, -1});
  chains_.emplace_back();
  bump_bytes_.push_back(0);
  set_chain(d, std::move(*own));
  for (size_t reader : readers) {
    std::optional<Chain> longer = chain(decisions_[reader].tensor, decisions_[reader].reload_before);
    if (!longer)
      throw Error(fmt::format("greedy plan: recomputing tensor {} breaks a chosen recomputation", w.tensor));
    set_chain(reader, std::move(*longer));
  }
  ++recomputes_;
}

MemoryPlan GreedyPlanState::plan() const {
  MemoryPlan plan;
  plan.decisions = decisions_;
  std::sort(plan.decisions.begin(), plan.decisions.end(),
            [](const TensorDecision& a, const TensorDecision& b) { return a.tensor < b.tensor; });
  return plan;
}

std::string GreedyPlanState::note() const {
  return fmt::format("{} swapped ({:.1f} MB), {} recomputed", swaps_,
                     static_cast<double>(swapped_bytes_) / 1e6, recomputes_);
}

// ---- driver ------------------------------------------------------------------------------------

PolicyResult plan_greedy(const PolicyInput& input, std::string_view policy, const GreedySelect& select) {
  check_policy_input(input, policy);
  GreedyPlanState state(*input.base, *input.cost);
  const int64_t limit = input.memory_limit_bytes;
  constexpr int kConfirmRounds = 3;
  int64_t target = limit;
  for (int round = 0; round < kConfirmRounds; ++round) {
    if (!select(state, target)) break;
    PolicyResult r = evaluate_schedule(
        emit_plan(*input.base, state.order(), state.plan(), std::string(policy)), input, state.note());
    if (r.feasible) return r;
    // The simulator needs more than the estimate said: aim lower by the shortfall.
    const int64_t shortfall = std::max(r.peak_bytes - limit, r.peak_bytes - state.peak_estimate());
    target = std::min(target - std::max<int64_t>(shortfall, ir::kAllocationBlockBytes),
                      limit - (r.peak_bytes - state.peak_estimate()));
  }
  select(state, -1);  // the most-saving plan: every candidate that can be evicted
  return evaluate_schedule(emit_plan(*input.base, state.order(), state.plan(), std::string(policy)), input,
                           state.note());
}

}  // namespace mutwo::policies
