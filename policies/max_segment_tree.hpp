#pragma once
// A segment tree with lazy range add and range max: the greedy planner's estimated memory curve,
// changed and queried over position ranges in O(log n).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mutwo::policies {

// Range add and range max over positions 0..n-1 (inclusive ranges; an empty range is a no-op).
class MaxSegmentTree {
 public:
  explicit MaxSegmentTree(const std::vector<int64_t>& values);
  void add(int32_t first, int32_t last, int64_t delta);
  int64_t max(int32_t first, int32_t last) const;  // INT64_MIN for an empty range
  int64_t max_all() const;                         // INT64_MIN with no positions

 private:
  void build(size_t node, int32_t lo, int32_t hi, const std::vector<int64_t>& values);
  void add(size_t node, int32_t lo, int32_t hi, int32_t first, int32_t last, int64_t delta);
  int64_t max(size_t node, int32_t lo, int32_t hi, int32_t first, int32_t last) const;

  int32_t n_ = 0;
  std::vector<int64_t> max_;  // subtree max, this node's pending add included
  std::vector<int64_t> add_;  // pending add of the whole subtree
};

}  // namespace mutwo::policies
