#pragma once
// Which models of the array each sub-array trains (SubArray::first_model): a plan may run sub-arrays
// out of the user's order, and per-model settings, weights and losses follow the user's index.
#include <vector>

#include "ir/schedule.hpp"

namespace mutwo::ir {

// Either no sub-array names its first model, or together they number each model of the array once;
// throws ScheduleError naming the sub-array and field otherwise.
void check_model_numbering(const std::vector<SubArray>& sub_arrays);

}  // namespace mutwo::ir
