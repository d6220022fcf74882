#pragma once
// The eviction heuristics of Dynamic Tensor Rematerialization (Kirisame et al., ICLR 2021), as
// DTR's own simulator simrd computes them (uwsampl/dtr-prototype, simrd/heuristic/dtr.py and
// etc.py): one table serving the `dtr` policies (the engine's dynamic eviction on mutwo's graphs)
// and `mutwo replay` (simrd's runtime over DTR's logs). Each is a sim::EvictionHeuristic scoring
// one candidate from the figures the engine keeps; scores divide exactly as simrd's Python divides.
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sim/eviction_heuristic.hpp"
#include "support/registry.hpp"

namespace mutwo::policies {

struct DtrHeuristicInfo {
  std::string name;         // "dtr"
  std::string description;  // one line
  std::string simrd_name;   // simrd's class: "DTR"
  std::string formula;      // "(compute + region + region_rev) / (bytes x staleness)"
  std::function<std::unique_ptr<sim::EvictionHeuristic>()> create;
};

// dtr, dtr-eqclass, dtr-local, msps, lru, largest (simrd's DTR, DTREqClass, DTRLocal, MSPS, LRU,
// LargestStorage). Unknown names: UnknownNameError "unknown DTR heuristic 'x'; valid: dtr, ...".
const Registry<DtrHeuristicInfo>& dtr_heuristics();
std::unique_ptr<sim::EvictionHeuristic> make_dtr_heuristic(std::string_view name);

}  // namespace mutwo::policies
