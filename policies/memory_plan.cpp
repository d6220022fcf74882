#include "policies/memory_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "support/error.hpp"

namespace mutwo::policies {

using ir::InstrKind;
using ir::kNoId;
using ir::Tensor;
using ir::TensorRole;

ComputeOrder compute_order(const ir::Schedule& base, const costmodel::OpCostModel& cost) {
  const ir::Graph& g = base.graph;
  ComputeOrder order;
  order.position_of.assign(g.ops.size(), -1);
  order.op_at.reserve(g.ops.size());
  for (const ir::Instruction& in : base.instructions) {
    if (in.kind == InstrKind::free) continue;
    if (in.kind != InstrKind::compute) {
      throw Error(
          fmt::format("compute_order: instruction {} is a {}; a base schedule holds only compute and free",
                      in.id, ir::instr_kind_name(in.kind)));
    }
    if (in.op < 0 || static_cast<size_t>(in.op) >= g.ops.size()) {
      throw Error(fmt::format("compute_order: instruction {}: field 'op' = {} refers to no op ({} ops)",
                              in.id, in.op, g.ops.size()));
    }
    int32_t& pos = order.position_of[static_cast<size_t>(in.op)];
    if (pos != -1) {
      throw Error(fmt::format("compute_order: op {} '{}' is computed twice (positions {} and {})", in.op,
                              g.op(in.op).name, pos, order.op_at.size()));
    }
    pos = static_cast<int32_t>(order.op_at.size());
    order.op_at.push_back(in.op);
  }
  for (const ir::Op& op : g.ops) {
    if (order.position_of[static_cast<size_t>(op.id)] == -1) {
      throw Error(fmt::format("compute_order: op {} '{}' is never computed", op.id, op.name));
    }
  }
  order.start_ns.reserve(order.op_at.size());
  order.duration_ns.reserve(order.op_at.size());
  for (ir::OpId op : order.op_at) {
    const int64_t d = cost.op_duration_ns(g, g.op(op));
    order.start_ns.push_back(order.total_ns);
    order.duration_ns.push_back(d);
    order.total_ns += d;
  }
  return order;
}

std::vector<InactiveWindow> inactive_windows(const ir::Schedule& base, const ComputeOrder& order) {
  const ir::Graph& g = base.graph;
  std::vector<InactiveWindow> out;
  std::vector<int32_t> access;
  for (const Tensor& t : g.tensors) {
    if (t.role != TensorRole::activation && t.role != TensorRole::temporary) continue;
    if (t.producer == kNoId || t.consumers.empty()) continue;
    access.clear();
    access.push_back(order.position_of.at(static_cast<size_t>(t.producer)));
    for (ir::OpId c : t.consumers) access.push_back(order.position_of.at(static_cast<size_t>(c)));
    std::sort(access.begin(), access.end());
    InactiveWindow best;
    // The longest gap by estimated idle time; equal times go to more positions, then the earliest.
    for (size_t i = 0; i + 1 < access.size(); ++i) {
      const int32_t a = access[i];
      const int32_t b = access[i + 1];
      if (b - a < 2) continue;
      const auto ua = static_cast<size_t>(a);
      const int64_t idle_ns =
          order.start_ns[static_cast<size_t>(b)] - (order.start_ns[ua] + order.duration_ns[ua]);
      const bool better = best.tensor == kNoId || idle_ns > best.inactive_ns ||
                          (idle_ns == best.inactive_ns && b - a > best.reload_before - best.evict_after);
      if (!better) continue;
      best.tensor = t.id;
      best.bytes = t.bytes;
      best.evict_after = a;
      best.reload_before = b;
      best.inactive_ns = idle_ns;
    }
    if (best.tensor != kNoId) out.push_back(best);
  }
  return out;
}

}  // namespace mutwo::policies
