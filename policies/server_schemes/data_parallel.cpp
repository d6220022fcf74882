// dp and dp-swap: data parallel, all state resident or each GPU swapping alone (policies/server_schemes.hpp).
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "policies/server_schemes.hpp"
#include "policies/server_schemes/scheme_parts.hpp"
#include "policies/server_task_emitter.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {
namespace {

using namespace scheme_parts;

// dp (swap = false) and dp-swap (swap = true).
ServerSchedule data_parallel(const PackedModel& m, const costmodel::ServerSpec& server, const SchemeConfig& c,
                             bool swap) {
  ServerSchedule s = empty_schedule(swap ? "dp-swap" : "dp", m, server, c, true);
  ServerTaskEmitter e(s, c.gpus);
  const size_t packs = m.packs.size();
  if (!swap) {
    for (auto& b : s.initial_bytes) b = m.weight_bytes() + m.optimizer_bytes();
  }
  std::vector<std::vector<int32_t>> last_backward(static_cast<size_t>(c.gpus),
                                                  std::vector<int32_t>(packs, -1));
  for (int32_t mb = 0; mb < c.micro_batches; ++mb) {
    for (int32_t g = 0; g < c.gpus; ++g) {
      for (size_t p = 0; p < packs; ++p) {
        const LayerPack& k = m.packs[p];
        if (!swap) {
          e.compute(g, k.forward_ns, pack_label("fwd", p, mb), {}, k.stash_bytes);
          continue;
        }
        const int32_t w = e.swap_in(g, k.weight_bytes, Payload::weights, pack_label("W in fwd", p, mb));
        const int32_t f = e.compute(g, k.forward_ns, pack_label("fwd", p, mb), {w}, k.stash_bytes);
        e.swap_out(g, k.stash_bytes, Payload::stashed_activations, pack_label("X out", p, mb), f);
        e.swap_out(g, k.weight_bytes, Payload::weights, pack_label("W out fwd", p, mb), f);
      }
      for (size_t p = packs; p-- > 0;) {
        const LayerPack& k = m.packs[p];
        const int64_t new_grad = mb == 0 ? k.gradient_bytes : 0;
        if (!swap) {
          last_backward[static_cast<size_t>(g)][p] =
              e.compute(g, k.backward_ns, pack_label("bwd", p, mb), {}, new_grad, k.stash_bytes);
          continue;
        }
        Waits waits{e.swap_in(g, k.weight_bytes, Payload::weights, pack_label("W in bwd", p, mb)),
                    e.swap_in(g, k.stash_bytes, Payload::stashed_activations, pack_label("X in", p, mb))};
        if (mb > 0)
          waits.push_back(
              e.swap_in(g, k.gradient_bytes, Payload::weight_gradients, pack_label("dW in", p, mb)));
        const int32_t b =
            e.compute(g, k.backward_ns, pack_label("bwd", p, mb), waits, new_grad, k.stash_bytes);
        e.swap_out(g, k.gradient_bytes, Payload::weight_gradients, pack_label("dW out", p, mb), b);
        e.swap_out(g, k.weight_bytes, Payload::weights, pack_label("W out bwd", p, mb), b);
        last_backward[static_cast<size_t>(g)][p] = b;
      }
    }
  }
  // The gradients are summed over the GPUs, then every GPU updates its replica.
  for (size_t p = packs; p-- > 0;) {
    const LayerPack& k = m.packs[p];
    std::vector<int32_t> ready(static_cast<size_t>(c.gpus));
    for (int32_t g = 0; g < c.gpus; ++g) {
      ready[static_cast<size_t>(g)] =
          swap ? e.swap_in(g, k.gradient_bytes, Payload::weight_gradients, pack_label("dW in update", p, -1))
               : last_backward[static_cast<size_t>(g)][p];
    }
    const std::vector<Waits> reduced = e.all_reduce(c.gpus, k.gradient_bytes, ready, pack_label("dW", p, -1));
    for (int32_t g = 0; g < c.gpus; ++g) {
      Waits waits = reduced[static_cast<size_t>(g)];
      if (!swap) {
        e.compute(g, k.update_ns, pack_label("update", p, -1), waits, 0, k.gradient_bytes);
        continue;
      }
      waits.push_back(e.swap_in(g, k.weight_bytes, Payload::weights, pack_label("W in update", p, -1)));
      waits.push_back(e.swap_in(g, k.optimizer_bytes, Payload::optimizer_state, pack_label("K in", p, -1)));
      const int32_t u = e.compute(g, k.update_ns, pack_label("update", p, -1), waits, 0, k.gradient_bytes);
      e.swap_out(g, k.weight_bytes, Payload::weights, pack_label("W out update", p, -1), u);
      e.swap_out(g, k.optimizer_bytes, Payload::optimizer_state, pack_label("K out", p, -1), u);
    }
  }
  return s;
}

SchemeVolumes dp_volumes(const PackedModel& m, const SchemeConfig& c) {
  return {0, 0, 0, 0, all_reduce_bytes(volume_terms(m, c))};
}
SchemeVolumes dp_swap_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {v.n * (4 * v.mb + 2) * v.w, 2 * v.mb * v.n * v.dw, 2 * v.n * v.k, 2 * v.mb * v.n * v.x,
          all_reduce_bytes(v)};
}

void register_schemes(ServerSchemeRegistry& registry) {
  registry.add({"dp", "data parallel, all state resident, ring all-reduce of gradients", true, false,
                [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
                  return data_parallel(m, s, c, false);
                },
                dp_volumes});
  registry.add({"dp-swap", "data parallel, each GPU swapping alone (vDNN/LMS-style per-GPU virtual memory)",
                true, true,
                [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
                  return data_parallel(m, s, c, true);
                },
                dp_swap_volumes});
}

[[maybe_unused]] const bool kRegistered = Plugins<ServerSchemeRegistry>::add(10, register_schemes);

}  // namespace
}  // namespace mutwo::policies
