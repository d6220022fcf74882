#pragma once
// What the server schemes (policies/server_schemes/, one file per family) share: an empty schedule
// for a scheme, task labels, and the terms of Harmony's volume table (policies/server_schemes.hpp).
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "costmodel/server_spec.hpp"
#include "ir/server_schedule.hpp"
#include "policies/layer_packs.hpp"
#include "policies/server_schemes.hpp"
#include "policies/server_task_emitter.hpp"

namespace mutwo::policies::scheme_parts {

// The names every scheme's builder uses (`using namespace scheme_parts` brings them in).
using ir::kHostSide;
using ir::Payload;
using ir::ServerSchedule;
using ir::ServerTask;
using ir::ServerTaskKind;
using Waits = ServerTaskEmitter::Waits;

inline ir::ServerSchedule empty_schedule(std::string_view scheme, const PackedModel& model,
                                         const costmodel::ServerSpec& server, const SchemeConfig& c,
                                         bool data_parallel) {
  ir::ServerSchedule s;
  s.server = server.name;
  s.gpu_count = c.gpus;
  s.scheme = std::string(scheme);
  s.micro_batches = c.micro_batches;
  s.samples_per_step = model.micro_batch_samples * c.micro_batches * (data_parallel ? c.gpus : 1);
  s.initial_bytes.assign(static_cast<size_t>(c.gpus), 0);
  return s;
}

inline std::string pack_label(const char* what, size_t pack, int32_t micro_batch) {
  return micro_batch < 0 ? fmt::format("{} pack {}", what, pack)
                         : fmt::format("{} pack {} mb {}", what, pack, micro_batch);
}

// N, M and the model's W, dW, K and X (per-step stash) in bytes.
struct VolumeTerms {
  int64_t n, mb, w, dw, k, x;
};
inline VolumeTerms volume_terms(const PackedModel& m, const SchemeConfig& c) {
  return {c.gpus,         c.micro_batches, m.weight_bytes(), m.gradient_bytes(), m.optimizer_bytes(),
          m.stash_bytes()};
}
// The data-parallel schemes' ring all-reduce of the gradients.
inline int64_t all_reduce_bytes(const VolumeTerms& v) {
  return 2 * (v.n - 1) * v.dw;
}

}  // namespace mutwo::policies::scheme_parts
