#include "costmodel/op_cost_model.hpp"

#include <cmath>

#include <fmt/format.h>

#include "ir/optimizer_kernels.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

std::string OpCostModel::describe(const ir::Graph&) const {
  return std::string(name());
}

int64_t OpCostModel::op_host_ns(const ir::Graph&, const ir::Op& op, HostIssuer issuer) const {
  const HostDispatch& h = device().host;
  if (issuer == HostIssuer::cpp) return h.backward_op_ns;
  // BertAdam's loop issues each of its kernels from a Python statement.
  if (ir::is_bert_adam(op)) return ir::optimizer_kernels(op).kernels * h.python_op_ns;
  const bool nested =
      op.kind == ir::OpKind::cast || op.kind == ir::OpKind::cast_backward || op.phase == ir::Phase::optimizer;
  if (nested) return h.launch_ns;
  return op.phase == ir::Phase::forward ? h.forward_op_ns : h.backward_op_ns;
}

int64_t transfer_duration_ns(const DeviceSpec& device, int64_t bytes, CopyDirection direction) {
  if (bytes < 0) {
    throw Error(fmt::format("transfer on device '{}' ({}): bytes = {} must be >= 0", device.name,
                            direction_name(direction), bytes));
  }
  if (bytes == 0) return 0;
  const bool to_device = direction == CopyDirection::host_to_device;
  const double bandwidth = to_device ? device.h2d_bytes_per_ns : device.d2h_bytes_per_ns;
  const int64_t latency = to_device ? device.h2d_latency_ns : device.d2h_latency_ns;
  if (!(bandwidth > 0)) {
    throw Error(fmt::format("device '{}': {} bandwidth {} bytes/ns must be > 0", device.name,
                            direction_name(direction), bandwidth));
  }
  const double b = static_cast<double>(bytes);
  // A copy past int64's ns (292 years) cannot be timed: refused, naming the figures, rather than
  // converted out of range (1 GiB at --h2d-gbps 1e-300).
  if (!(b / bandwidth <= kMaxPricedNs - static_cast<double>(latency))) {
    throw Error(
        fmt::format("device '{}': a {} copy of {} bytes at {} bytes/ns (latency {} ns) takes longer than "
                    "{:.0e} ns; the link's bandwidth is too small",
                    device.name, direction_name(direction), bytes, bandwidth, latency, kMaxPricedNs));
  }
  auto n = static_cast<int64_t>(std::ceil(b / bandwidth));
  // Correct a quotient that floating rounding pushed one past (or short of) the exact ceiling.
  if (n > 0 && static_cast<double>(n - 1) * bandwidth >= b) --n;
  if (static_cast<double>(n) * bandwidth < b) ++n;
  return latency + n;
}

int64_t whole_price_ns(double ns, std::string_view source, const ir::Op* op) {
  if (!(ns >= 0 && ns <= kMaxPricedNs)) {
    const std::string which = op == nullptr ? "" : fmt::format(", op {} '{}'", op->id, op->name);
    throw Error(
        fmt::format("cost model '{}'{}: a price of {} ns is no time in [0, {:.0e}] ns (a coefficient or "
                    "device figure out of range)",
                    source, which, ns, kMaxPricedNs));
  }
  return static_cast<int64_t>(std::ceil(ns));
}

std::vector<int64_t> op_durations_ns(const OpCostModel& model, const ir::Graph& graph) {
  std::vector<int64_t> out;
  out.reserve(graph.ops.size());
  for (const ir::Op& op : graph.ops) out.push_back(model.op_duration_ns(graph, op));
  return out;
}

std::string_view direction_name(CopyDirection direction) {
  return direction == CopyDirection::host_to_device ? "host_to_device" : "device_to_host";
}

}  // namespace mutwo::costmodel
