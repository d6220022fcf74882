// μ-TWO's multiplexing (Purandare et al., MLSys 2023): one sub-array's backward interleaved with
// the next one's forward on the compute stream.
#include "policies/multiplex.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "ir/merge_by_progress.hpp"
#include "policies/plain_schedule.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

using ir::Graph;
using ir::OpId;

namespace {

std::vector<int64_t> durations(const Graph& g, const std::vector<OpId>& ops,
                               const costmodel::OpCostModel& cost) {
  std::vector<int64_t> ns;
  ns.reserve(ops.size());
  for (OpId id : ops) ns.push_back(cost.op_duration_ns(g, g.op(id)));
  return ns;
}

}  // namespace

int64_t estimated_step_ns(const Graph& graph, const costmodel::OpCostModel& cost) {
  int64_t total = 0;
  for (const ir::Op& op : graph.ops) total += cost.op_duration_ns(graph, op);
  return total;
}

std::vector<int32_t> multiplex_order(const std::vector<int64_t>& step_time_ns) {
  for (size_t i = 0; i < step_time_ns.size(); ++i) {
    if (step_time_ns[i] < 0) {
      throw Error(fmt::format("multiplex_order: sub-array {} has step time {} ns < 0", i, step_time_ns[i]));
    }
  }
  std::vector<int32_t> order(step_time_ns.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return step_time_ns[static_cast<size_t>(a)] < step_time_ns[static_cast<size_t>(b)];
  });
  return order;
}

std::vector<OpId> multiplexed_op_order(const Graph& g, const std::vector<ir::SubArray>& sub_arrays,
                                       const costmodel::OpCostModel& cost) {
  // fw[i], bw[i]: sub-array i's forward ops and its backward-then-optimizer ops, program order.
  const size_t n = sub_arrays.size();
  std::vector<std::vector<OpId>> fw(n);
  std::vector<std::vector<OpId>> bw(n);
  for (size_t i = 0; i < n; ++i) {
    const ir::SubArray& s = sub_arrays[i];
    if (s.first_op < 0 || s.end_op < s.first_op || static_cast<size_t>(s.end_op) > g.ops.size() ||
        (i > 0 && s.first_op != sub_arrays[i - 1].end_op) || (i == 0 && s.first_op != 0)) {
      throw Error(
          fmt::format("multiplexed_op_order: sub-array {} '{}' has op range [{}, {}); the ranges must tile "
                      "the graph's {} ops in order",
                      i, s.name, s.first_op, s.end_op, g.ops.size()));
    }
    std::vector<OpId> optimizer;
    for (OpId id = s.first_op; id < s.end_op; ++id) {
      switch (g.op(id).phase) {
        case ir::Phase::forward:
          fw[i].push_back(id);
          break;
        case ir::Phase::backward:
          bw[i].push_back(id);
          break;
        case ir::Phase::optimizer:
          optimizer.push_back(id);
          break;
      }
    }
    bw[i].insert(bw[i].end(), optimizer.begin(), optimizer.end());
  }
  if (n == 0 || static_cast<size_t>(sub_arrays.back().end_op) != g.ops.size()) {
    throw Error(
        fmt::format("multiplexed_op_order: {} sub-arrays do not cover the graph's {} ops", n, g.ops.size()));
  }

  std::vector<OpId> order;
  order.reserve(g.ops.size());
  order.insert(order.end(), fw[0].begin(), fw[0].end());
  for (size_t i = 0; i + 1 < n; ++i) {
    const std::vector<OpId> merged =
        ir::merge_by_progress(bw[i], durations(g, bw[i], cost), fw[i + 1], durations(g, fw[i + 1], cost));
    order.insert(order.end(), merged.begin(), merged.end());
  }
  order.insert(order.end(), bw[n - 1].begin(), bw[n - 1].end());
  return order;
}

ir::Schedule build_multiplexed_schedule(std::vector<Graph> parts, const costmodel::OpCostModel& cost,
                                        std::string policy) {
  // Durations are taken on the concatenated graph, the one the simulator prices.
  std::vector<ir::SubArray> ranges;
  Graph whole = ir::concat_graphs(parts, &ranges);
  parts.clear();
  const std::vector<OpId> order = multiplexed_op_order(whole, ranges, cost);
  return build_ordered_schedule(std::move(whole), std::move(ranges), order, std::move(policy));
}

}  // namespace mutwo::policies
