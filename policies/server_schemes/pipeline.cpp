// pp and pp-swap: pipeline parallel, 1F1B, contiguous stages balanced by compute
// (policies/server_schemes.hpp).
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

// ---- Pipeline parallel -----------------------------------------------------------------------

// The 1F1B order of one stage: its warm-up forwards, then one forward one backward, then the rest
// of the backwards. Entries: micro-batch, forward or not.
std::vector<std::pair<int32_t, bool>> one_f_one_b(int32_t stage, int32_t stages, int32_t micro_batches) {
  const int32_t warm = std::min(stages - stage - 1, micro_batches);
  std::vector<std::pair<int32_t, bool>> order;
  for (int32_t i = 0; i < warm; ++i) order.emplace_back(i, true);
  for (int32_t i = 0; i + warm < micro_batches; ++i) {
    order.emplace_back(warm + i, true);
    order.emplace_back(i, false);
  }
  for (int32_t i = micro_batches - warm; i < micro_batches; ++i) order.emplace_back(i, false);
  return order;
}

// pp (swap = false) and pp-swap (swap = true): stage s on GPU s, 1F1B. Stages are emitted in an order
// that keeps every wait backwards: repeatedly, the next step of each stage whose input (the previous
// stage's forward, the next stage's backward, of that micro-batch) is already emitted.
ServerSchedule pipeline(const PackedModel& m, const costmodel::ServerSpec& server, const SchemeConfig& c,
                        bool swap) {
  ServerSchedule s = empty_schedule(swap ? "pp-swap" : "pp", m, server, c, false);
  ServerTaskEmitter e(s, c.gpus);
  const std::vector<int32_t> stage = pipeline_stages(m, c.gpus);
  const int32_t stages = c.gpus;
  auto first = [&](int32_t st) { return static_cast<size_t>(stage[static_cast<size_t>(st)]); };
  auto end = [&](int32_t st) { return static_cast<size_t>(stage[static_cast<size_t>(st) + 1]); };
  // Activations entering stage st (= leaving st - 1) per micro-batch.
  auto boundary = [&](int32_t st) { return m.packs[first(st) - 1].output_bytes; };
  if (!swap) {
    for (int32_t st = 0; st < stages; ++st) {
      for (size_t p = first(st); p < end(st); ++p) {
        s.initial_bytes[static_cast<size_t>(st)] += m.packs[p].weight_bytes + m.packs[p].optimizer_bytes;
      }
    }
  }
  const auto mbs = static_cast<size_t>(c.micro_batches);
  // The copy that delivers micro-batch mb's activations into stage st (forward) / its gradient (backward).
  std::vector<std::vector<int32_t>> arrive_fwd(static_cast<size_t>(stages), std::vector<int32_t>(mbs, -1));
  std::vector<std::vector<int32_t>> arrive_bwd(static_cast<size_t>(stages), std::vector<int32_t>(mbs, -1));
  std::vector<std::vector<uint8_t>> fwd_done(static_cast<size_t>(stages), std::vector<uint8_t>(mbs, 0));
  std::vector<std::vector<uint8_t>> bwd_done(static_cast<size_t>(stages), std::vector<uint8_t>(mbs, 0));
  std::vector<std::vector<std::pair<int32_t, bool>>> order(static_cast<size_t>(stages));
  std::vector<size_t> next(static_cast<size_t>(stages), 0);
  for (int32_t st = 0; st < stages; ++st)
    order[static_cast<size_t>(st)] = one_f_one_b(st, stages, c.micro_batches);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int32_t st = 0; st < stages; ++st) {
      const auto sti = static_cast<size_t>(st);
      if (next[sti] >= order[sti].size()) continue;
      const auto [mb, forward] = order[sti][next[sti]];
      const auto mbi = static_cast<size_t>(mb);
      if (forward && st > 0 && fwd_done[sti - 1][mbi] == 0) continue;
      if (!forward && st + 1 < stages && bwd_done[sti + 1][mbi] == 0) continue;
      ++next[sti];
      progress = true;
      int32_t last = -1;
      if (forward) {
        // The boundary's bytes arrived with the copy; the first forward of the stage consumes them.
        int64_t arrived = st > 0 ? boundary(st) : 0;
        for (size_t p = first(st); p < end(st); ++p) {
          const LayerPack& k = m.packs[p];
          Waits waits{arrive_fwd[sti][mbi]};
          if (swap)
            waits.push_back(e.swap_in(st, k.weight_bytes, Payload::weights, pack_label("W in fwd", p, mb)));
          last = e.compute(st, k.forward_ns, pack_label("fwd", p, mb), waits, k.stash_bytes, arrived);
          arrived = 0;
          if (swap) {
            e.swap_out(st, k.stash_bytes, Payload::stashed_activations, pack_label("X out", p, mb), last);
            e.swap_out(st, k.weight_bytes, Payload::weights, pack_label("W out fwd", p, mb), last);
          }
        }
        if (st + 1 < stages) {
          arrive_fwd[sti + 1][mbi] = e.copy(st, st + 1, boundary(st + 1), Payload::boundary_activations,
                                            fmt::format("activations stage {} to {} mb {}", st, st + 1, mb),
                                            {last}, boundary(st + 1));
        }
        fwd_done[sti][mbi] = 1;
        continue;
      }
      int64_t arrived = st + 1 < stages ? boundary(st + 1) : 0;
      for (size_t p = end(st); p-- > first(st);) {
        const LayerPack& k = m.packs[p];
        const int64_t new_grad = mb == 0 ? k.gradient_bytes : 0;
        Waits waits{arrive_bwd[sti][mbi]};
        if (swap) {
          waits.push_back(e.swap_in(st, k.weight_bytes, Payload::weights, pack_label("W in bwd", p, mb)));
          waits.push_back(
              e.swap_in(st, k.stash_bytes, Payload::stashed_activations, pack_label("X in", p, mb)));
          if (mb > 0)
            waits.push_back(
                e.swap_in(st, k.gradient_bytes, Payload::weight_gradients, pack_label("dW in", p, mb)));
        }
        last =
            e.compute(st, k.backward_ns, pack_label("bwd", p, mb), waits, new_grad, k.stash_bytes + arrived);
        arrived = 0;
        if (swap) {
          e.swap_out(st, k.gradient_bytes, Payload::weight_gradients, pack_label("dW out", p, mb), last);
          e.swap_out(st, k.weight_bytes, Payload::weights, pack_label("W out bwd", p, mb), last);
        }
      }
      if (st > 0) {
        arrive_bwd[sti - 1][mbi] =
            e.copy(st, st - 1, boundary(st), Payload::boundary_activations,
                   fmt::format("gradients stage {} to {} mb {}", st, st - 1, mb), {last}, boundary(st));
      }
      bwd_done[sti][mbi] = 1;
    }
  }
  // Every stage updates its packs once its last backward is done (stream order).
  for (int32_t st = 0; st < stages; ++st) {
    for (size_t p = end(st); p-- > first(st);) {
      const LayerPack& k = m.packs[p];
      if (!swap) {
        e.compute(st, k.update_ns, pack_label("update", p, -1), {}, 0, k.gradient_bytes);
        continue;
      }
      const Waits waits{
          e.swap_in(st, k.gradient_bytes, Payload::weight_gradients, pack_label("dW in update", p, -1)),
          e.swap_in(st, k.weight_bytes, Payload::weights, pack_label("W in update", p, -1)),
          e.swap_in(st, k.optimizer_bytes, Payload::optimizer_state, pack_label("K in", p, -1))};
      const int32_t u = e.compute(st, k.update_ns, pack_label("update", p, -1), waits, 0, k.gradient_bytes);
      e.swap_out(st, k.weight_bytes, Payload::weights, pack_label("W out update", p, -1), u);
      e.swap_out(st, k.optimizer_bytes, Payload::optimizer_state, pack_label("K out", p, -1), u);
    }
  }
  return s;
}

