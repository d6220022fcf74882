#pragma once
// The results-database fields `run` and `profile` fill alike: the array (or schedule file) that ran,
// its sub-arrays, policy and sizes, where it ran, which mutwo, and the schedule's hash.
#include <string>

#include "cli/array_flags.hpp"
#include "cli/exec_flags.hpp"
#include "experiments/records.hpp"
#include "profiles/schedule.hpp"

namespace mutwo::cli {

experiments::RunRecord base_run_record(std::string kind, const ArrayFlags& array,
                                       const profiles::Schedule& schedule, const ExecTarget& target);

}  // namespace mutwo::cli
