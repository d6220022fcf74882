// The `waves` cost source, the wave model (costmodel/wave_model.hpp), the default source: registered by this
// file (support/plugins.hpp).
#include <memory>

#include "costmodel/cost_source_registry.hpp"
#include "costmodel/waves_cost_model.hpp"
#include "support/plugins.hpp"

namespace mutwo::costmodel {
namespace {

void register_source(CostSourceRegistry& registry) {
  registry.add(
      {"waves",
       "each kernel by the wave model: waves of tiles on the SMs, the tail wave, memory-bound kernels from "
       "HBM or L2, per-kernel cost; fitted across GPUs on measured kernels (NeuSight, DeepBench) and "
       "priced from the GPU's datasheet, refined by its own kernels where measured",
       "Lee et al., NeuSight, ASPLOS 2025 (tiles and waves across GPUs); Yu et al., Habitat, USENIX ATC "
       "2021 (wave scaling); measured kernels from NeuSight and Baidu DeepBench",
       [](const DeviceSpec& device, const CostSourceInputs& inputs) -> std::unique_ptr<OpCostModel> {
         std::shared_ptr<const WaveModel> model =
             inputs.wave_model
                 ? inputs.wave_model
                 : std::shared_ptr<const WaveModel>(&shipped_wave_model(), [](const WaveModel*) {});
         return std::make_unique<WaveCostModel>(device, std::move(model));
       }});
}

[[maybe_unused]] const bool kRegistered = Plugins<CostSourceRegistry>::add(10, register_source);

}  // namespace
}  // namespace mutwo::costmodel
