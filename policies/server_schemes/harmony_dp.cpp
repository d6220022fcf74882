// harmony-dp and harmony-dp-p2p: Harmony's data parallelism (policies/server_schemes.hpp).
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

// Harmony's DP; with p2p, swaps go over the peer links instead of the host where they can: GPU 0
// alone swaps a pack's W (and K) in from the host and passes it down a chain of peers, and alone
// writes the updated W and K back (every replica applies the same update).
ServerSchedule harmony_dp(const PackedModel& m, const costmodel::ServerSpec& server, const SchemeConfig& c,
                          bool p2p) {
  ServerSchedule s = empty_schedule(p2p ? "harmony-dp-p2p" : "harmony-dp", m, server, c, true);
  ServerTaskEmitter e(s, c.gpus);
  const size_t packs = m.packs.size();
  // Brings `bytes` onto every GPU: from the host to each, or (p2p) to GPU 0 and down the chain.
  auto bring = [&](int64_t bytes, Payload payload, const std::string& label) {
    std::vector<int32_t> arrived(static_cast<size_t>(c.gpus));
    for (int32_t g = 0; g < c.gpus; ++g) {
      arrived[static_cast<size_t>(g)] =
          p2p && g > 0 ? e.peer_in(g - 1, g, bytes, payload, label, arrived[static_cast<size_t>(g) - 1])
                       : e.swap_in(g, bytes, payload, label);
    }
    return arrived;
  };
  for (size_t p = 0; p < packs; ++p) {
    const LayerPack& k = m.packs[p];
    const std::vector<int32_t> w = bring(k.weight_bytes, Payload::weights, pack_label("W in fwd", p, -1));
    for (int32_t g = 0; g < c.gpus; ++g) {
      for (int32_t mb = 0; mb < c.micro_batches; ++mb) {
        // The clean weights are dropped after the group's last forward, not written back.
        const int64_t drop = mb + 1 == c.micro_batches ? k.weight_bytes : 0;
        const int32_t f = e.compute(g, k.forward_ns, pack_label("fwd", p, mb), {w[static_cast<size_t>(g)]},
                                    k.stash_bytes, drop);
        e.swap_out(g, k.stash_bytes, Payload::stashed_activations, pack_label("X out", p, mb), f);
      }
    }
  }
  for (size_t p = packs; p-- > 0;) {
    const LayerPack& k = m.packs[p];
    std::vector<int32_t> ready(static_cast<size_t>(c.gpus));
    const std::vector<int32_t> w = bring(k.weight_bytes, Payload::weights, pack_label("W in bwd", p, -1));
    for (int32_t g = 0; g < c.gpus; ++g) {
      for (int32_t mb = 0; mb < c.micro_batches; ++mb) {
        const int32_t x =
            e.swap_in(g, k.stash_bytes, Payload::stashed_activations, pack_label("X in", p, mb));
        ready[static_cast<size_t>(g)] =
            e.compute(g, k.backward_ns, pack_label("bwd", p, mb), {w[static_cast<size_t>(g)], x},
                      mb == 0 ? k.gradient_bytes : 0, k.stash_bytes);
      }
    }
    // Just in time: all-reduce and update this pack while the next one runs its backward.
    const std::vector<Waits> reduced = e.all_reduce(c.gpus, k.gradient_bytes, ready, pack_label("dW", p, -1));
    const std::vector<int32_t> kin =
        bring(k.optimizer_bytes, Payload::optimizer_state, pack_label("K in", p, -1));
    for (int32_t g = 0; g < c.gpus; ++g) {
      Waits waits = reduced[static_cast<size_t>(g)];
      waits.push_back(kin[static_cast<size_t>(g)]);
      const bool writes_back = !p2p || g == 0;
      const int64_t dropped = k.gradient_bytes + (writes_back ? 0 : k.weight_bytes + k.optimizer_bytes);
      const int32_t u = e.compute(g, k.update_ns, pack_label("update", p, -1), waits, 0, dropped);
      if (!writes_back) continue;
      e.swap_out(g, k.weight_bytes, Payload::weights, pack_label("W out update", p, -1), u);
      e.swap_out(g, k.optimizer_bytes, Payload::optimizer_state, pack_label("K out", p, -1), u);
    }
  }
  return s;
}

SchemeVolumes harmony_dp_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {3 * v.n * v.w, 0, 2 * v.n * v.k, 2 * v.mb * v.n * v.x, all_reduce_bytes(v)};
}
SchemeVolumes harmony_dp_p2p_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {3 * v.w, 0, 2 * v.k, 2 * v.mb * v.n * v.x, all_reduce_bytes(v) + (v.n - 1) * (2 * v.w + v.k)};
}

void register_schemes(ServerSchemeRegistry& registry) {
  registry.add({"harmony-dp",
                "Harmony DP: per-pack task grouping over micro-batches, just-in-time all-reduce and update",
                true, true,
                [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
                  return harmony_dp(m, s, c, false);
                },
                harmony_dp_volumes});
  registry.add({"harmony-dp-p2p",
                "Harmony DP swapping over peer links: one GPU swaps each pack in and out, peers pass it on",
                true, true,
                [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
                  return harmony_dp(m, s, c, true);
                },
                harmony_dp_p2p_volumes});
}

[[maybe_unused]] const bool kRegistered = Plugins<ServerSchemeRegistry>::add(20, register_schemes);

}  // namespace
}  // namespace mutwo::policies
