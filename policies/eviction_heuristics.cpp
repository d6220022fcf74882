#include "policies/eviction_heuristics.hpp"

#include <limits>

#include "policies/dtr_heuristics.hpp"

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

}  // namespace

std::unique_ptr<sim::EvictionHeuristic> make_eviction_heuristic(std::string_view name) {
  if (name == "dtr") return std::make_unique<Dtr>();
  if (name == "dtr-eqclass") return std::make_unique<DtrEqClass>();
  if (name == "dtr-local") return std::make_unique<DtrLocal>();
  if (name == "msps") return std::make_unique<Msps>();
  if (name == "lru") return std::make_unique<Lru>();
  if (name == "largest") return std::make_unique<Largest>();
  throw_unknown_dtr_heuristic(name);
}

std::string_view simrd_heuristic_name(std::string_view name) {
  if (name == "dtr") return "DTR";
  if (name == "dtr-eqclass") return "DTREqClass";
  if (name == "dtr-local") return "DTRLocal";
  if (name == "msps") return "MSPS";
  if (name == "lru") return "LRU";
  if (name == "largest") return "LargestStorage";
  throw_unknown_dtr_heuristic(name);
}

}  // namespace mutwo::policies
