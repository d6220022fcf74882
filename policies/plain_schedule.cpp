#include "policies/plain_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "ir/schedule_check.hpp"

namespace mutwo::policies {

using ir::Graph;
using ir::InstrKind;
using ir::Instruction;
using ir::kNoId;
using ir::OpId;
using ir::Schedule;
using ir::Tensor;

namespace {

void emit(Schedule& s, InstrKind kind, OpId op, ir::TensorId tensor) {
  Instruction in;
  in.id = static_cast<ir::InstrId>(s.instructions.size());
  in.kind = kind;
  in.stream = ir::kComputeStream;
  in.op = op;
  in.tensor = tensor;
  s.instructions.push_back(std::move(in));
}

// position[op] = index of op in order; throws unless order is a topological permutation of g's ops.
std::vector<int64_t> check_order(const Graph& g, const std::vector<OpId>& order) {
  if (order.size() != g.ops.size()) {
    throw Error(
        fmt::format("compute order has {} ops, graph '{}' has {}", order.size(), g.name, g.ops.size()));
  }
  std::vector<int64_t> position(g.ops.size(), -1);
  for (size_t i = 0; i < order.size(); ++i) {
    const OpId id = order[i];
    if (id < 0 || static_cast<size_t>(id) >= g.ops.size()) {
      throw Error(fmt::format("order position {}: op id {} is out of range [0, {})", i, id, g.ops.size()));
    }
    if (position[static_cast<size_t>(id)] >= 0) {
      throw Error(fmt::format("order position {}: op {} '{}' is listed twice (first at position {})", i, id,
                              g.op(id).name, position[static_cast<size_t>(id)]));
    }
    position[static_cast<size_t>(id)] = static_cast<int64_t>(i);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const ir::Op& op = g.op(order[i]);
    for (ir::TensorId t : op.inputs) {
      const OpId p = g.tensor(t).producer;
      if (p != kNoId && position[static_cast<size_t>(p)] > static_cast<int64_t>(i)) {
        throw Error(fmt::format(
            "order position {}: op {} '{}' reads tensor {} '{}' before its producer op {} '{}' runs", i,
            op.id, op.name, t, g.tensor(t).name, p, g.op(p).name));
      }
    }
  }
  return position;
}

}  // namespace

Schedule build_ordered_schedule(std::vector<Graph> parts, const std::vector<OpId>& order,
                                std::string policy) {
  std::vector<ir::SubArray> ranges;
  Graph whole = ir::concat_graphs(parts, &ranges);
  parts.clear();  // the concatenated copy is all we need; release the parts early
  return build_ordered_schedule(std::move(whole), std::move(ranges), order, std::move(policy));
}

Schedule build_ordered_schedule(Graph concatenated, std::vector<ir::SubArray> sub_arrays,
                                const std::vector<OpId>& order, std::string policy) {
  Schedule s;
  s.graph = std::move(concatenated);
  s.sub_arrays = std::move(sub_arrays);
  s.policy = std::move(policy);
  const Graph& g = s.graph;
  const std::vector<int64_t> position = check_order(g, order);

  // frees_after[k + 1]: tensors freed right after order[k] (slot 0: before the first op), ascending ids.
  std::vector<std::vector<ir::TensorId>> frees_after(g.ops.size() + 1);
  for (const Tensor& t : g.tensors) {
    if (ir::is_persistent(t.role)) continue;
    int64_t after = -1;  // position of the last reader (or the producer when unread); -1: before all
    if (t.consumers.empty()) {
      if (t.producer != kNoId) after = position[static_cast<size_t>(t.producer)];
    } else {
      for (OpId c : t.consumers) after = std::max(after, position[static_cast<size_t>(c)]);
    }
    frees_after[static_cast<size_t>(after + 1)].push_back(t.id);
  }
  s.instructions.reserve(g.ops.size() + g.tensors.size());
  for (ir::TensorId t : frees_after[0]) emit(s, InstrKind::free, kNoId, t);
  for (size_t k = 0; k < order.size(); ++k) {
    emit(s, InstrKind::compute, order[k], kNoId);
    for (ir::TensorId t : frees_after[k + 1]) emit(s, InstrKind::free, kNoId, t);
  }
  ir::validate_schedule(s);
  return s;
}

Schedule build_plain_schedule(std::vector<Graph> parts, std::string policy) {
  size_t ops = 0;
  for (const Graph& p : parts) ops += p.ops.size();
  std::vector<OpId> order(ops);
  std::iota(order.begin(), order.end(), OpId{0});
  return build_ordered_schedule(std::move(parts), order, std::move(policy));
}

}  // namespace mutwo::policies
