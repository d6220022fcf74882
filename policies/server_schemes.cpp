#include "policies/server_schemes.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "policies/server_task_emitter.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

using ir::kHostSide;
using ir::Payload;
using ir::ServerSchedule;
using ir::ServerTask;
using ir::ServerTaskKind;

namespace {

using Waits = ServerTaskEmitter::Waits;

ServerSchedule empty_schedule(std::string_view scheme, const PackedModel& model, const costmodel::ServerSpec& server,
                              const SchemeConfig& c, bool data_parallel) {
  ServerSchedule s;
  s.server = server.name;
  s.gpu_count = c.gpus;
  s.scheme = std::string(scheme);
  s.micro_batches = c.micro_batches;
  s.samples_per_step = model.micro_batch_samples * c.micro_batches * (data_parallel ? c.gpus : 1);
  s.initial_bytes.assign(static_cast<size_t>(c.gpus), 0);
  return s;
}

std::string pack_label(const char* what, size_t pack, int32_t micro_batch) {
  return micro_batch < 0 ? fmt::format("{} pack {}", what, pack) : fmt::format("{} pack {} mb {}", what, pack, micro_batch);
}

// ---- Data parallel ---------------------------------------------------------------------------

// dp (swap = false) and dp-swap (swap = true).
ServerSchedule data_parallel(const PackedModel& m, const costmodel::ServerSpec& server, const SchemeConfig& c, bool swap) {
  ServerSchedule s = empty_schedule(swap ? "dp-swap" : "dp", m, server, c, true);
  ServerTaskEmitter e(s, c.gpus);
  const size_t packs = m.packs.size();
  if (!swap) {
    for (auto& b : s.initial_bytes) b = m.weight_bytes() + m.optimizer_bytes();
  }
  std::vector<std::vector<int32_t>> last_backward(static_cast<size_t>(c.gpus), std::vector<int32_t>(packs, -1));
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
        if (mb > 0) waits.push_back(e.swap_in(g, k.gradient_bytes, Payload::weight_gradients, pack_label("dW in", p, mb)));
        const int32_t b = e.compute(g, k.backward_ns, pack_label("bwd", p, mb), waits, new_grad, k.stash_bytes);
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

// Harmony's DP; with p2p, swaps go over the peer links instead of the host where they can: GPU 0
// alone swaps a pack's W (and K) in from the host and passes it down a chain of peers, and alone
// writes the updated W and K back (every replica applies the same update).
ServerSchedule harmony_dp(const PackedModel& m, const costmodel::ServerSpec& server, const SchemeConfig& c, bool p2p) {
  ServerSchedule s = empty_schedule(p2p ? "harmony-dp-p2p" : "harmony-dp", m, server, c, true);
  ServerTaskEmitter e(s, c.gpus);
  const size_t packs = m.packs.size();
  // Brings `bytes` onto every GPU: from the host to each, or (p2p) to GPU 0 and down the chain.
  auto bring = [&](int64_t bytes, Payload payload, const std::string& label) {
    std::vector<int32_t> arrived(static_cast<size_t>(c.gpus));
    for (int32_t g = 0; g < c.gpus; ++g) {
      arrived[static_cast<size_t>(g)] = p2p && g > 0
                                            ? e.peer_in(g - 1, g, bytes, payload, label, arrived[static_cast<size_t>(g) - 1])
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
        const int32_t f = e.compute(g, k.forward_ns, pack_label("fwd", p, mb), {w[static_cast<size_t>(g)]}, k.stash_bytes, drop);
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
        const int32_t x = e.swap_in(g, k.stash_bytes, Payload::stashed_activations, pack_label("X in", p, mb));
        ready[static_cast<size_t>(g)] = e.compute(g, k.backward_ns, pack_label("bwd", p, mb), {w[static_cast<size_t>(g)], x},
                                                  mb == 0 ? k.gradient_bytes : 0, k.stash_bytes);
      }
    }
    // Just in time: all-reduce and update this pack while the next one runs its backward.
    const std::vector<Waits> reduced = e.all_reduce(c.gpus, k.gradient_bytes, ready, pack_label("dW", p, -1));
    const std::vector<int32_t> kin = bring(k.optimizer_bytes, Payload::optimizer_state, pack_label("K in", p, -1));
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
ServerSchedule pipeline(const PackedModel& m, const costmodel::ServerSpec& server, const SchemeConfig& c, bool swap) {
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
  for (int32_t st = 0; st < stages; ++st) order[static_cast<size_t>(st)] = one_f_one_b(st, stages, c.micro_batches);
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
          if (swap) waits.push_back(e.swap_in(st, k.weight_bytes, Payload::weights, pack_label("W in fwd", p, mb)));
          last = e.compute(st, k.forward_ns, pack_label("fwd", p, mb), waits, k.stash_bytes, arrived);
          arrived = 0;
          if (swap) {
            e.swap_out(st, k.stash_bytes, Payload::stashed_activations, pack_label("X out", p, mb), last);
            e.swap_out(st, k.weight_bytes, Payload::weights, pack_label("W out fwd", p, mb), last);
          }
        }
        if (st + 1 < stages) {
          arrive_fwd[sti + 1][mbi] = e.copy(st, st + 1, boundary(st + 1), Payload::boundary_activations,
                                            fmt::format("activations stage {} to {} mb {}", st, st + 1, mb), {last},
                                            boundary(st + 1));
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
          waits.push_back(e.swap_in(st, k.stash_bytes, Payload::stashed_activations, pack_label("X in", p, mb)));
          if (mb > 0) waits.push_back(e.swap_in(st, k.gradient_bytes, Payload::weight_gradients, pack_label("dW in", p, mb)));
        }
        last = e.compute(st, k.backward_ns, pack_label("bwd", p, mb), waits, new_grad, k.stash_bytes + arrived);
        arrived = 0;
        if (swap) {
          e.swap_out(st, k.gradient_bytes, Payload::weight_gradients, pack_label("dW out", p, mb), last);
          e.swap_out(st, k.weight_bytes, Payload::weights, pack_label("W out bwd", p, mb), last);
        }
      }
      if (st > 0) {
        arrive_bwd[sti - 1][mbi] = e.copy(st, st - 1, boundary(st), Payload::boundary_activations,
                                          fmt::format("gradients stage {} to {} mb {}", st, st - 1, mb), {last},
                                          boundary(st));
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
      const Waits waits{e.swap_in(st, k.gradient_bytes, Payload::weight_gradients, pack_label("dW in update", p, -1)),
                        e.swap_in(st, k.weight_bytes, Payload::weights, pack_label("W in update", p, -1)),
                        e.swap_in(st, k.optimizer_bytes, Payload::optimizer_state, pack_label("K in", p, -1))};
      const int32_t u = e.compute(st, k.update_ns, pack_label("update", p, -1), waits, 0, k.gradient_bytes);
      e.swap_out(st, k.weight_bytes, Payload::weights, pack_label("W out update", p, -1), u);
      e.swap_out(st, k.optimizer_bytes, Payload::optimizer_state, pack_label("K out", p, -1), u);
    }
  }
  return s;
}

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
      const int32_t f = e.compute(g, k.forward_ns, pack_label("fwd", p, mb), {w, arrive[mbi]}, k.stash_bytes, drop + input);
      e.swap_out(g, k.stash_bytes, Payload::stashed_activations, pack_label("X out", p, mb), f);
      arrive[mbi] = f;
      if (p + 1 < packs && gpu_of(p + 1) != g) {
        arrive[mbi] = e.copy(g, gpu_of(p + 1), k.output_bytes, Payload::boundary_activations,
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
      b = e.compute(g, k.backward_ns, pack_label("bwd", p, mb), {w, x, arrive[mbi]}, mb == 0 ? k.gradient_bytes : 0,
                    k.stash_bytes + input);
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

// ---- Expected volumes (the table in server_schemes.hpp) -----------------------------------------

// N, M and the model's W, dW, K and X (per-step stash) in bytes.
struct VolumeTerms {
  int64_t n, mb, w, dw, k, x;
};
VolumeTerms volume_terms(const PackedModel& m, const SchemeConfig& c) {
  return {c.gpus,         c.micro_batches, m.weight_bytes(), m.gradient_bytes(), m.optimizer_bytes(),
          m.stash_bytes()};
}
// The data-parallel schemes' ring all-reduce of the gradients.
int64_t all_reduce_bytes(const VolumeTerms& v) {
  return 2 * (v.n - 1) * v.dw;
}
// A: the activations crossing the pipeline's stage boundaries (pp, pp-swap).
int64_t stage_boundary_bytes(const PackedModel& m, const SchemeConfig& c) {
  int64_t a = 0;
  const std::vector<int32_t> stage = pipeline_stages(m, c.gpus);
  for (size_t st = 1; st + 1 < stage.size(); ++st)
    a += m.packs[static_cast<size_t>(stage[st]) - 1].output_bytes;
  return a;
}
// harmony-pp's A: every pack boundary, the packs going round-robin over more than one GPU.
int64_t pack_boundary_bytes(const PackedModel& m, const SchemeConfig& c) {
  int64_t a = 0;
  if (c.gpus > 1) {
    for (size_t p = 0; p + 1 < m.packs.size(); ++p) a += m.packs[p].output_bytes;
  }
  return a;
}

SchemeVolumes dp_volumes(const PackedModel& m, const SchemeConfig& c) {
  return {0, 0, 0, 0, all_reduce_bytes(volume_terms(m, c))};
}
SchemeVolumes dp_swap_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {v.n * (4 * v.mb + 2) * v.w, 2 * v.mb * v.n * v.dw, 2 * v.n * v.k, 2 * v.mb * v.n * v.x,
          all_reduce_bytes(v)};
}
SchemeVolumes harmony_dp_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {3 * v.n * v.w, 0, 2 * v.n * v.k, 2 * v.mb * v.n * v.x, all_reduce_bytes(v)};
}
SchemeVolumes harmony_dp_p2p_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {3 * v.w, 0, 2 * v.k, 2 * v.mb * v.n * v.x, all_reduce_bytes(v) + (v.n - 1) * (2 * v.w + v.k)};
}
SchemeVolumes pp_volumes(const PackedModel& m, const SchemeConfig& c) {
  return {0, 0, 0, 0, 2 * c.micro_batches * stage_boundary_bytes(m, c)};
}
SchemeVolumes pp_swap_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {(4 * v.mb + 2) * v.w, 2 * v.mb * v.dw, 2 * v.k, 2 * v.mb * v.x,
          2 * v.mb * stage_boundary_bytes(m, c)};
}
SchemeVolumes harmony_pp_volumes(const PackedModel& m, const SchemeConfig& c) {
  const VolumeTerms v = volume_terms(m, c);
  return {3 * v.w, 0, 2 * v.k, 2 * v.mb * v.x, 2 * v.mb * pack_boundary_bytes(m, c)};
}

