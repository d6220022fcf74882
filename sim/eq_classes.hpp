#pragma once
// Union-find classes of evicted storages with a summed value per class: DTR's equivalence-class
// approximation of an evicted neighbourhood (Kirisame et al., ICLR 2021, appendix; simrd's
// optimization/eqclass.py). Classes only merge; a storage coming back subtracts its value from its
// class, which never splits. Shared by the DTR log replay and the engine's dynamic eviction.
#include <cstdint>
#include <vector>

namespace mutwo::sim {

class EqClasses {
 public:
  int32_t make(int64_t value) {
    parent_.push_back(-1);
    value_.push_back(value);
    return static_cast<int32_t>(parent_.size() - 1);
  }
  int32_t find(int32_t n) {
    int32_t root = n;
    while (parent_[static_cast<size_t>(root)] >= 0) root = parent_[static_cast<size_t>(root)];
    while (parent_[static_cast<size_t>(n)] >= 0) {  // path compression
      const int32_t next = parent_[static_cast<size_t>(n)];
      parent_[static_cast<size_t>(n)] = root;
      n = next;
    }
    return root;
  }
  void merge(int32_t lhs, int32_t rhs) {
    const int32_t l = find(lhs);
    const int32_t r = find(rhs);
    if (l == r) return;
    parent_[static_cast<size_t>(l)] = r;
    value_[static_cast<size_t>(r)] += value_[static_cast<size_t>(l)];
  }
  // The summed value of n's class.
  int64_t& value(int32_t n) { return value_[static_cast<size_t>(find(n))]; }

 private:
  std::vector<int32_t> parent_;  // -1: a root
  std::vector<int64_t> value_;   // per root
};

}  // namespace mutwo::sim
