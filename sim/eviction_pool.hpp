#pragma once
// The eviction pool both eviction runtimes keep (DTR-log replay, sim/dtr_runtime.hpp, over storages;
// the dtr policy inside the engine, sim/dynamic_eviction.cpp, over tensors): which items may be
// evicted, in what order they are scanned, and which one a heuristic's scores pick. It follows simrd
// (simrd/runtime/v2.py storage_pool, _evict; Heuristic.choose), because the scan order decides
// which of two equal scores is evicted:
// - an item joins at the end of the pool when it becomes a candidate (material and evictable);
// - a lock takes it out of the scan; the last unlock puts it back at the end;
// - choose() scans in pool order and keeps the last item of the smallest score; a score of 0 ends
//   the scan at once.
// Ids are dense (0 .. size-1). Scores and eligibility come from the runtime at the moment of the
// choice; the pool holds order and locks only.
#include <cstdint>
#include <limits>
#include <vector>

namespace mutwo::sim {

class EvictionPool {
 public:
  EvictionPool() = default;
  explicit EvictionPool(size_t ids)
      : prev_(ids, -1), next_(ids, -1), in_scan_(ids, 0), candidate_(ids, 0), locks_(ids, 0) {}

  bool empty() const { return head_ < 0; }
  bool in_scan(int32_t id) const { return in_scan_[static_cast<size_t>(id)] != 0; }
  int32_t locks(int32_t id) const { return locks_[static_cast<size_t>(id)]; }

  // id may be evicted from now on: it joins at the end (once unlocked, if locked now).
  void enter(int32_t id) {
    candidate_[static_cast<size_t>(id)] = 1;
    if (locks(id) == 0) append(id);
  }
  // id is no longer a candidate (evicted, freed). False when it was not in the scan.
  bool leave(int32_t id) {
    candidate_[static_cast<size_t>(id)] = 0;
    return remove(id);
  }
  void lock(int32_t id) {
    if (locks_[static_cast<size_t>(id)]++ == 0) remove(id);
  }
  void unlock(int32_t id) {
    if (--locks_[static_cast<size_t>(id)] == 0 && candidate_[static_cast<size_t>(id)] != 0) append(id);
  }

  // The item to evict: over the unlocked candidates in pool order that `eligible` accepts, the last
  // of the smallest `score`; the scan ends at the first with score 0. `eligible` is asked only of an item
  // that would be chosen (it may be costly). If every eligible score is NaN, the last eligible item; -1 when
  // no item is eligible.
  template <class Score, class Eligible>
  int32_t choose(Score&& score, Eligible&& eligible) const {
    double best = std::numeric_limits<double>::infinity();
    int32_t chosen = -1;
    int32_t last_eligible = -1;
    for (int32_t id = head_; id >= 0; id = next_[static_cast<size_t>(id)]) {
      const double s = score(id);
      const bool better = s <= best;
      if (!better && s != 0) {
        if (chosen < 0 && s != s && eligible(id)) last_eligible = id;  // NaN: only if nothing else
        continue;
      }
      if (!eligible(id)) continue;
      if (better) {
        best = s;
        chosen = id;
      }
      if (s == 0) break;  // simrd stops at a score of 0 even below a negative best
    }
    return chosen >= 0 ? chosen : last_eligible;
  }

 private:
  void append(int32_t id) {
    const auto k = static_cast<size_t>(id);
    if (in_scan_[k] != 0) return;
    in_scan_[k] = 1;
    prev_[k] = tail_;
    next_[k] = -1;
    if (tail_ >= 0) {
      next_[static_cast<size_t>(tail_)] = id;
    } else {
      head_ = id;
    }
    tail_ = id;
  }
  bool remove(int32_t id) {
    const auto k = static_cast<size_t>(id);
    if (in_scan_[k] == 0) return false;
    in_scan_[k] = 0;
    const int32_t p = prev_[k];
    const int32_t n = next_[k];
    if (p >= 0) {
      next_[static_cast<size_t>(p)] = n;
    } else {
      head_ = n;
    }
    if (n >= 0) {
      prev_[static_cast<size_t>(n)] = p;
    } else {
      tail_ = p;
    }
    return true;
  }

  std::vector<int32_t> prev_;
  std::vector<int32_t> next_;
  std::vector<uint8_t> in_scan_;    // in the scan list: a candidate, unlocked
  std::vector<uint8_t> candidate_;  // may be evicted once unlocked
  std::vector<int32_t> locks_;
  int32_t head_ = -1;
  int32_t tail_ = -1;
};

}  // namespace mutwo::sim
