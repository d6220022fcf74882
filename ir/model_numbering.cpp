#include "ir/model_numbering.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "support/error.hpp"

namespace mutwo::ir {

void check_model_numbering(const std::vector<SubArray>& sub_arrays) {
  int64_t total = 0;
  size_t named = 0;
  for (const SubArray& sa : sub_arrays) {
    total += sa.width;
    named += sa.first_model != kNoId ? 1 : 0;
  }
  if (named == 0) return;
  // By first model (no vector of `total`: a hand-edited width may be 2^31): in range and disjoint,
  // the ranges then tile the array, their widths adding up to it.
  std::vector<size_t> by_first;
  for (size_t i = 0; i < sub_arrays.size(); ++i) {
    const SubArray& sa = sub_arrays[i];
    if (sa.first_model < 0 || int64_t{sa.first_model} + sa.width > total) {
      throw ScheduleError(fmt::format(
          "sub_array {} '{}': field 'first_model' = {} must number its {} models within the array's {} "
          "(0 to {}){}",
          i, sa.name, sa.first_model, sa.width, total, total - sa.width,
          sa.first_model == kNoId ? ", as the other sub-arrays' do" : ""));
    }
    by_first.push_back(i);
  }
  std::sort(by_first.begin(), by_first.end(),
            [&](size_t a, size_t b) { return sub_arrays[a].first_model < sub_arrays[b].first_model; });
  for (size_t k = 1; k < by_first.size(); ++k) {
    const SubArray& before = sub_arrays[by_first[k - 1]];
    const SubArray& next = sub_arrays[by_first[k]];
    if (int64_t{before.first_model} + before.width <= next.first_model) continue;
    const size_t i = std::max(by_first[k - 1], by_first[k]);  // named in list order: the later one
    const size_t other = std::min(by_first[k - 1], by_first[k]);
    throw ScheduleError(fmt::format("sub_array {} '{}': field 'first_model' = {} numbers model {}, which "
                                    "sub_array {} numbers too",
                                    i, sub_arrays[i].name, sub_arrays[i].first_model, next.first_model, other));
  }
}

}  // namespace mutwo::ir
