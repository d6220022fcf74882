#pragma once
// The plain schedule: every op once in program order on the compute stream, each non-persistent
// tensor freed right after its last reader. No swaps, no recomputation: the "none" baseline. And
// its generalisation to any topological compute order (the multiplexed schedule uses it).
#include <string>
#include <vector>

#include "ir/schedule.hpp"

namespace mutwo::policies {

// Concatenates the sub-array graphs (ir::concat_graphs) and emits, on stream 0, one compute
// per op in `order` (op ids of the concatenated graph; a permutation of them in which every op
// comes after the producers of its inputs). Right after the op that last reads, in `order`, an
// activation, temporary, loss, input or label, a free of it; a produced tensor no op reads is
// freed right after its producer, and an input or label no op reads before the first compute.
// Several frees after one op go in ascending tensor id. Weights, gradients and optimizer state are
// never freed. The result validates (ir::validate_schedule). Throws mutwo::Error naming
// the op on an order that is not a topological permutation ("order position 3: op 7 's0/fc2'
// reads tensor 5 's0/h' before its producer op 6 's0/fc1' runs"), GraphError on no parts.
ir::Schedule build_ordered_schedule(std::vector<ir::Graph> parts, const std::vector<ir::OpId>& order,
                                    std::string policy = "none");

// The same over a graph already concatenated (concat_graphs' result and its op ranges), saving
// the second concatenation when the caller needed the concatenated graph to pick the order.
ir::Schedule build_ordered_schedule(ir::Graph concatenated, std::vector<ir::SubArray> sub_arrays,
                                    const std::vector<ir::OpId>& order, std::string policy = "none");

// build_ordered_schedule in program order: the sub-arrays one after another.
ir::Schedule build_plain_schedule(std::vector<ir::Graph> parts, std::string policy = "none");

}  // namespace mutwo::policies
