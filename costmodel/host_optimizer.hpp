#pragma once
// The optimizer update placed on the host CPU (ZeRO-Offload's CPU Adam, Ren et al., ATC 2021):
// its duration on the device's host, from the catalog's HostOptimizer figures (device_spec.hpp).
#include <cstdint>

#include "costmodel/device_spec.hpp"
#include "ir/op.hpp"

namespace mutwo::costmodel {

// per_op_ns + min(B, large_from_bytes) / bytes_per_ns + max(B - large_from_bytes, 0) /
// large_bytes_per_ns, B = op.bytes_read + op.bytes_written, each byte term rounded up to whole ns.
// Throws Error naming the op when it is not an optimizer update (ir::is_optimizer_update),
// and naming the device when its host rates are not > 0.
int64_t host_optimizer_ns(const DeviceSpec& device, const ir::Op& op);

}  // namespace mutwo::costmodel
