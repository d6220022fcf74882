#pragma once
// A copy engine on the greedy planner's estimated timeline, which prices a swap's stall.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mutwo::policies {

// How late a copy ending at end_ns is for its deadline (0 when on time).
inline int64_t lateness(int64_t end_ns, int64_t deadline_ns) {
  return std::max<int64_t>(0, end_ns - deadline_ns);
}

// One copy engine on the estimated timeline, as the simulator runs it: copies in ready order (ties
// by key), each starting once ready and once the previous copy is done. A copy that ends after its
// deadline stalls compute by the difference (its lateness).
class CopyQueue {
 public:
  struct Trial {
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int64_t added_lateness_ns = 0;  // lateness the new copy adds to the copies already queued
  };
  Trial trial(int64_t ready_ns, int64_t duration_ns, int64_t key) const;
  void insert(int64_t ready_ns, int64_t duration_ns, int64_t key, int64_t deadline_ns);

 private:
  struct Copy {
    int64_t ready_ns = 0;
    int64_t key = 0;
    int64_t duration_ns = 0;
    int64_t deadline_ns = 0;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
  };
  size_t slot(int64_t ready_ns, int64_t key) const;
  std::vector<Copy> copies_;
};

}  // namespace mutwo::policies
