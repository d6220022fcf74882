#pragma once
// simrd's Regions (optimization/region.py) as bitsets over storage ids, for the DTR log replay.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace mutwo::sim {

// simrd's Regions (optimization/region.py), two per storage: the evicted storages reachable from
// the base along child edges (forward) or parent edges (reverse) through evicted storages only
// (interior), the material storages at their edge (frontier), and the interior's summed compute.
// Sets are bitsets over storage ids: rebuilds and absorbs are word operations.
class Regions {
 public:
  Regions() = default;
  explicit Regions(size_t storages)
      : words_((storages + 63) / 64), bits_(storages * 4 * words_, 0), compute_ns_(storages * 2, 0) {}

  size_t words() const { return words_; }
  uint64_t* interior(int32_t s, bool reverse) { return bits_.data() + slot(s, reverse) * 2 * words_; }
  uint64_t* frontier(int32_t s, bool reverse) { return interior(s, reverse) + words_; }
  int64_t& compute_ns(int32_t s, bool reverse) { return compute_ns_[slot(s, reverse)]; }
  void clear(int32_t s, bool reverse) {
    std::fill_n(interior(s, reverse), 2 * words_, uint64_t{0});
    compute_ns(s, reverse) = 0;
  }

  static bool test(const uint64_t* set, int32_t x) { return (set[x >> 6] >> (x & 63)) & 1U; }
  static void set(uint64_t* set, int32_t x) { set[x >> 6] |= uint64_t{1} << (x & 63); }
  static void reset(uint64_t* set, int32_t x) { set[x >> 6] &= ~(uint64_t{1} << (x & 63)); }
  template <typename F>
  static void for_each(const uint64_t* set, size_t words, F&& f) {
    for (size_t w = 0; w < words; ++w) {
      for (uint64_t bits = set[w]; bits != 0; bits &= bits - 1) {
        f(static_cast<int32_t>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
      }
    }
  }

 private:
  size_t slot(int32_t s, bool reverse) const { return static_cast<size_t>(s) * 2 + (reverse ? 1 : 0); }
  size_t words_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<int64_t> compute_ns_;
};

}  // namespace mutwo::sim
