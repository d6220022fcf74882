#pragma once
// A DTR operator log's graph as simrd's runtime sees it (simrd/runtime/v2.py, graph.py): storages,
// per tensor its storage, op and children, and the storage-level edges the region walks and
// neighbourhoods follow. Built once per log and shared by every replay of it.
#include <cstdint>
#include <vector>

#include "io/dtr_log.hpp"
#include "sim/dtr_replay.hpp"
#include "sim/eviction_heuristic.hpp"

namespace mutwo::sim {

// The log's graph as the runtime sees it: storages, and per tensor its parents, siblings,
// children. Tensors and children come into existence when their op is first computed; ops are
// computed in id order, so "created" is "op id < ops created so far".
struct DtrLogGraph {
  std::vector<int32_t> storage_of;     // per tensor
  std::vector<int32_t> op_of;          // per tensor
  std::vector<int64_t> storage_size;   // per storage
  std::vector<int32_t> tensors_begin;  // per storage + 1: its tensors, root first, by op id
  std::vector<int32_t> tensors_flat;
  std::vector<int32_t> children_begin;  // per tensor + 1: outputs of ops reading it, repeats kept
  std::vector<int32_t> children_flat;

  // Storage-level adjacency for the region walks and neighbourhoods: per storage, the distinct
  // storages of its tensors' children (forward) or parents (reverse), each with the op from which
  // on the edge exists (the later of the two tensors' creations), sorted by that op.
  struct Edge {
    int32_t storage;
    int32_t from_op;
  };
  std::vector<int32_t> fwd_begin;
  std::vector<Edge> fwd_flat;
  std::vector<int32_t> rev_begin;
  std::vector<Edge> rev_flat;

  explicit DtrLogGraph(const io::DtrLog& log);

 private:
  void build_edges(const io::DtrLog& log, bool forward, std::vector<int32_t>& begin, std::vector<Edge>& flat);
};

// replay_dtr_log over a graph built beforehand (the sweep builds it once for all its runs).
DtrReplayResult replay_dtr_log(const io::DtrLog& log, const DtrLogGraph& graph, int64_t budget_bytes,
                               double remat_limit_ns, const EvictionHeuristic& heuristic);

}  // namespace mutwo::sim
