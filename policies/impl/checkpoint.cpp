// checkpoint: sqrt(n) segment checkpointing after Chen, Xu, Zhang and Guestrin, "Training Deep Nets
// with Sublinear Memory Cost" (arXiv:1604.06174, 2016).
//
// Per sub-array: the candidate checkpoints are the forward graph's articulation tensors (at the
// boundary after their producer, they are the only forward-made tensor that later forward ops still
// read, so keeping one bounds a recompute segment: the outputs between ResNet blocks or transformer
// sub-layers), restricted to tensors the backward reads (so they stay resident until their segment's
// backward; the base frees a forward-only tensor after its last forward reader). Every ceil(sqrt(m))-th
// of the m candidates is kept; every other saved activation is dropped after its last forward use and
// recomputed, its whole segment at once, before the segment's first backward use (Chen's Algorithm 1:
// one extra forward pass in total).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "policies/memory_plan.hpp"
#include "policies/plan_emitter.hpp"
#include "policies/policy_registry.hpp"
#include "policies/policy_result.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

namespace {

using ir::kNoId;
using ir::Phase;
using ir::TensorId;

constexpr int32_t kNever = std::numeric_limits<int32_t>::max();

struct Segmenting {
  MemoryPlan plan;
  int32_t candidates = 0;
  int32_t kept = 0;
  int64_t recomputed_bytes = 0;
};

// Adds the decisions of one sub-array (ops [first_op, end_op)) to `out`.
void plan_sub_array(const ir::Schedule& base, const ComputeOrder& order, ir::OpId first_op, ir::OpId end_op,
                    Segmenting& out) {
  const ir::Graph& g = base.graph;
  // Forward ops of the range in compute order.
  std::vector<int32_t> forward;  // positions
  for (ir::OpId op = first_op; op < end_op; ++op) {
    if (g.op(op).phase == Phase::forward) forward.push_back(order.position_of[static_cast<size_t>(op)]);
  }
  std::sort(forward.begin(), forward.end());
  if (forward.empty()) return;

  // Per tensor made in the range: last forward reader and first backward reader (positions).
  auto pos = [&](ir::OpId op) { return order.position_of[static_cast<size_t>(op)]; };
  auto saved_activation = [&](TensorId t) {
    const ir::Tensor& tensor = g.tensor(t);
    return tensor.role == ir::TensorRole::activation && tensor.producer != kNoId;
  };
  auto first_backward = [&](TensorId t) {
    int32_t first = kNever;
    for (ir::OpId c : g.tensor(t).consumers) {
      if (g.op(c).phase != Phase::forward) first = std::min(first, pos(c));
    }
    return first;
  };
  auto last_forward_access = [&](TensorId t) {
    int32_t last = pos(g.tensor(t).producer);
    for (ir::OpId c : g.tensor(t).consumers) {
      if (g.op(c).phase == Phase::forward) last = std::max(last, pos(c));
    }
    return last;
  };

  // Articulation tensors: sweep the forward positions counting forward-made tensors still read by a
  // later forward op; where exactly one crosses and the op just run made it, it is a candidate.
  std::vector<int32_t> ends_at(order.op_at.size() + 1, 0);
  std::vector<TensorId> candidates;
  int32_t live = 0;
  for (int32_t p : forward) {
    const ir::Op& op = g.op(order.op_at[static_cast<size_t>(p)]);
    live -= ends_at[static_cast<size_t>(p)];
    TensorId crossing = kNoId;
    for (TensorId t : op.outputs) {
      int32_t last = -1;
      for (ir::OpId c : g.tensor(t).consumers) {
        if (g.op(c).phase == Phase::forward) last = std::max(last, pos(c));
      }
      if (last > p) {
        ++live;
        ++ends_at[static_cast<size_t>(last)];
        crossing = crossing == kNoId ? t : kNoId - 1;  // two outputs crossing: no articulation
      }
    }
    if (live == 1 && crossing >= 0 && saved_activation(crossing) && first_backward(crossing) != kNever) {
      candidates.push_back(crossing);
    }
  }
  const auto m = static_cast<int32_t>(candidates.size());
  out.candidates += m;
  if (m == 0) return;
  const auto stride = static_cast<int32_t>(std::ceil(std::sqrt(static_cast<double>(m))));
  // Segment boundaries: the producer positions of the kept checkpoints.
  std::vector<int32_t> kept_at;
  std::vector<char> kept(g.tensors.size(), 0);
  for (int32_t i = stride - 1; i < m; i += stride) {
    kept[static_cast<size_t>(candidates[static_cast<size_t>(i)])] = 1;
    kept_at.push_back(pos(g.tensor(candidates[static_cast<size_t>(i)]).producer));
  }
  out.kept += static_cast<int32_t>(kept_at.size());

  // Saved activations to drop, by segment (index of the first kept checkpoint made at or after them).
  struct Dropped {
    TensorId tensor;
    size_t segment;
  };
  std::vector<Dropped> dropped;
  std::vector<int32_t> reload(kept_at.size() + 1, kNever);
  for (int32_t p : forward) {
    const ir::Op& op = g.op(order.op_at[static_cast<size_t>(p)]);
    if (!op.recomputable) continue;
    for (TensorId t : op.outputs) {
      if (!saved_activation(t) || kept[static_cast<size_t>(t)]) continue;
      const int32_t first = first_backward(t);
      if (first == kNever) continue;
      const auto segment =
          static_cast<size_t>(std::lower_bound(kept_at.begin(), kept_at.end(), p) - kept_at.begin());
      reload[segment] = std::min(reload[segment], first);
      dropped.push_back({t, segment});
    }
  }
  for (const Dropped& d : dropped) {
    TensorDecision decision;
    decision.tensor = d.tensor;
    decision.action = TensorAction::recompute;
    decision.evict_after = last_forward_access(d.tensor);
    decision.reload_before = reload[d.segment];
    if (decision.reload_before - decision.evict_after < 2) continue;  // no gap to free it in
    out.plan.decisions.push_back(decision);
    out.recomputed_bytes += g.tensor(d.tensor).bytes;
  }
}

class CheckpointPolicy : public MemoryPolicy {
 public:
  std::string_view name() const override { return "checkpoint"; }
  PolicyResult plan(const PolicyInput& input) const override {
    check_policy_input(input, name());
    const ir::Schedule& base = *input.base;
    const ComputeOrder order = compute_order(base, *input.cost);
    Segmenting seg;
    if (base.sub_arrays.empty()) {
      plan_sub_array(base, order, 0, static_cast<ir::OpId>(base.graph.ops.size()), seg);
    } else {
      for (const ir::SubArray& sa : base.sub_arrays) plan_sub_array(base, order, sa.first_op, sa.end_op, seg);
    }
    std::string note = fmt::format("{} of {} candidate checkpoints kept, {} recomputed ({:.1f} MB)", seg.kept,
                                   seg.candidates, seg.plan.decisions.size(), seg.recomputed_bytes / 1e6);
    return evaluate_schedule(emit_plan(base, order, seg.plan, "checkpoint"), input, std::move(note));
  }
};

}  // namespace

namespace {

void register_checkpoint_policy(PolicyRegistry& registry) {
  registry.add(
      {"checkpoint",
       "sqrt(n) checkpointing: keep every sqrt(n)-th articulation tensor, recompute each segment before "
       "its backward",
       "Chen et al., arXiv:1604.06174 2016 (Training Deep Nets with Sublinear Memory Cost)",
       [] { return std::make_unique<CheckpointPolicy>(); }});
}

[[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(20, register_checkpoint_policy);

}  // namespace

}  // namespace mutwo::policies