// A: the activations crossing the pipeline's stage boundaries (pp, pp-swap).
int64_t stage_boundary_bytes(const PackedModel& m, const SchemeConfig& c) {
  int64_t a = 0;
  const std::vector<int32_t> stage = pipeline_stages(m, c.gpus);
  for (size_t st = 1; st + 1 < stage.size(); ++st)
    a += m.packs[static_cast<size_t>(stage[st]) - 1].output_bytes;
  return a;
}
SchemeVolumes pp_volumes(const PackedModel& m, const SchemeConfig& c) {
  return {0, 0, 0, 0, 2 * c.micro_batches * stage_boundary_bytes(m, c)};
}
SchemeVolumes pp_swap_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {(4 * v.mb + 2) * v.w, 2 * v.mb * v.dw, 2 * v.k, 2 * v.mb * v.x,
          2 * v.mb * stage_boundary_bytes(m, c)};
}

void register_schemes(ServerSchemeRegistry& registry) {
  registry.add({"pp", "pipeline parallel (1F1B), contiguous balanced stages, all state resident", false,
                false,
                [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
                  return pipeline(m, s, c, false);
                },
                pp_volumes});
  registry.add({"pp-swap", "pipeline parallel (1F1B), each stage's GPU swapping alone", false, true,
                [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
                  return pipeline(m, s, c, true);
                },
                pp_swap_volumes});
}

[[maybe_unused]] const bool kRegistered = Plugins<ServerSchemeRegistry>::add(30, register_schemes);

}  // namespace
}  // namespace mutwo::policies
