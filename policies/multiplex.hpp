#pragma once
// The multiplexed base schedule (μ-TWO, Purandare et al., MLSys 2023 ("μ-TWO: 3x faster multi-model
// training with orchestration and memory optimization"), §3.2 multiplexing): the backward of one
// sub-array runs interleaved with the forward of the next on the one compute stream, so that one
// sub-array's swaps overlap the other's compute.
//
// Compute order for sub-arrays 1..n: FW_1, [BW_1 ‖ FW_2], [BW_2 ‖ FW_3], ..., [BW_{n-1} ‖ FW_n],
// BW_n, where BW_i is sub-array i's backward ops followed by its optimizer ops, and "‖" merges two
// op lists in proportion to their estimated progress (ir/merge_by_progress.hpp). One step is
// scheduled, so FW_1 and BW_n run un-overlapped on the compute stream within it. μ-TWO's steady
// state wraps the step around ([BW_n ‖ FW_1] of the next iteration, every phase with a partner):
// that is how iterations are unrolled with a boundary merge (ir/unrolled_schedule.hpp,
// `--wrap`), which both back ends run.
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/op_cost_model.hpp"
#include "ir/graph.hpp"
#include "ir/schedule.hpp"

namespace mutwo::policies {

// Sum of the cost model's op durations over the graph: its compute time on one stream.
int64_t estimated_step_ns(const ir::Graph& graph, const costmodel::OpCostModel& cost);

// A permutation of sub-array indices: ascending estimated step time, ties by index, so that
// neighbours (which the schedule pairs) have the closest step times. Apply it to the parts
// before build_multiplexed_schedule. Throws mutwo::Error on a negative time.
std::vector<int32_t> multiplex_order(const std::vector<int64_t>& step_time_ns);

// The multiplexed compute order over the concatenated graph's op ids (ir::concat_graphs of
// parts, in the given order), durations from `cost` on that graph. Forward-phase ops form FW_i,
// backward then optimizer ops form BW_i, each in program order.
std::vector<ir::OpId> multiplexed_op_order(const ir::Graph& concatenated,
                                           const std::vector<ir::SubArray>& sub_arrays,
                                           const costmodel::OpCostModel& cost);

// The multiplexed base schedule (see memory_policy.hpp): build_ordered_schedule over
// multiplexed_op_order. Parts run in the given order (reorder them with multiplex_order first).
// With one part it equals build_plain_schedule. Throws GraphError on no parts.
ir::Schedule build_multiplexed_schedule(std::vector<ir::Graph> parts, const costmodel::OpCostModel& cost,
                                        std::string policy = "none");

}  // namespace mutwo::policies
