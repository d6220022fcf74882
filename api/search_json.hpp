#pragma once
// A single-GPU search's report as JSON: what `mutwo search --json` prints and `mutwo.search()`
// returns (rows usable as a pandas DataFrame).
#include <string>

#include <nlohmann/json.hpp>

#include "costmodel/device_spec.hpp"
#include "policies/search.hpp"

namespace mutwo::api {

// device {name, memory_bytes}, cost_source, memory_limit_bytes, samples_per_step, feasible,
// smallest_limit_bytes, rows (strategy, partition, policy, feasible, peak_bytes, pruned, runs, note,
// lean_ops; and for feasible rows step_time_ns, samples_per_s, speedup_over_hfta, bytes swapped,
// model_state, optimizer, host_optimizer_ns, recompute_ns, compute_stall_ns), lean_effects, stats.
nlohmann::json search_json(const policies::SearchReport& report, const costmodel::DeviceSpec& device,
                           const std::string& cost_source);

}  // namespace mutwo::api
