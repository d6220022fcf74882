#pragma once
// Eviction heuristics of Dynamic Tensor Rematerialization (Kirisame et al., ICLR 2021), as DTR's own
// simulator simrd computes them (uwsampl/dtr-prototype, simrd/simrd/heuristic/{dtr,etc}.py; the
// formulas are summarised in /work/shared/dtr/README.md, last section). The runtime evicts the
// resident storage of smallest score.
//
// The heuristics see the runtime through DtrGraph, a plain DAG of storages (one per tensor in
// mutwo's runtime; one per simrd Storage when replaying DTR's logs) with their state, so that the
// same code scores both.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mutwo::policies {

enum class StorageState : uint8_t {
  unborn,    // its producer has not run yet
  resident,  // on the device
  evicted,   // released but rematerialisable: part of evicted neighbourhoods
  lost,      // released and not rematerialisable (an input, a backward result): no neighbourhood
};

// The DAG the heuristics read; the runtime owns and updates it. Parents of s are the inputs of the
// op producing s; children of s are the outputs of the ops reading s (duplicates allowed).
struct DtrGraph {
  std::vector<int64_t> size_bytes;      // per storage
  std::vector<int64_t> compute_ns;      // per storage: cost of the op(s) that produce it
  std::vector<int64_t> last_access_ns;  // per storage: clock at its last read or production
  std::vector<StorageState> state;      // per storage
  std::vector<int32_t> parents_begin;   // size storages + 1; parents of s: [begin[s], begin[s+1])
  std::vector<int32_t> parents_flat;
  std::vector<int32_t> children_begin;  // likewise
  std::vector<int32_t> children_flat;
  int64_t clock_ns = 0;  // the runtime's clock: op durations run so far, remats included

  size_t storage_count() const { return size_bytes.size(); }
  std::span<const int32_t> parents(int32_t s) const {
    const auto k = static_cast<size_t>(s);
    return {parents_flat.data() + parents_begin[k],
            static_cast<size_t>(parents_begin[k + 1] - parents_begin[k])};
  }
  std::span<const int32_t> children(int32_t s) const {
    const auto k = static_cast<size_t>(s);
    return {children_flat.data() + children_begin[k],
            static_cast<size_t>(children_begin[k + 1] - children_begin[k])};
  }
};

// One eviction heuristic. Stateful heuristics (the equivalence classes) follow the runtime through
// the hooks, so a heuristic object serves one run.
class DtrHeuristic {
 public:
  virtual ~DtrHeuristic() = default;
  virtual std::string_view name() const = 0;
  // Score of evicting resident storage s now (smaller evicts first); +infinity: evict only if
  // nothing else is left (simrd: size 0 or staleness 0).
  virtual double score(const DtrGraph& graph, int32_t s) = 0;
  // s has just become evicted (by the heuristic or because it was released).
  virtual void on_evict(const DtrGraph& /*graph*/, int32_t /*s*/) {}
  // s has just been rematerialised.
  virtual void on_remat(const DtrGraph& /*graph*/, int32_t /*s*/) {}
};

struct DtrHeuristicInfo {
  std::string name;         // "dtr"
  std::string description;  // one line, with the formula
};

// dtr, dtr-eqclass, dtr-local, msps, lru, largest (simrd's DTR, DTREqClass, DTRLocal, MSPS, LRU,
// LargestStorage).
const std::vector<DtrHeuristicInfo>& dtr_heuristics();
// Throws UnknownNameError "unknown DTR heuristic 'x'; valid: dtr, ...".
std::unique_ptr<DtrHeuristic> make_dtr_heuristic(std::string_view name);
// The UnknownNameError above, for every factory of these heuristics.
[[noreturn]] void throw_unknown_dtr_heuristic(std::string_view name);

// Summed compute of the evicted storages reachable from s through evicted storages only, along
// child edges (children = true, simrd's `region`) or parent edges (simrd's `region_rev`); s itself
// is not counted. `stamp` is scratch (one int per storage), `epoch` a value not yet in it.
int64_t evicted_region_compute_ns(const DtrGraph& graph, int32_t s, bool children,
                                  std::vector<uint32_t>& stamp, uint32_t epoch, std::vector<int32_t>& stack);

}  // namespace mutwo::policies
