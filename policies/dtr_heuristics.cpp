// DTR eviction heuristics (Kirisame et al., ICLR 2021, section 3 and appendix; simrd's
// heuristic/dtr.py, heuristic/etc.py, optimization/region.py and optimization/eqclass.py).
#include "policies/dtr_heuristics.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "profiles/error.hpp"

namespace mutwo::policies {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t staleness_ns(const DtrGraph& g, int32_t s) {
  return g.clock_ns - g.last_access_ns[static_cast<size_t>(s)];
}

// cost / (size * staleness); +inf when the denominator is <= 0 (simrd's rule).
double per_byte_per_ns(double cost, const DtrGraph& g, int32_t s) {
  const double denom =
      static_cast<double>(g.size_bytes[static_cast<size_t>(s)]) * static_cast<double>(staleness_ns(g, s));
  return denom > 0 ? cost / denom : kInf;
}

// Region walks with a per-heuristic scratch buffer.
class RegionScratch {
 public:
  int64_t region(const DtrGraph& g, int32_t s, bool children) {
    if (stamp_.size() != g.storage_count()) stamp_.assign(g.storage_count(), 0);
    if (++epoch_ == 0) {  // wrapped: clear so old stamps cannot collide
      std::fill(stamp_.begin(), stamp_.end(), 0);
      epoch_ = 1;
    }
    return evicted_region_compute_ns(g, s, children, stamp_, epoch_, stack_);
  }

 private:
  std::vector<uint32_t> stamp_;
  std::vector<int32_t> stack_;
  uint32_t epoch_ = 0;
};

// h_DTR: (compute + region + region_rev) / (size * staleness), the full evicted neighbourhood.
class FullDtr : public DtrHeuristic {
 public:
  std::string_view name() const override { return "dtr"; }
  double score(const DtrGraph& g, int32_t s) override {
    const auto k = static_cast<size_t>(s);
    if (g.size_bytes[k] <= 0 || staleness_ns(g, s) <= 0) return kInf;  // skip the walks
    const int64_t cost = g.compute_ns[k] + scratch_.region(g, s, true) + scratch_.region(g, s, false);
    return per_byte_per_ns(static_cast<double>(cost), g, s);
  }

 private:
  RegionScratch scratch_;
};

// h_DTR-eqclass: neighbourhoods approximated by union-find classes of evicted storages. A class
// is made per eviction and merged with the classes of the evicted neighbours; a remat subtracts
// the storage's compute from its class, and classes never split (simrd's eqclass.py).
class EqClassDtr : public DtrHeuristic {
 public:
  std::string_view name() const override { return "dtr-eqclass"; }

  double score(const DtrGraph& g, int32_t s) override {
    const auto k = static_cast<size_t>(s);
    if (g.size_bytes[k] <= 0 || staleness_ns(g, s) <= 0) return kInf;
    roots_.clear();
    auto add = [&](int32_t n) {
      if (g.state[static_cast<size_t>(n)] != StorageState::evicted) return;
      roots_.push_back(find(node_of_[static_cast<size_t>(n)]));
    };
    ensure(g);
    for (int32_t p : g.parents(s)) add(p);
    for (int32_t c : g.children(s)) add(c);
    std::sort(roots_.begin(), roots_.end());
    roots_.erase(std::unique(roots_.begin(), roots_.end()), roots_.end());
    int64_t cost = g.compute_ns[k];
    for (int32_t r : roots_) cost += value_[static_cast<size_t>(r)];
    return per_byte_per_ns(static_cast<double>(cost), g, s);
  }

  void on_evict(const DtrGraph& g, int32_t s) override {
    ensure(g);
    const auto n = static_cast<int32_t>(parent_.size());
    parent_.push_back(n);
    value_.push_back(g.compute_ns[static_cast<size_t>(s)]);
    node_of_[static_cast<size_t>(s)] = n;
    auto merge = [&](int32_t nb) {
      if (nb == s || g.state[static_cast<size_t>(nb)] != StorageState::evicted) return;
      const int32_t a = find(n);
      const int32_t b = find(node_of_[static_cast<size_t>(nb)]);
      if (a == b) return;
      parent_[static_cast<size_t>(b)] = a;
      value_[static_cast<size_t>(a)] += value_[static_cast<size_t>(b)];
    };
    for (int32_t p : g.parents(s)) merge(p);
    for (int32_t c : g.children(s)) merge(c);
  }

  void on_remat(const DtrGraph& g, int32_t s) override {
    ensure(g);
    const int32_t n = node_of_[static_cast<size_t>(s)];
    if (n < 0) return;
    value_[static_cast<size_t>(find(n))] -= g.compute_ns[static_cast<size_t>(s)];
    node_of_[static_cast<size_t>(s)] = -1;
  }

