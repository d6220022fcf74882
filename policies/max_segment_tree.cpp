#include "policies/max_segment_tree.hpp"

#include <algorithm>
#include <limits>

namespace mutwo::policies {
namespace {

constexpr int64_t kMaxIdentity = std::numeric_limits<int64_t>::min();

}  // namespace

MaxSegmentTree::MaxSegmentTree(const std::vector<int64_t>& values) : n_(static_cast<int32_t>(values.size())) {
  if (n_ == 0) return;
  max_.assign(4 * values.size(), 0);
  add_.assign(4 * values.size(), 0);
  build(1, 0, n_ - 1, values);
}

void MaxSegmentTree::build(size_t node, int32_t lo, int32_t hi, const std::vector<int64_t>& values) {
  if (lo == hi) {
    max_[node] = values[static_cast<size_t>(lo)];
    return;
  }
  const int32_t mid = lo + (hi - lo) / 2;
  build(2 * node, lo, mid, values);
  build(2 * node + 1, mid + 1, hi, values);
  max_[node] = std::max(max_[2 * node], max_[2 * node + 1]);
}

void MaxSegmentTree::add(int32_t first, int32_t last, int64_t delta) {
  first = std::max(first, 0);
  last = std::min(last, n_ - 1);
  if (first > last || delta == 0) return;
  add(1, 0, n_ - 1, first, last, delta);
}

void MaxSegmentTree::add(size_t node, int32_t lo, int32_t hi, int32_t first, int32_t last, int64_t delta) {
  if (first <= lo && hi <= last) {
    max_[node] += delta;
    add_[node] += delta;
    return;
  }
  const int32_t mid = lo + (hi - lo) / 2;
  if (first <= mid) add(2 * node, lo, mid, first, last, delta);
  if (last > mid) add(2 * node + 1, mid + 1, hi, first, last, delta);
  max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + add_[node];
}

int64_t MaxSegmentTree::max(int32_t first, int32_t last) const {
  first = std::max(first, 0);
  last = std::min(last, n_ - 1);
  if (first > last) return kMaxIdentity;
  return max(1, 0, n_ - 1, first, last);
}

int64_t MaxSegmentTree::max(size_t node, int32_t lo, int32_t hi, int32_t first, int32_t last) const {
  if (first <= lo && hi <= last) return max_[node];
  const int32_t mid = lo + (hi - lo) / 2;
  int64_t best = kMaxIdentity;
  if (first <= mid) best = std::max(best, max(2 * node, lo, mid, first, last));
  if (last > mid) best = std::max(best, max(2 * node + 1, mid + 1, hi, first, last));
  return best + add_[node];
}

int64_t MaxSegmentTree::max_all() const {
  return n_ == 0 ? kMaxIdentity : max_[1];
}

}  // namespace mutwo::policies
