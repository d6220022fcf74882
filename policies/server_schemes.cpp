#include "policies/server_schemes.hpp"

#include <fmt/format.h>

#include "support/error.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

using ir::ServerSchedule;

const ServerSchemeRegistry& builtin_server_schemes() {
  static const ServerSchemeRegistry registry = [] {
    ServerSchemeRegistry r;
    Plugins<ServerSchemeRegistry>::register_all(r);
    return r;
  }();
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