 private:
  void ensure(const DtrGraph& g) {
    if (node_of_.size() != g.storage_count()) node_of_.assign(g.storage_count(), -1);
  }
  int32_t find(int32_t n) {
    while (parent_[static_cast<size_t>(n)] != n) {
      parent_[static_cast<size_t>(n)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(n)])];
      n = parent_[static_cast<size_t>(n)];
    }
    return n;
  }

  std::vector<int32_t> node_of_;  // per storage: its class node while evicted, else -1
  std::vector<int32_t> parent_;   // union-find over nodes
  std::vector<int64_t> value_;    // per root: summed compute
  std::vector<int32_t> roots_;    // scratch
};

// h_DTR-local: compute / (size * staleness), own op only.
class LocalDtr : public DtrHeuristic {
 public:
  std::string_view name() const override { return "dtr-local"; }
  double score(const DtrGraph& g, int32_t s) override {
    return per_byte_per_ns(static_cast<double>(g.compute_ns[static_cast<size_t>(s)]), g, s);
  }
};

// MSPS (Peng et al.'s memory saving per second, as simrd has it): (compute + region_rev) / size.
class Msps : public DtrHeuristic {
 public:
  std::string_view name() const override { return "msps"; }
  double score(const DtrGraph& g, int32_t s) override {
    const auto k = static_cast<size_t>(s);
    if (g.size_bytes[k] <= 0) return kInf;
    const int64_t cost = g.compute_ns[k] + scratch_.region(g, s, false);
    return static_cast<double>(cost) / static_cast<double>(g.size_bytes[k]);
  }

 private:
  RegionScratch scratch_;
};

// LRU: the least recently accessed first.
class Lru : public DtrHeuristic {
 public:
  std::string_view name() const override { return "lru"; }
  double score(const DtrGraph& g, int32_t s) override {
    return static_cast<double>(g.last_access_ns[static_cast<size_t>(s)]);
  }
};

// LargestStorage: 1 / size.
class Largest : public DtrHeuristic {
 public:
  std::string_view name() const override { return "largest"; }
  double score(const DtrGraph& g, int32_t s) override {
    const int64_t size = g.size_bytes[static_cast<size_t>(s)];
    return size > 0 ? 1.0 / static_cast<double>(size) : kInf;
  }
};

}  // namespace

int64_t evicted_region_compute_ns(const DtrGraph& g, int32_t s, bool children, std::vector<uint32_t>& stamp,
                                  uint32_t epoch, std::vector<int32_t>& stack) {
  int64_t sum = 0;
  stack.clear();
  stamp[static_cast<size_t>(s)] = epoch;
  auto push_neighbours = [&](int32_t v) {
    for (int32_t n : children ? g.children(v) : g.parents(v)) {
      const auto k = static_cast<size_t>(n);
      if (stamp[k] == epoch || g.state[k] != StorageState::evicted) continue;
      stamp[k] = epoch;
      sum += g.compute_ns[k];
      stack.push_back(n);
    }
  };
  push_neighbours(s);
  while (!stack.empty()) {
    const int32_t v = stack.back();
    stack.pop_back();
    push_neighbours(v);
  }
  return sum;
}

const std::vector<DtrHeuristicInfo>& dtr_heuristics() {
  static const std::vector<DtrHeuristicInfo> infos = {
      {"dtr", "h_DTR: (compute + evicted neighbourhood compute) / (bytes x staleness)"},
      {"dtr-eqclass", "h_DTR with neighbourhoods as union-find classes of evicted tensors"},
      {"dtr-local", "compute of own op / (bytes x staleness)"},
      {"msps", "(compute + evicted ancestors' compute) / bytes"},
      {"lru", "least recently accessed"},
      {"largest", "largest tensor"},
  };
  return infos;
}

std::unique_ptr<DtrHeuristic> make_dtr_heuristic(std::string_view name) {
  if (name == "dtr") return std::make_unique<FullDtr>();
  if (name == "dtr-eqclass") return std::make_unique<EqClassDtr>();
  if (name == "dtr-local") return std::make_unique<LocalDtr>();
  if (name == "msps") return std::make_unique<Msps>();
  if (name == "lru") return std::make_unique<Lru>();
  if (name == "largest") return std::make_unique<Largest>();
  throw_unknown_dtr_heuristic(name);
}

void throw_unknown_dtr_heuristic(std::string_view name) {
  std::string valid;
  for (const DtrHeuristicInfo& h : dtr_heuristics()) valid += (valid.empty() ? "" : ", ") + h.name;
  throw UnknownNameError(fmt::format("unknown DTR heuristic '{}'; valid: {}", name, valid));
}

}  // namespace mutwo::policies
