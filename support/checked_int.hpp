#pragma once
// Integer arithmetic on sizes that come from input files (shape products, byte counts, FLOPs,
// durations): an overflow is an error naming what was being computed, never a wrapped number.
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace mutwo::support {

// The product of the factors (each >= 0); throws GraphError "<what>: 2^40 x 2^40 x 4 overflows
// 64-bit integers" when it does not fit in int64.
int64_t checked_product(std::initializer_list<int64_t> factors, std::string_view what);
// a + b (each >= 0); throws GraphError naming `what` on overflow.
int64_t checked_sum(int64_t a, int64_t b, std::string_view what);

}  // namespace mutwo::support
