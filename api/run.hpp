#pragma once
// A measured run (`mutwo run`, `mutwo.run()`): the pipeline is experiments::run_pipeline; this is
// the result as the fields `mutwo run --json` prints and the Python module returns.
#include <string>

#include <nlohmann/json.hpp>

#include "experiments/run_pipeline.hpp"

namespace mutwo::api {

// run_id (null unless stored), database (null when `db` is empty), schedule {graph, policy,
// instructions, multiplexed, model_state, optimizer, samples_per_step}, device, gpu,
// memory_limit_bytes, prediction {step_time_ns, peak_bytes, oom, host_mode, host_busy_ns,
// host_bound_idle_ns}, measurement {step_time_ns, step_times_ns, peak_bytes, peak_source,
// accounted_peak_bytes, iterations, wrapped, warmup_iterations, oom, oom_message, first_losses,
// losses}.
nlohmann::json run_json(const experiments::RunOutcome& out, const std::string& db);

}  // namespace mutwo::api
