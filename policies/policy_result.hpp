#pragma once
// Shared by every policy: simulate a finished schedule at the input's limit and fill a PolicyResult.
#include <string>

#include "policies/memory_policy.hpp"
#include "sim/prediction.hpp"

namespace mutwo::policies {

// Validates the schedule (ir::validate_schedule), simulates it with the input's cost model
// and limit, and returns it with feasible / peak_bytes / step_time_ns set. On OOM, peak_bytes is
// the schedule's peak with no limit (the smallest limit this schedule meets).
// Simulates once (continuing past the limit, so an infeasible schedule's peak comes from the same
// run) and keeps the prediction in PolicyResult::prediction.
PolicyResult evaluate_schedule(ir::Schedule schedule, const PolicyInput& input, std::string note);

// The result of a schedule whose unlimited prediction is already known (a dynamic policy's run):
// feasible when it did not run out of memory and its peak is within the input's limit.
PolicyResult policy_result(ir::Schedule schedule, const sim::Prediction& unlimited, const PolicyInput& input,
                           std::string note);

// Whether plan a beats plan b: feasible first, then the faster; of two infeasible plans, the one
// meeting the smaller limit (peak_bytes). Ties are not better.
bool better_result(const PolicyResult& a, const PolicyResult& b);

// Throws mutwo::Error naming the field when the input has a null pointer or a limit <= 0.
void check_policy_input(const PolicyInput& input, std::string_view policy);

}  // namespace mutwo::policies
