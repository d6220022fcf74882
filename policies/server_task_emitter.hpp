#pragma once
// How the server schemes (policies/server_schemes.hpp) append a step's tasks to a ServerSchedule:
// each copy on the stream the schedule's rules want, swaps paced one compute ahead.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/server_schedule.hpp"

namespace mutwo::policies {

// Appends tasks, placing each copy on the stream the schedule rules want. Swaps are paced one
// compute ahead either way, as vDNN's per-layer synchronisation does (Rhu et al., MICRO 2016): a
// swap-in feeding a GPU's k-th compute task waits for its (k-2)-th, and the k-th compute task waits
// for the swap-outs issued before its (k-1)-th, so a GPU prefetches the next pack and drains the
// previous one while it runs the current one, no further (memory stays bounded).
class ServerTaskEmitter {
 public:
  using Waits = std::vector<int32_t>;  // task ids a task waits for

  ServerTaskEmitter(ir::ServerSchedule& s, int32_t gpus)
      : s_(s),
        computes_(static_cast<size_t>(gpus)),
        drained_before_(static_cast<size_t>(gpus)),
        last_swap_out_(static_cast<size_t>(gpus), -1) {}

  int32_t compute(int32_t gpu, int64_t ns, std::string label, Waits waits, int64_t alloc = 0,
                  int64_t free = 0) {
    ir::ServerTask t;
    t.kind = ir::ServerTaskKind::compute;
    t.gpu = gpu;
    t.stream = ir::kServerComputeStream;
    t.duration_ns = ns;
    t.alloc_bytes = alloc;
    t.free_bytes = free;
    t.waits = std::move(waits);
    auto& drained = drained_before_[static_cast<size_t>(gpu)];
    if (drained.size() >= 1) t.waits.push_back(drained.back());
    t.label = std::move(label);
    const int32_t id = add(std::move(t));
    computes_[static_cast<size_t>(gpu)].push_back(id);
    drained.push_back(last_swap_out_[static_cast<size_t>(gpu)]);
    return id;
  }

  // A copy; `alloc` on the receiver when it starts, `free` on the sender when it ends.
  int32_t copy(int32_t from, int32_t to, int64_t bytes, ir::Payload payload, std::string label, Waits waits,
               int64_t alloc = 0, int64_t free = 0) {
    ir::ServerTask t;
    t.kind = ir::ServerTaskKind::transfer;
    t.from = from;
    t.to = to;
    t.bytes = bytes;
    t.payload = payload;
    t.gpu = from == ir::kHostSide ? to : from;
    t.stream = from == ir::kHostSide
                   ? ir::kServerFromHostStream
                   : (to == ir::kHostSide ? ir::kServerToHostStream : ir::kServerPeerStream);
    t.alloc_bytes = to == ir::kHostSide ? 0 : alloc;
    t.free_bytes = from == ir::kHostSide ? 0 : free;
    t.waits = std::move(waits);
    t.label = std::move(label);
    return add(std::move(t));
  }

  // A swap-in for the next compute task of `gpu`, gated as above.
  int32_t swap_in(int32_t gpu, int64_t bytes, ir::Payload payload, std::string label) {
    Waits waits;
    const auto& done = computes_[static_cast<size_t>(gpu)];
    if (done.size() >= 2) waits.push_back(done[done.size() - 2]);
    return copy(ir::kHostSide, gpu, bytes, payload, std::move(label), std::move(waits), bytes);
  }
  // A copy from a peer that holds it (after `after`), gated for the receiver as a swap-in.
  int32_t peer_in(int32_t from, int32_t gpu, int64_t bytes, ir::Payload payload, std::string label,
                  int32_t after) {
    Waits waits{after};
    const auto& done = computes_[static_cast<size_t>(gpu)];
    if (done.size() >= 2) waits.push_back(done[done.size() - 2]);
    return copy(from, gpu, bytes, payload, std::move(label), std::move(waits), bytes);
  }
  int32_t swap_out(int32_t gpu, int64_t bytes, ir::Payload payload, std::string label, int32_t after,
                   bool drop = true) {
    const int32_t id =
        copy(gpu, ir::kHostSide, bytes, payload, std::move(label), {after}, 0, drop ? bytes : 0);
    last_swap_out_[static_cast<size_t>(gpu)] = id;
    return id;
  }

  // Ring all-reduce of `bytes` over `gpus` (NCCL's ring: 2(N-1) steps; in step k GPU i sends chunk
  // (i - k) mod N to GPU i + 1 once it holds step k - 1's chunk from GPU i - 1). ready[g]: the task
  // after which GPU g's gradient is whole. Returns, per GPU, what its update must wait for: the last
  // chunk received and the last one sent (ready[g] alone with one GPU).
  std::vector<Waits> all_reduce(int32_t gpus, int64_t bytes, const std::vector<int32_t>& ready,
                                const std::string& label) {
    std::vector<Waits> done(static_cast<size_t>(gpus));
    for (int32_t i = 0; i < gpus; ++i) done[static_cast<size_t>(i)] = {ready[static_cast<size_t>(i)]};
    if (gpus < 2) return done;
    const auto n = static_cast<int64_t>(gpus);
    std::vector<int32_t> received = ready;  // per GPU: the copy that brought its latest chunk
    std::vector<int32_t> sent(static_cast<size_t>(gpus), -1);
    for (int32_t step = 0; step < 2 * (gpus - 1); ++step) {
      for (int32_t i = 0; i < gpus; ++i) {
        const int64_t chunk = ((i - step) % n + n) % n;
        const int64_t chunk_bytes = bytes / n + (chunk < bytes % n ? 1 : 0);
        sent[static_cast<size_t>(i)] =
            copy(i, (i + 1) % gpus, chunk_bytes, ir::Payload::gradient_reduce,
                 fmt::format("{} all-reduce step {}", label, step),
                 {received[static_cast<size_t>(i)], ready[static_cast<size_t>(i)]});
      }
      for (int32_t i = 0; i < gpus; ++i)
        received[static_cast<size_t>(i)] = sent[static_cast<size_t>((i + gpus - 1) % gpus)];
    }
    for (int32_t i = 0; i < gpus; ++i)
      done[static_cast<size_t>(i)] = {received[static_cast<size_t>(i)], sent[static_cast<size_t>(i)]};
    return done;
  }

 private:
  int32_t add(ir::ServerTask t) {
    t.id = static_cast<int32_t>(s_.tasks.size());
    for (int32_t& w : t.waits) w = std::max(w, -1);
    std::erase(t.waits, -1);
    std::sort(t.waits.begin(), t.waits.end());
    t.waits.erase(std::unique(t.waits.begin(), t.waits.end()), t.waits.end());
    s_.tasks.push_back(std::move(t));
    return s_.tasks.back().id;
  }

  ir::ServerSchedule& s_;
  std::vector<std::vector<int32_t>> computes_;
  // Per GPU and compute task k: the last swap-out issued before it (-1: none), for compute k + 1.
  std::vector<std::vector<int32_t>> drained_before_;
  std::vector<int32_t> last_swap_out_;
};

}  // namespace mutwo::policies