ServerSchemeRegistry make_registry() {
  ServerSchemeRegistry r;
  r.add({"dp", "data parallel, all state resident, ring all-reduce of gradients", true, false,
         [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
           return data_parallel(m, s, c, false);
         },
         dp_volumes});
  r.add({"dp-swap", "data parallel, each GPU swapping alone (vDNN/LMS-style per-GPU virtual memory)", true,
         true,
         [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
           return data_parallel(m, s, c, true);
         },
         dp_swap_volumes});
  r.add({"harmony-dp",
         "Harmony DP: per-pack task grouping over micro-batches, just-in-time all-reduce and update", true,
         true,
         [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
           return harmony_dp(m, s, c, false);
         },
         harmony_dp_volumes});
  r.add({"harmony-dp-p2p",
         "Harmony DP swapping over peer links: one GPU swaps each pack in and out, peers pass it on", true,
         true,
         [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
           return harmony_dp(m, s, c, true);
         },
         harmony_dp_p2p_volumes});
  r.add({"pp", "pipeline parallel (1F1B), contiguous balanced stages, all state resident", false, false,
         [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
           return pipeline(m, s, c, false);
         },
         pp_volumes});
  r.add({"pp-swap", "pipeline parallel (1F1B), each stage's GPU swapping alone", false, true,
         [](const PackedModel& m, const costmodel::ServerSpec& s, const SchemeConfig& c) {
           return pipeline(m, s, c, true);
         },
         pp_swap_volumes});
  r.add({"harmony-pp",
         "Harmony PP: packs round-robin over GPUs, grouped over micro-batches, peer activations, JIT update",
         false, true, harmony_pp, harmony_pp_volumes});
  return r;
}

}  // namespace

