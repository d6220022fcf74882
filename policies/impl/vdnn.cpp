// vdnn: static offloading after Rhu, Gimelshein, Clemons, Zulfiqar and Keckler, "vDNN: Virtualized
// Deep Neural Networks for Scalable, Memory-Efficient Neural Network Design" (MICRO 2016), in its
// vDNN_all form: every saved activation (a forward result a backward op reads) is copied to the host
// right after its producer and released after its last forward use; during the backward it is
// prefetched one layer ahead. Static: it swaps everything it can, whether or not the step fits.
//
// "Layer" here: the backward ops of one forward op (same forward_of), consecutive in the compute
// order. A tensor first read at position r is prefetched when the layer just before r (the run of
// backward ops ending at r - 1) starts, i.e. swap_in_after = the position before that run, so the
// copy overlaps that layer's backward (vDNN's prefetch of layer n-1 while layer n runs backward).
#include <fmt/format.h>

#include <algorithm>
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

constexpr int32_t kNever = std::numeric_limits<int32_t>::max();

// The position after which the prefetch of a tensor first read at `reload_before` is issued.
int32_t prefetch_trigger(const ir::Graph& g, const ComputeOrder& order, int32_t evict_after,
                         int32_t reload_before) {
  int32_t j = reload_before - 1;
  const ir::Op& prev = g.op(order.op_at[static_cast<size_t>(j)]);
  if (prev.phase == Phase::backward && prev.forward_of != kNoId) {
    while (j - 1 > evict_after) {
      const ir::Op& before = g.op(order.op_at[static_cast<size_t>(j - 1)]);
      if (before.phase != Phase::backward || before.forward_of != prev.forward_of) break;
      --j;
    }
  }
  return std::max(evict_after, j - 1);
}

class VdnnPolicy : public MemoryPolicy {
 public:
  std::string_view name() const override { return "vdnn"; }
  PolicyResult plan(const PolicyInput& input) const override {
    check_policy_input(input, name());
    const ir::Schedule& base = *input.base;
    const ir::Graph& g = base.graph;
    const ComputeOrder order = compute_order(base, *input.cost);
    auto pos = [&](ir::OpId op) { return order.position_of[static_cast<size_t>(op)]; };
    MemoryPlan plan;
    int64_t bytes = 0;
    for (const ir::Tensor& t : g.tensors) {
      if (t.role != ir::TensorRole::activation || t.producer == kNoId) continue;
      if (g.op(t.producer).phase != Phase::forward) continue;
      int32_t last_forward = pos(t.producer);
      int32_t first_backward = kNever;
      for (ir::OpId c : t.consumers) {
        if (g.op(c).phase == Phase::forward) {
          last_forward = std::max(last_forward, pos(c));
        } else {
          first_backward = std::min(first_backward, pos(c));
        }
      }
      if (first_backward == kNever || first_backward - last_forward < 2) continue;
      TensorDecision d;
      d.tensor = t.id;
      d.action = TensorAction::swap;
      d.evict_after = last_forward;
      d.reload_before = first_backward;
      d.swap_in_after = prefetch_trigger(g, order, last_forward, first_backward);
      plan.decisions.push_back(d);
      bytes += t.bytes;
    }
    std::string note = fmt::format("{} swapped ({:.1f} MB each way)", plan.decisions.size(), bytes / 1e6);
    return evaluate_schedule(emit_plan(base, order, plan, "vdnn"), input, std::move(note));
  }
};

}  // namespace

namespace {

void register_vdnn_policy(PolicyRegistry& registry) {
  registry.add({"vdnn",
                "offload every saved activation after its forward use, prefetch one layer ahead in backward",
                "Rhu et al., MICRO 2016 (vDNN: Virtualized Deep Neural Networks)",
                [] { return std::make_unique<VdnnPolicy>(); }});
}

[[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(30, register_vdnn_policy);

}  // namespace

}  // namespace mutwo::policies
