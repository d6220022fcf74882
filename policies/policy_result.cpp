#include "policies/policy_result.hpp"

#include <fmt/format.h>

#include "ir/schedule_check.hpp"
#include "sim/simulator.hpp"
#include "support/error.hpp"

namespace mutwo::policies {

void check_policy_input(const PolicyInput& input, std::string_view policy) {
  if (input.base == nullptr) throw Error(fmt::format("policy '{}': input field 'base' is null", policy));
  if (input.cost == nullptr) throw Error(fmt::format("policy '{}': input field 'cost' is null", policy));
  if (input.memory_limit_bytes <= 0) {
    throw Error(fmt::format("policy '{}': input field 'memory_limit_bytes' = {} must be > 0", policy,
                            input.memory_limit_bytes));
  }
}

bool better_result(const PolicyResult& a, const PolicyResult& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.feasible ? a.step_time_ns < b.step_time_ns : a.peak_bytes < b.peak_bytes;
}

PolicyResult evaluate_schedule(ir::Schedule schedule, const PolicyInput& input, std::string note) {
  ir::validate_schedule(schedule);
  sim::SimOptions options;
  options.memory_limit_bytes = input.memory_limit_bytes;
  options.continue_past_limit = true;  // an OOM's peak is the smallest limit this schedule meets
  options.host_mode = input.host_mode;
  PolicyResult r;
  r.prediction = sim::simulate(schedule, *input.cost, options);
  r.note = std::move(note);
  r.peak_bytes = r.prediction.peak_bytes;
  r.feasible = !r.prediction.oom;
  r.step_time_ns = r.feasible ? r.prediction.step_time_ns : 0;
  r.schedule = std::move(schedule);
  return r;
}

PolicyResult policy_result(ir::Schedule schedule, const sim::Prediction& unlimited, const PolicyInput& input,
                           std::string note) {
  PolicyResult r;
  r.prediction = unlimited;
  r.note = std::move(note);
  r.peak_bytes = unlimited.peak_bytes;
  r.feasible = !unlimited.oom && unlimited.peak_bytes <= input.memory_limit_bytes;
  r.step_time_ns = r.feasible ? unlimited.step_time_ns : 0;
  if (!r.feasible) {  // as evaluate_schedule reports it: out of memory at the input's limit
    r.prediction.oom = true;
    r.prediction.memory_limit_bytes = input.memory_limit_bytes;
  }
  r.schedule = std::move(schedule);
  return r;
}

}  // namespace mutwo::policies
