#pragma once
// A replayed trace's device work moved to another GPU, for the what-if "priced on GPU X": each
// kernel and copy scaled by costmodel/kernel_transfer.hpp's rules (a kernel whose op the trace
// recorded with shapes priced by a cost source on both GPUs; any other by Habitat's wave scaling
// from its launch), collectives as measured. The host and its launches are unchanged. Moving the
// work to the GPU it ran on changes nothing.
#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "costmodel/device_spec.hpp"
#include "costmodel/kernel_transfer.hpp"
#include "io/kineto_op_records.hpp"
#include "ir/runtime_trace.hpp"

namespace mutwo::sim {

struct OtherGpuWork {
  std::vector<double> work_scale;  // per trace.work: RuntimeWhatIf::work_scale (1 for collectives)
  // Per rule (costmodel::TransferRule's order): the pieces of work and their traced time.
  std::array<int32_t, 4> work_by_rule{};
  std::array<int64_t, 4> traced_ns_by_rule{};
};

// `records`: the trace's shaped ops (io::kineto_op_records_if_shaped; empty when it has none);
// `origin`: the catalog GPU the trace ran on; `source`: a kernel pricing source
// (costmodel::kernel_pricers). Throws what costmodel::kernel_price_ns throws.
OtherGpuWork move_work_to_gpu(const ir::RuntimeTrace& trace, const io::KinetoOpRecords& records,
                              const costmodel::DeviceSpec& origin, const costmodel::DeviceSpec& destination,
                              std::string_view source);

}  // namespace mutwo::sim
