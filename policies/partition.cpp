// Sub-array partitions (μ-TWO, Purandare et al., MLSys 2023): integer partitions of each
// architecture's count, and their cartesian product over a mixed array.
#include "policies/partition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "support/error.hpp"

namespace mutwo::policies {

namespace {

using Parts = std::vector<int32_t>;
// Returns false to stop the enumeration.
using PartsVisitor = std::function<bool(const Parts&)>;

// Parts of one architecture's partitions: each in [lo, hi], at most max_parts of them (0: any).
struct PartRule {
  int32_t lo = 1;
  int32_t hi = 0;
  int32_t max_parts = 0;
};

// Visits partitions of `remaining` (appended to cur, parts <= max_part) in reverse lexicographic
// order; returns false once the visitor asked to stop.
bool generate(int32_t remaining, int32_t max_part, const PartRule& rule, Parts& cur,
              const PartsVisitor& visit) {
  if (remaining == 0) return visit(cur);
  if (rule.max_parts > 0 && static_cast<int32_t>(cur.size()) >= rule.max_parts) return true;
  for (int32_t v = std::min(remaining, max_part); v >= rule.lo; --v) {
    const int32_t rest = remaining - v;
    // The rest needs ceil(rest / v) more parts of at most v each.
    if (rule.max_parts > 0 && rest > 0 &&
        static_cast<int64_t>(cur.size()) + 1 + (rest + v - 1) / v > rule.max_parts) {
      break;  // smaller v only needs more parts
    }
    if (rest > 0 && rest < rule.lo) continue;
    cur.push_back(v);
    const bool go_on = generate(rest, v, rule, cur, visit);
    cur.pop_back();
    if (!go_on) return false;
  }
  return true;
}

bool for_each_partition(int32_t n, const PartRule& rule, const PartsVisitor& visit) {
  Parts cur;
  return generate(n, std::min(n, rule.hi > 0 ? rule.hi : n), rule, cur, visit);
}

void check_options(const std::vector<ArchitectureCount>& architectures, const PartitionOptions& o) {
  validate_array_partition(architectures, [&] {
    ArrayPartition whole;  // one sub-array per architecture: checks the architectures alone
    for (const ArchitectureCount& a : architectures) whole.push_back({a.model, a.count});
    return whole;
  }());
  if (o.max_sub_arrays < 0)
    throw Error(fmt::format("partition option max_sub_arrays {} must be >= 0", o.max_sub_arrays));
  if (o.max_sub_arrays > 0 && static_cast<size_t>(o.max_sub_arrays) < architectures.size()) {
    throw Error(
        fmt::format("partition option max_sub_arrays {} is below the {} architectures (one sub-array each)",
                    o.max_sub_arrays, architectures.size()));
  }
  if (o.min_width < 1) throw Error(fmt::format("partition option min_width {} must be >= 1", o.min_width));
  if (o.max_width < 0) throw Error(fmt::format("partition option max_width {} must be >= 0", o.max_width));
  if (o.max_width > 0 && o.min_width > o.max_width) {
    throw Error(fmt::format("partition option min_width {} is above max_width {}", o.min_width, o.max_width));
  }
  if (o.max_partitions < 0)
    throw Error(fmt::format("partition option max_partitions {} must be >= 0", o.max_partitions));
}

PartRule rule_for(const ArchitectureCount& a, const PartitionOptions& o, size_t architectures) {
  PartRule r;
  r.lo = std::min(o.min_width, a.count);  // a count below min_width keeps {count}
  r.hi = o.max_width;
  if (a.count < o.min_width) r.hi = a.count;
  if (o.max_sub_arrays > 0) r.max_parts = o.max_sub_arrays - static_cast<int32_t>(architectures) + 1;
  return r;
}

int64_t add_sat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}
int64_t mul_sat(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}

// by_parts[k]: partitions of n into exactly k parts in [rule.lo, hi] (k <= max parts).
std::vector<int64_t> count_by_parts(int32_t n, const PartRule& rule) {
  const int32_t hi = std::min(n, rule.hi > 0 ? rule.hi : n);
  const int32_t kmax = rule.max_parts > 0 ? std::min(rule.max_parts, n) : n;
  // c[k][m]: multisets of k parts summing to m, parts from the sizes seen so far.
  std::vector<std::vector<int64_t>> c(static_cast<size_t>(kmax) + 1,
                                      std::vector<int64_t>(static_cast<size_t>(n) + 1, 0));
  c[0][0] = 1;
  for (int32_t v = rule.lo; v <= hi; ++v) {
    for (int32_t k = 1; k <= kmax; ++k) {
      for (int32_t m = v; m <= n; ++m) {
        c[static_cast<size_t>(k)][static_cast<size_t>(m)] =
            add_sat(c[static_cast<size_t>(k)][static_cast<size_t>(m)],
                    c[static_cast<size_t>(k - 1)][static_cast<size_t>(m - v)]);
      }
    }
  }
  std::vector<int64_t> by_parts(static_cast<size_t>(kmax) + 1, 0);
  for (int32_t k = 0; k <= kmax; ++k)
    by_parts[static_cast<size_t>(k)] = c[static_cast<size_t>(k)][static_cast<size_t>(n)];
  return by_parts;
}

}  // namespace

