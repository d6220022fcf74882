#include "policies/policy_result.hpp"

#include <fmt/format.h>

#include "profiles/error.hpp"
#include "sim/simulator.hpp"

namespace mutwo::policies {

void check_policy_input(const PolicyInput& input, std::string_view policy) {
  if (input.base == nullptr) throw Error(fmt::format("policy '{}': input field 'base' is null", policy));
  if (input.cost == nullptr) throw Error(fmt::format("policy '{}': input field 'cost' is null", policy));
  if (input.memory_limit_bytes <= 0) {
    throw Error(fmt::format("policy '{}': input field 'memory_limit_bytes' = {} must be > 0", policy,
                            input.memory_limit_bytes));
  }
}

PolicyResult evaluate_schedule(profiles::Schedule schedule, const PolicyInput& input, std::string note) {
  profiles::validate_schedule(schedule);
  sim::SimOptions options;
  options.memory_limit_bytes = input.memory_limit_bytes;
  const sim::Prediction p = sim::simulate(schedule, *input.cost, options);
  PolicyResult r;
  r.note = std::move(note);
  if (p.oom) {
    options.memory_limit_bytes = -1;  // how much this schedule needs
    r.peak_bytes = sim::simulate(schedule, *input.cost, options).peak_bytes;
    r.feasible = false;
  } else {
    r.peak_bytes = p.peak_bytes;
    r.step_time_ns = p.step_time_ns;
    r.feasible = true;
  }
  r.schedule = std::move(schedule);
  return r;
}

}  // namespace mutwo::policies
