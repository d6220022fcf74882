// harmony-pp: Harmony's pipeline, packs round-robin over the GPUs (policies/server_schemes.hpp).
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

ServerSchedule harmony_pp(const PackedModel& m, const costmodel::ServerSpec& server, const SchemeConfig& c) {
  ServerSchedule s = empty_schedule("harmony-pp", m, server, c, false);
  ServerTaskEmitter e(s, c.gpus);
  const size_t packs = m.packs.size();
  const auto mbs = static_cast<size_t>(c.micro_batches);
  auto gpu_of = [&](size_t p) { return static_cast<int32_t>(p % static_cast<size_t>(c.gpus)); };
  // The task after which micro-batch mb's input to pack p is on p's GPU (-1: none needed).
  std::vector<int32_t> arrive(mbs, -1);
  for (size_t p = 0; p < packs; ++p) {
    const LayerPack& k = m.packs[p];
    const int32_t g = gpu_of(p);
    const int32_t w = e.swap_in(g, k.weight_bytes, Payload::weights, pack_label("W in fwd", p, -1));
    for (int32_t mb = 0; mb < c.micro_batches; ++mb) {
      const auto mbi = static_cast<size_t>(mb);
      const int64_t drop = mb + 1 == c.micro_batches ? k.weight_bytes : 0;
      const int64_t input = p > 0 && gpu_of(p - 1) != g ? m.packs[p - 1].output_bytes : 0;
      const int32_t f =
          e.compute(g, k.forward_ns, pack_label("fwd", p, mb), {w, arrive[mbi]}, k.stash_bytes, drop + input);
      e.swap_out(g, k.stash_bytes, Payload::stashed_activations, pack_label("X out", p, mb), f);
      arrive[mbi] = f;
      if (p + 1 < packs && gpu_of(p + 1) != g) {
        arrive[mbi] =
            e.copy(g, gpu_of(p + 1), k.output_bytes, Payload::boundary_activations,
                   fmt::format("activations pack {} to {} mb {}", p, p + 1, mb), {f}, k.output_bytes);
      }
    }
  }
  std::fill(arrive.begin(), arrive.end(), -1);
  for (size_t p = packs; p-- > 0;) {
    const LayerPack& k = m.packs[p];
    const int32_t g = gpu_of(p);
    const int32_t w = e.swap_in(g, k.weight_bytes, Payload::weights, pack_label("W in bwd", p, -1));
    int32_t b = -1;
    for (int32_t mb = 0; mb < c.micro_batches; ++mb) {
      const auto mbi = static_cast<size_t>(mb);
      const int32_t x = e.swap_in(g, k.stash_bytes, Payload::stashed_activations, pack_label("X in", p, mb));
      const int64_t input = p + 1 < packs && gpu_of(p + 1) != g ? k.output_bytes : 0;
      b = e.compute(g, k.backward_ns, pack_label("bwd", p, mb), {w, x, arrive[mbi]},
                    mb == 0 ? k.gradient_bytes : 0, k.stash_bytes + input);
      arrive[mbi] = b;
      if (p > 0 && gpu_of(p - 1) != g) {
        const int64_t bytes = m.packs[p - 1].output_bytes;
        arrive[mbi] = e.copy(g, gpu_of(p - 1), bytes, Payload::boundary_activations,
                             fmt::format("gradients pack {} to {} mb {}", p, p - 1, mb), {b}, bytes);
      }
    }
    const int32_t kin = e.swap_in(g, k.optimizer_bytes, Payload::optimizer_state, pack_label("K in", p, -1));
    const int32_t u = e.compute(g, k.update_ns, pack_label("update", p, -1), {b, kin}, 0, k.gradient_bytes);
    e.swap_out(g, k.weight_bytes, Payload::weights, pack_label("W out update", p, -1), u);
    e.swap_out(g, k.optimizer_bytes, Payload::optimizer_state, pack_label("K out", p, -1), u);
  }
  return s;
}

// harmony-pp's A: every pack boundary, the packs going round-robin over more than one GPU.
int64_t pack_boundary_bytes(const PackedModel& m, const SchemeConfig& c) {
  int64_t a = 0;
  if (c.gpus > 1) {
    for (size_t p = 0; p + 1 < m.packs.size(); ++p) a += m.packs[p].output_bytes;
  }
  return a;
}

SchemeVolumes harmony_pp_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {3 * v.w, 0, 2 * v.k, 2 * v.mb * v.x, 2 * v.mb * pack_boundary_bytes(m, c)};
}

void register_schemes(ServerSchemeRegistry& registry) {
  registry.add(
      {"harmony-pp",
       "Harmony PP: packs round-robin over GPUs, grouped over micro-batches, peer activations, JIT update",
       false, true, harmony_pp, harmony_pp_volumes});
}

[[maybe_unused]] const bool kRegistered = Plugins<ServerSchemeRegistry>::add(40, register_schemes);

}  // namespace
}  // namespace mutwo::policies
