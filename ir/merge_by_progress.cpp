#include "ir/merge_by_progress.hpp"

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::ir {
namespace {

void check_list(const char* name, const std::vector<int32_t>& ids, const std::vector<int64_t>& ns) {
  if (ids.size() != ns.size()) {
    throw Error(
        fmt::format("merge_by_progress: list {} has {} ops but {} durations", name, ids.size(), ns.size()));
  }
  for (size_t k = 0; k < ns.size(); ++k) {
    if (ns[k] < 0)
      throw Error(
          fmt::format("merge_by_progress: list {} op {} has duration {} ns < 0", name, ids[k], ns[k]));
  }
}

// Progress of one list: the midpoint of its next item as a share of the list's total time.
struct Progress {
  const std::vector<int64_t>& ns;
  int64_t total = 0;
  size_t next = 0;
  int64_t start = 0;  // sum of ns[0, next)

  explicit Progress(const std::vector<int64_t>& durations) : ns(durations) {
    for (int64_t d : ns) total += d;
  }
  bool done() const { return next == ns.size(); }
  // Compared by cross-multiplying in long double: totals of ~1e10 ns squared overflow int64.
  long double midpoint_num() const {
    if (total == 0) return static_cast<long double>(2 * next + 1);
    return static_cast<long double>(2 * start + ns[next]);
  }
  long double denom() const { return total == 0 ? static_cast<long double>(2 * ns.size()) : 2.0L * total; }
  void advance() { start += ns[next++]; }
};

}  // namespace

std::vector<int32_t> merge_by_progress(const std::vector<int32_t>& a, const std::vector<int64_t>& a_ns,
                                       const std::vector<int32_t>& b, const std::vector<int64_t>& b_ns) {
  check_list("a", a, a_ns);
  check_list("b", b, b_ns);
  std::vector<int32_t> out;
  out.reserve(a.size() + b.size());
  Progress pa(a_ns);
  Progress pb(b_ns);
  while (!pa.done() || !pb.done()) {
    // a's midpoint share <= b's: mid_a / den_a <= mid_b / den_b, denominators > 0.
    const bool take_a =
        pb.done() || (!pa.done() && pa.midpoint_num() * pb.denom() <= pb.midpoint_num() * pa.denom());
    if (take_a) {
      out.push_back(a[pa.next]);
      pa.advance();
    } else {
      out.push_back(b[pb.next]);
      pb.advance();
    }
  }
  return out;
}

}  // namespace mutwo::ir
