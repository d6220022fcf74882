#pragma once
// The question a dynamic policy answers while a replay runs: "which resident storage to evict
// now?" (docs/ARCHITECTURE.md, "Simulation"). The engine (sim/dtr_replay) keeps the state; a heuristic scores
// one candidate from the figures below and the engine evicts the smallest score, scanning its pool
// in order, ties to the later entry, a score of 0 ending the scan (simrd's Heuristic.choose).
// Implementations live in policies/ (policies/eviction_heuristics).
#include <cstdint>
#include <limits>
#include <string_view>

namespace mutwo::sim {

// What a heuristic reads. The engine maintains the costly figures only when asked (features()).
struct EvictionCandidate {
  int64_t size_bytes = 0;
  int64_t compute_ns = 0;  // summed time of the distinct ops whose outputs live on this storage
  // Clock at its last use as an input or production; kNeverAccessed if neither happened yet.
  int64_t last_access_ns = 0;
  int64_t clock_ns = 0;  // the engine's clock now
  // Evicted neighbourhood (simrd's Region, maintained incrementally): summed compute of the evicted
  // storages reachable through evicted storages along child edges / parent edges.
  int64_t region_compute_ns = 0;
  int64_t region_rev_compute_ns = 0;
  // Summed value of the distinct union-find classes of the directly adjacent evicted storages
  // (simrd's EqClass approximation of the neighbourhood).
  int64_t eqclass_compute_ns = 0;

  static constexpr int64_t kNeverAccessed = std::numeric_limits<int64_t>::min();
};

struct EvictionFeatures {
  bool regions = false;     // fill region_compute_ns and region_rev_compute_ns
  bool eq_classes = false;  // fill eqclass_compute_ns
};

class EvictionHeuristic {
 public:
  virtual ~EvictionHeuristic() = default;
  virtual std::string_view name() const = 0;
  virtual EvictionFeatures features() const = 0;
  // Smaller evicts first; +infinity: only if nothing else is left.
  virtual double score(const EvictionCandidate& candidate) const = 0;
};

// num / den rounded to the nearest double, as Python's int / int (simrd's scores are Python true
// divisions of integers, and ties between equal scores decide evictions); +infinity if den <= 0.
double python_true_divide(int64_t num, int64_t den);

// num / (size_bytes * staleness) the way simrd's DTR-family scores divide: +infinity when the
// product is <= 0 (zero size, or used at this very clock); 0 when never accessed (infinite
// staleness) and size > 0.
double per_byte_per_staleness(int64_t num, const EvictionCandidate& c);

}  // namespace mutwo::sim
