#pragma once
// The six eviction heuristics of DTR's simulator simrd (heuristic/dtr.py, heuristic/etc.py) as
// sim::EvictionHeuristic, for sim::replay_dtr_log: scores from the figures the replay engine
// maintains, divided exactly as simrd's Python divides. Names and descriptions are those of
// policies/dtr_heuristics (dtr, dtr-eqclass, dtr-local, msps, lru, largest), which applies the same
// formulas to mutwo's own graphs.
#include <memory>
#include <string_view>

#include "sim/eviction_heuristic.hpp"

namespace mutwo::policies {

// Throws UnknownNameError "unknown DTR heuristic 'x'; valid: dtr, ...".
std::unique_ptr<sim::EvictionHeuristic> make_eviction_heuristic(std::string_view name);

// simrd's class name of a heuristic ("dtr" -> "DTR", "largest" -> "LargestStorage").
std::string_view simrd_heuristic_name(std::string_view name);

}  // namespace mutwo::policies
