#include "sim/runtime_other_gpu.hpp"

#include <map>
#include <string>

#include "costmodel/kineto_calibration.hpp"

namespace mutwo::sim {

OtherGpuWork move_work_to_gpu(const ir::RuntimeTrace& trace, const io::KinetoOpRecords& records,
                              const costmodel::DeviceSpec& origin, const costmodel::DeviceSpec& destination,
                              std::string_view source) {
  // Each shaped op's kernels, by their event, with the op's transfer (ops priced once).
  std::map<int64_t, costmodel::KernelTransfer> priced;
  for (const io::KinetoOpRecord& r : records.ops) {
    const std::optional<costmodel::CalibrationRow> row =
        costmodel::kineto_calibration_row(r, origin.name, trace.source);
    if (!row) continue;
    const costmodel::KernelTransfer t = costmodel::priced_transfer(*row, origin, destination, source);
    for (const size_t e : r.work_events) priced.emplace(static_cast<int64_t>(e), t);
  }
  OtherGpuWork out;
  out.work_scale.assign(trace.work.size(), 1.0);
  for (size_t w = 0; w < trace.work.size(); ++w) {
    const ir::DeviceWork& d = trace.work[w];
    if (d.collective) continue;
    costmodel::KernelTransfer t;
    if (d.copy) {
      t = costmodel::copy_transfer(d.name, origin, destination);
    } else if (const auto it = priced.find(d.event); it != priced.end()) {
      t = it->second;
    } else {
      t = costmodel::wave_transfer(d.blocks, d.resident_blocks_per_sm, origin, destination);
    }
    out.work_scale[w] = t.factor;
    const auto rule = static_cast<size_t>(t.rule);
    ++out.work_by_rule[rule];
    out.traced_ns_by_rule[rule] += d.duration_ns;
  }
  return out;
}

}  // namespace mutwo::sim
