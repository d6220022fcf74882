#include "sim/dtr_log_graph.hpp"

#include <algorithm>

namespace mutwo::sim {

using io::DtrLog;

DtrLogGraph::DtrLogGraph(const DtrLog& log) {
  const size_t n = log.tensors.size();
  storage_of.assign(n, -1);
  op_of.assign(n, 0);
  for (size_t o = 0; o < log.ops.size(); ++o) {
    const io::DtrOp& op = log.ops[o];
    for (int32_t i = 0; i < op.output_count(); ++i) {
      const auto t = static_cast<size_t>(op.first_output + i);
      op_of[t] = static_cast<int32_t>(o);
      const int32_t a = op.aliases[static_cast<size_t>(i)];
      if (a >= 0) {
        storage_of[t] = storage_of[static_cast<size_t>(op.args[static_cast<size_t>(a)])];
      } else {
        storage_of[t] = static_cast<int32_t>(storage_size.size());
        storage_size.push_back(op.sizes_bytes[static_cast<size_t>(i)]);
      }
    }
  }
  // Storage -> tensors, in tensor id order (= creation order).
  tensors_begin.assign(storage_size.size() + 1, 0);
  for (int32_t s : storage_of) ++tensors_begin[static_cast<size_t>(s) + 1];
  for (size_t s = 0; s < storage_size.size(); ++s) tensors_begin[s + 1] += tensors_begin[s];
  tensors_flat.resize(n);
  std::vector<int32_t> fill(tensors_begin.begin(), tensors_begin.end() - 1);
  for (size_t t = 0; t < n; ++t)
    tensors_flat[static_cast<size_t>(fill[static_cast<size_t>(storage_of[t])]++)] = static_cast<int32_t>(t);
  // Tensor -> children: p.children.extend(outputs) for every arg p, in op order.
  children_begin.assign(n + 1, 0);
  for (const io::DtrOp& op : log.ops) {
    for (int32_t p : op.args) children_begin[static_cast<size_t>(p) + 1] += op.output_count();
  }
  for (size_t t = 0; t < n; ++t) children_begin[t + 1] += children_begin[t];
  children_flat.resize(static_cast<size_t>(children_begin[n]));
  std::vector<int32_t> cfill(children_begin.begin(), children_begin.end() - 1);
  for (const io::DtrOp& op : log.ops) {
    for (int32_t p : op.args) {
      for (int32_t i = 0; i < op.output_count(); ++i) {
        children_flat[static_cast<size_t>(cfill[static_cast<size_t>(p)]++)] = op.first_output + i;
      }
    }
  }
  build_edges(log, true, fwd_begin, fwd_flat);
  build_edges(log, false, rev_begin, rev_flat);
}

void DtrLogGraph::build_edges(const DtrLog& log, bool forward, std::vector<int32_t>& begin, std::vector<Edge>& flat) {
  const size_t storages = storage_size.size();
  std::vector<std::vector<Edge>> lists(storages);
  std::vector<size_t> owner(storages, storages);  // the storage whose list last saw it
  std::vector<size_t> at(storages, 0);            // its index in that list
  for (size_t s = 0; s < storages; ++s) {
    std::vector<Edge>& list = lists[s];
    auto add = [&](int32_t u, int32_t from_op) {
      const auto us = static_cast<size_t>(storage_of[static_cast<size_t>(u)]);
      if (owner[us] == s) {
        Edge& e = list[at[us]];
        e.from_op = std::min(e.from_op, from_op);
        return;
      }
      owner[us] = s;
      at[us] = list.size();
      list.push_back({static_cast<int32_t>(us), from_op});
    };
    for (int32_t k = tensors_begin[s]; k < tensors_begin[s + 1]; ++k) {
      const int32_t t = tensors_flat[static_cast<size_t>(k)];
      if (forward) {
        for (int32_t c = children_begin[static_cast<size_t>(t)];
             c < children_begin[static_cast<size_t>(t) + 1]; ++c) {
          const int32_t child = children_flat[static_cast<size_t>(c)];
          add(child, op_of[static_cast<size_t>(child)]);
        }
      } else {
        const int32_t o = op_of[static_cast<size_t>(t)];
        for (int32_t p : log.ops[static_cast<size_t>(o)].args) add(p, o);
      }
    }
    std::sort(list.begin(), list.end(), [](const Edge& a, const Edge& b) { return a.from_op < b.from_op; });
  }
  begin.assign(storages + 1, 0);
  for (size_t s = 0; s < storages; ++s) begin[s + 1] = begin[s] + static_cast<int32_t>(lists[s].size());
  flat.clear();
  flat.reserve(static_cast<size_t>(begin[storages]));
  for (const auto& list : lists) flat.insert(flat.end(), list.begin(), list.end());
}

}  // namespace mutwo::sim