const ServerSchemeRegistry& builtin_server_schemes() {
  static const ServerSchemeRegistry registry = make_registry();
  return registry;
}

std::vector<int32_t> pipeline_stages(const PackedModel& model, int32_t gpus) {
  const auto packs = static_cast<int32_t>(model.packs.size());
  if (gpus < 1 || gpus > packs) {
    throw Error(fmt::format("pipeline stages: gpus = {} must be in [1, {}] (the layer packs)", gpus, packs));
  }
  int64_t total = 0;
  for (const LayerPack& p : model.packs) total += p.forward_ns + p.backward_ns;
  std::vector<int32_t> begin{0};
  int64_t running = 0;
  for (int32_t p = 0; p < packs; ++p) {
    running += model.packs[static_cast<size_t>(p)].forward_ns + model.packs[static_cast<size_t>(p)].backward_ns;
    const auto stage = static_cast<int32_t>(begin.size()) - 1;
    const int32_t packs_left = packs - p - 1;
    const int32_t stages_left = gpus - stage - 1;
    const bool reached = static_cast<double>(running) * gpus >= static_cast<double>(total) * (stage + 1);
    if (stages_left > 0 && (packs_left == stages_left || (reached && packs_left >= stages_left))) begin.push_back(p + 1);
  }
  begin.push_back(packs);
  return begin;
}

ServerSchedule build_server_schedule(std::string_view scheme, const PackedModel& model,
                                     const costmodel::ServerSpec& server, const SchemeConfig& config) {
  const ServerSchemeInfo& info = builtin_server_schemes().find(scheme);
  if (config.gpus < 1 || config.gpus > server.gpu_count) {
    throw Error(fmt::format("scheme '{}': gpus = {} must be in [1, {}] (server '{}')", scheme, config.gpus,
                            server.gpu_count, server.name));
  }
  if (config.micro_batches < 1) {
    throw Error(fmt::format("scheme '{}': micro_batches = {} must be >= 1", scheme, config.micro_batches));
  }
  if (!info.data_parallel && config.gpus > static_cast<int32_t>(model.packs.size())) {
    throw Error(fmt::format("scheme '{}': gpus = {} needs at least as many layer packs (the model has {})", scheme,
                            config.gpus, model.packs.size()));
  }
  ServerSchedule s = info.create(model, server, config);
  ir::validate_server_schedule(s);
  return s;
}

SchemeVolumes expected_volumes(std::string_view scheme, const PackedModel& m, const SchemeConfig& c) {
  return builtin_server_schemes().find(scheme).volumes(m, c);
}

}  // namespace mutwo::policies
