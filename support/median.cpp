#include "support/median.hpp"

#include <algorithm>
#include <type_traits>

namespace mutwo::support {
namespace {

template <typename T>
T median_of(std::vector<T> values, EvenMedian rule) {
  if (values.empty()) return T{0};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  const T low = values[n / 2 - 1];
  const T high = values[n / 2];
  if (rule == EvenMedian::lower_middle) return low;
  // Integers: low + (high - low) / 2 rounds down without overflowing; doubles: the exact mean.
  if constexpr (std::is_integral_v<T>) {
    return low + (high - low) / 2;
  } else {
    return (low + high) / 2.0;
  }
}

}  // namespace

int64_t median(std::vector<int64_t> values, EvenMedian rule) {
  return median_of(std::move(values), rule);
}

double median(std::vector<double> values, EvenMedian rule) {
  return median_of(std::move(values), rule);
}

}  // namespace mutwo::support