std::vector<std::vector<int32_t>> integer_partitions(int32_t n, int32_t max_parts) {
  if (n < 1) throw Error(fmt::format("integer_partitions: n {} must be >= 1", n));
  if (max_parts < 0) throw Error(fmt::format("integer_partitions: max_parts {} must be >= 0", max_parts));
  std::vector<Parts> out;
  PartRule rule;
  rule.max_parts = max_parts;
  for_each_partition(n, rule, [&](const Parts& p) {
    out.push_back(p);
    return true;
  });
  return out;
}

std::vector<ArrayPartition> array_partitions(const std::vector<ArchitectureCount>& architectures,
                                             const PartitionOptions& options) {
  check_options(architectures, options);
  const size_t n = architectures.size();
  std::vector<PartRule> rules;
  for (const ArchitectureCount& a : architectures) rules.push_back(rule_for(a, options, n));

  // Depth-first over architectures, each architecture's partitions regenerated lazily under its
  // parent's choice, so max_partitions stops the enumeration early.
  std::vector<ArrayPartition> out;
  ArrayPartition cur;
  std::function<bool(size_t)> visit_arch = [&](size_t a) -> bool {
    if (a == n) {
      out.push_back(cur);
      return options.max_partitions == 0 || static_cast<int64_t>(out.size()) < options.max_partitions;
    }
    PartRule rule = rules[a];
    if (options.max_sub_arrays > 0) {
      // Sub-arrays left for this architecture: the total less those taken, less one per later one.
      rule.max_parts =
          options.max_sub_arrays - static_cast<int32_t>(cur.size()) - static_cast<int32_t>(n - a - 1);
    }
    return for_each_partition(architectures[a].count, rule, [&](const Parts& p) {
      for (int32_t w : p) cur.push_back({architectures[a].model, w});
      const bool go_on = visit_arch(a + 1);
      cur.resize(cur.size() - p.size());
      return go_on;
    });
  };
  visit_arch(0);
  return out;
}

int64_t array_partition_count(const std::vector<ArchitectureCount>& architectures,
                              const PartitionOptions& options) {
  check_options(architectures, options);
  // total[k]: array partitions so far with k sub-arrays in all.
  std::vector<int64_t> total{1};
  for (const ArchitectureCount& a : architectures) {
    const std::vector<int64_t> by_parts = count_by_parts(a.count, rule_for(a, options, architectures.size()));
    std::vector<int64_t> next(total.size() + by_parts.size() - 1, 0);
    for (size_t i = 0; i < total.size(); ++i) {
      for (size_t k = 0; k < by_parts.size(); ++k)
        next[i + k] = add_sat(next[i + k], mul_sat(total[i], by_parts[k]));
    }
    total = std::move(next);
  }
  int64_t sum = 0;
  for (size_t k = 0; k < total.size(); ++k) {
    if (options.max_sub_arrays == 0 || static_cast<int64_t>(k) <= options.max_sub_arrays)
      sum = add_sat(sum, total[k]);
  }
  return sum;
}

}  // namespace mutwo::policies
