#pragma once
// Interleaving two ordered lists of timed work so both span one window (μ-TWO, Purandare et al.,
// MLSys 2023, §3.2 multiplexing): used for one sub-array's backward with the next one's forward
// (policies/multiplex.hpp) and for the last sub-array's backward with the first one's next forward
// across an iteration boundary (ir/unrolled_schedule.hpp).
#include <cstdint>
#include <vector>

namespace mutwo::ir {

// Merges two id lists, keeping each list's order, by the midpoint of each item's share of its own
// list's total time: the next item of a is taken while (start_a + d_a / 2) / total_a <=
// (start_b + d_b / 2) / total_b, so both lists span the whole window (a list of zero total time
// uses (k + 1/2) / size instead). Ties go to a. Spreading the forward over the whole backward (not
// running it as fast as it would alone) keeps the forward's activations growing while the
// backward frees its own. Throws mutwo::Error when a list and its durations differ in size or a
// duration is negative.
std::vector<int32_t> merge_by_progress(const std::vector<int32_t>& a, const std::vector<int64_t>& a_ns,
                                       const std::vector<int32_t>& b, const std::vector<int64_t>& b_ns);

}  // namespace mutwo::ir
