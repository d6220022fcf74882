#pragma once
// The plain schedule: every op once in program order on the compute stream, each non-persistent
// tensor freed right after its last reader. No swaps, no recomputation: the "none" baseline.
#include <string>
#include <vector>

#include "profiles/schedule.hpp"

namespace mutwo::policies {

// Concatenates the sub-array training-step graphs (run one after another, see
// profiles::concat_graphs) and emits, on stream 0, one compute per op in program order. Right
// after the op that last reads an activation, temporary, loss, input or label, a free of it; a
// produced tensor no op reads (a loss, a dead output) is freed right after its producer, and an
// input or label no op reads before the first compute. Several frees after one op go in
// ascending tensor id. Weights, gradients and optimizer state are never freed. The result
// validates (profiles::validate_schedule).
profiles::Schedule build_plain_schedule(std::vector<profiles::Graph> parts, std::string policy = "none");

}  // namespace mutwo::policies
