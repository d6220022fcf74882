#include "costmodel/host_optimizer.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "costmodel/op_cost_model.hpp"
#include "ir/op_kind.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

int64_t host_optimizer_ns(const DeviceSpec& device, const ir::Op& op) {
  if (!ir::is_optimizer_update(op.kind)) {
    throw Error(
        fmt::format("op {} '{}' of kind {} cannot run on the host: only optimizer updates (sgd_step, "
                    "adam_step, adamw_step) do",
                    op.id, op.name, ir::kind_name(op.kind)));
  }
  const HostOptimizer& h = device.host_optimizer;
  if (!(h.bytes_per_ns > 0) || !(h.large_bytes_per_ns > 0)) {
    throw Error(fmt::format("device '{}' has no host optimizer rate (host_optimizer.bytes_per_ns = {}, "
                            "large_bytes_per_ns = {}): op {} '{}' cannot be priced on the host",
                            device.name, h.bytes_per_ns, h.large_bytes_per_ns, op.id, op.name));
  }
  const int64_t bytes = op.bytes_read + op.bytes_written;
  const int64_t small = std::min(bytes, h.large_from_bytes);
  const int64_t large = bytes - small;
  // A rate near 0 (--host-optimizer-gbps 1e-300) is an error naming the op, not an int64 out of range.
  auto ns = [&](int64_t b, double rate) {
    return b <= 0 ? int64_t{0} : whole_price_ns(static_cast<double>(b) / rate, "host optimizer", &op);
  };
  return h.per_op_ns + ns(small, h.bytes_per_ns) + ns(large, h.large_bytes_per_ns);
}

}  // namespace mutwo::costmodel
