// DTR's eviction heuristics (Kirisame et al., ICLR 2021, section 3 and appendix; simrd's
// heuristic/dtr.py and heuristic/etc.py).
#include "policies/dtr_heuristics.hpp"

#include <limits>

namespace mutwo::policies {
namespace {

using sim::EvictionCandidate;
using sim::EvictionFeatures;

// h_DTR: (compute + region + region_rev) / (size * staleness).
class Dtr : public sim::EvictionHeuristic {
 public:
  std::string_view name() const override { return "dtr"; }
  EvictionFeatures features() const override { return {.regions = true, .eq_classes = false}; }
  double score(const EvictionCandidate& c) const override {
    return sim::per_byte_per_staleness(c.compute_ns + c.region_compute_ns + c.region_rev_compute_ns, c);
  }
};

// h_DTR^eq: (compute + distinct neighbouring classes) / (size * staleness).
class DtrEqClass : public sim::EvictionHeuristic {
 public:
  std::string_view name() const override { return "dtr-eqclass"; }
  EvictionFeatures features() const override { return {.regions = false, .eq_classes = true}; }
  double score(const EvictionCandidate& c) const override {
    return sim::per_byte_per_staleness(c.compute_ns + c.eqclass_compute_ns, c);
  }
};

// h_DTR^local: compute / (size * staleness).
class DtrLocal : public sim::EvictionHeuristic {
 public:
  std::string_view name() const override { return "dtr-local"; }
  EvictionFeatures features() const override { return {}; }
  double score(const EvictionCandidate& c) const override {
    return sim::per_byte_per_staleness(c.compute_ns, c);
  }
};

// h_MSPS: (compute + region_rev) / size, no staleness.
class Msps : public sim::EvictionHeuristic {
 public:
  std::string_view name() const override { return "msps"; }
  EvictionFeatures features() const override { return {.regions = true, .eq_classes = false}; }
  double score(const EvictionCandidate& c) const override {
    return sim::python_true_divide(c.compute_ns + c.region_rev_compute_ns, c.size_bytes);
  }
};

// h_LRU: the last access time itself (-inf if never accessed).
class Lru : public sim::EvictionHeuristic {
 public:
  std::string_view name() const override { return "lru"; }
  EvictionFeatures features() const override { return {}; }
  double score(const EvictionCandidate& c) const override {
    return c.last_access_ns == EvictionCandidate::kNeverAccessed ? -std::numeric_limits<double>::infinity()
                                                                 : static_cast<double>(c.last_access_ns);
  }
};

// h_size: 1 / size.
class Largest : public sim::EvictionHeuristic {
 public:
  std::string_view name() const override { return "largest"; }
  EvictionFeatures features() const override { return {}; }
  double score(const EvictionCandidate& c) const override { return sim::python_true_divide(1, c.size_bytes); }
};

template <typename H>
std::unique_ptr<sim::EvictionHeuristic> make() {
  return std::make_unique<H>();
}

Registry<DtrHeuristicInfo> build() {
  Registry<DtrHeuristicInfo> r("DTR heuristic");
  r.add({"dtr", "h_DTR: (compute + evicted neighbourhood compute) / (bytes x staleness)", "DTR",
         "(compute + region + region_rev) / (bytes x staleness)", make<Dtr>});
  r.add({"dtr-eqclass", "h_DTR with neighbourhoods as union-find classes of evicted tensors", "DTREqClass",
         "(compute + distinct adjacent classes) / (bytes x staleness)", make<DtrEqClass>});
  r.add({"dtr-local", "compute of own op / (bytes x staleness)", "DTRLocal", "compute / (bytes x staleness)",
         make<DtrLocal>});
  r.add({"msps", "(compute + evicted ancestors' compute) / bytes", "MSPS", "(compute + region_rev) / bytes",
         make<Msps>});
  r.add({"lru", "least recently accessed", "LRU", "last access", make<Lru>});
  r.add({"largest", "largest tensor", "LargestStorage", "1 / bytes", make<Largest>});
  return r;
}

}  // namespace

const Registry<DtrHeuristicInfo>& dtr_heuristics() {
  static const Registry<DtrHeuristicInfo> registry = build();
  return registry;
}

std::unique_ptr<sim::EvictionHeuristic> make_dtr_heuristic(std::string_view name) {
  return dtr_heuristics().create(name);
}

}  // namespace mutwo::policies
