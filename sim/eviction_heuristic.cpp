#include "sim/eviction_heuristic.hpp"

namespace mutwo::sim {

double python_true_divide(int64_t num, int64_t den) {
  if (den <= 0) return std::numeric_limits<double>::infinity();
  constexpr int64_t kExact = int64_t{1} << 53;  // integers a double holds exactly
  if (num >= -kExact && num <= kExact && den <= kExact) {
    return static_cast<double>(num) / static_cast<double>(den);  // IEEE division: correctly rounded
  }
  // 64-bit mantissa: both operands exact, then one more rounding (Python rounds once; the two
  // differ only on exact halfway cases).
  return static_cast<double>(static_cast<long double>(num) / static_cast<long double>(den));
}

double per_byte_per_staleness(int64_t num, const EvictionCandidate& c) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (c.last_access_ns == EvictionCandidate::kNeverAccessed) {
    // staleness = clock - (-inf) = inf: size * inf is inf (score 0), or NaN for size 0 (score inf).
    return c.size_bytes > 0 ? 0.0 : kInf;
  }
  const int64_t staleness = c.clock_ns - c.last_access_ns;
  int64_t den = 0;
  if (__builtin_mul_overflow(c.size_bytes, staleness, &den)) {
    const long double wide = static_cast<long double>(c.size_bytes) * static_cast<long double>(staleness);
    return wide > 0 ? static_cast<double>(static_cast<long double>(num) / wide) : kInf;
  }
  return den > 0 ? python_true_divide(num, den) : kInf;
}

}  // namespace mutwo::sim
