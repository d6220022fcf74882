#include "support/checked_int.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "support/error.hpp"

namespace mutwo::support {

int64_t checked_product(std::initializer_list<int64_t> factors, std::string_view what) {
  int64_t out = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(out, f, &out)) {
      throw GraphError(fmt::format("{}: {} overflows 64-bit integers", what, fmt::join(factors, " x ")));
    }
  }
  return out;
}

int64_t checked_sum(int64_t a, int64_t b, std::string_view what) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    throw GraphError(fmt::format("{}: {} + {} overflows 64-bit integers", what, a, b));
  }
  return out;
}

}  // namespace mutwo::support
