#pragma once
// Training one model on a multi-GPU server past one GPU's memory (Harmony, Li, Phanishayee, Murray,
// Kim, HotOS 2021): seven schemes that turn a PackedModel into a ServerSchedule for N GPUs and M
// micro-batches per data batch through each replica (DP) or through the pipeline (PP).
//
//   dp          data parallel, all state resident; ring all-reduce of dW over the peer links
//   dp-swap     data parallel, each GPU swapping alone (vDNN/LMS-style: every pack's W brought in
//               before and written back after each forward and each backward, X out after forward
//               and in for backward, dW out after every backward and in to accumulate, W, K and dW
//               in for the update and W, K out after it)
//   harmony-dp  Harmony's DP: tasks grouped per pack over all M micro-batches (W in once for the
//               forward and once for the backward), dW kept on the GPU and all-reduced just in time,
//               the update right after (K in, W and K out)
//   harmony-dp-p2p  Harmony's DP swapping over the peer links (its "P2P swaps"): GPU 0 alone swaps
//               each pack's W and K in and passes them down a chain of peers; it alone writes the
//               updated W and K back (every replica holds the same update)
//   pp          pipeline parallel (1F1B, PipeDream-Flush; Narayanan et al., SC 2021), contiguous
//               stages balanced by compute, all state resident
//   pp-swap     the same pipeline, each stage's GPU swapping alone as dp-swap does
//   harmony-pp  Harmony's PP: packs placed round-robin over the GPUs, each pack's forward (then
//               backward) over all M micro-batches with its W in once, activations and their
//               gradients between packs over the peer links, the update just in time
//
// Volumes per data batch (bytes moved; W, dW, K: the model's weights, gradients and optimizer state;
// X: one micro-batch's stash; A: one micro-batch's activations crossing the stage (pp, pp-swap) or
// pack (harmony-pp) boundaries), derived from the schemes above and checked against the simulated
// transfers in tests/test_server_schemes.cpp:
//
//   scheme      swap W      swap dW   swap K   swap X    peer
//   dp          0           0         0        0         2(N-1) dW   (ring all-reduce)
//   dp-swap     N(4M+2) W   2MN dW    2N K     2MN X     2(N-1) dW
//   harmony-dp  3N W        0         2N K     2MN X     2(N-1) dW
//   harmony-dp-p2p 3 W      0         2 K      2MN X     2(N-1) dW + (N-1)(2W + K)
//   pp          0           0         0        0         2M A
//   pp-swap     (4M+2) W    2M dW     2 K      2M X      2M A
//   harmony-pp  3 W         0         2 K      2M X      2M A
//
// Harmony's backup-slide table counts M over the whole data batch, so its DP entries read with
// M_slide = N M: per-GPU swapping W (4 M_slide + 2N), Harmony DP 3N, dW 0 with Harmony.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/server_spec.hpp"
#include "ir/server_schedule.hpp"
#include "policies/layer_packs.hpp"
#include "support/registry.hpp"

namespace mutwo::policies {

struct SchemeConfig {
  int32_t gpus = 1;           // GPUs used, 1 to the server's
  int32_t micro_batches = 1;  // M
};

// The table above for one scheme: expected bytes per payload (ir::Payload), swaps and peer
// copies apart. `stage_boundary_bytes` is A for pp/pp-swap (harmony-pp's A is every pack boundary).
struct SchemeVolumes {
  int64_t swap_weights = 0;
  int64_t swap_gradients = 0;
  int64_t swap_optimizer = 0;
  int64_t swap_stash = 0;
  int64_t peer_bytes = 0;
};

struct ServerSchemeInfo {
  std::string name;
  std::string description;
  bool data_parallel = true;  // samples per step: N M micro-batches (DP) or M (PP)
  bool swaps = false;         // moves state to the host (the schemes Harmony compares)
  std::function<ir::ServerSchedule(const PackedModel&, const costmodel::ServerSpec&, const SchemeConfig&)>
      create;
  // The volumes Harmony's analysis gives this scheme per step (expected_volumes).
  std::function<SchemeVolumes(const PackedModel&, const SchemeConfig&)> volumes;
};

class ServerSchemeRegistry : public Registry<ServerSchemeInfo> {
 public:
  // A scheme without its volume formula is refused when added.
  ServerSchemeRegistry()
      : Registry("server scheme", [](const ServerSchemeInfo& e) {
          if (!e.volumes)
            throw Error(fmt::format("server scheme '{}' registered without its volumes", e.name));
        }) {}
  const std::vector<ServerSchemeInfo>& schemes() const { return entries(); }
};

// The schemes in policies/server_schemes/, one file per family, registering themselves
// (support/plugins.hpp), in the order of the table above.
const ServerSchemeRegistry& builtin_server_schemes();

// builtin_server_schemes().find(scheme).create(...), after checking the config: gpus in
// [1, server.gpu_count], micro_batches >= 1, and for the pipelines at least `gpus` packs. Throws
// Error naming the field, UnknownNameError on an unknown scheme.
ir::ServerSchedule build_server_schedule(std::string_view scheme, const PackedModel& model,
                                         const costmodel::ServerSpec& server, const SchemeConfig& config);

// builtin_server_schemes().find(scheme).volumes(model, config); UnknownNameError on an unknown scheme.
SchemeVolumes expected_volumes(std::string_view scheme, const PackedModel& model, const SchemeConfig& config);

// The pipelines' stages: contiguous packs, stage s = packs [stage_begin[s], stage_begin[s + 1]),
// balanced greedily by forward + backward time, each stage at least one pack.
std::vector<int32_t> pipeline_stages(const PackedModel& model, int32_t gpus);

}  // namespace mutwo::policies
