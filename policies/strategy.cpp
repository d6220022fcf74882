#include "policies/strategy.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "sim/simulator.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {

const StrategyRegistry& builtin_strategies() {
  static const StrategyRegistry registry = [] {
    StrategyRegistry r;
    Plugins<StrategyRegistry>::register_all(r);
    return r;
  }();
  return registry;
}

const StrategyInfo& StrategyRegistry::reference() const {
  for (const StrategyInfo& s : entries()) {
    if (s.reference) return s;
  }
  throw Error("strategies: none is the reference");
}

const StrategyInfo& StrategyRegistry::searched() const {
  for (const StrategyInfo& s : entries()) {
    if (!s.run) return s;
  }
  throw Error("strategies: none is the partition search's");
}

std::string partition_label(const SearchConfig& config, const std::vector<std::vector<int32_t>>& sizes) {
  ArrayPartition partition;
  for (size_t a = 0; a < sizes.size(); ++a) {
    for (int32_t w : sizes[a]) partition.push_back({config.architectures[a].model, w});
  }
  return partition_text(partition);
}

RunFigures run_figures(const sim::Prediction& p) {
  RunFigures f;
  f.feasible = !p.oom;
  f.step_time_ns = p.oom ? 0 : p.step_time_ns;
  f.peak_bytes = p.peak_bytes;
  f.bytes_swapped = p.bytes_swapped_out + p.bytes_swapped_in;
  f.state_bytes_swapped = p.state_bytes_swapped_out + p.state_bytes_swapped_in;
  f.recompute_ns = p.recompute_ns;
  f.compute_stall_ns = p.compute_stall_ns;
  for (size_t stream = 0; stream < p.busy_ns.size(); ++stream) {
    (ir::is_compute_stream(static_cast<int32_t>(stream)) ? f.compute_ns : f.swap_ns) += p.busy_ns[stream];
  }
  f.host_optimizer_ns = p.host_optimizer_ns;  // its stream is no device compute stream
  f.compute_ns -= p.recompute_ns + p.host_optimizer_ns;
  return f;
}

RunFigures figures_at_limit(const sim::Prediction& p) {
  RunFigures f = run_figures(p);  // after an OOM the run went on: its peak is the smallest limit met
  if (p.oom) {
    f.feasible = false;
    f.step_time_ns = 0;
  }
  return f;
}

RunFigures measure_schedule(const ir::Schedule& schedule, const costmodel::OpCostModel& cost,
                            int64_t memory_limit_bytes, sim::HostMode host_mode) {
  sim::SimOptions options;
  options.host_mode = host_mode;
  options.memory_limit_bytes = memory_limit_bytes;
  options.continue_past_limit = true;  // one run gives both the step and, on OOM, the peak needed
  return figures_at_limit(sim::simulate(schedule, cost, options));
}

SearchRow combine_runs(const std::vector<RunFigures>& runs, int64_t samples_per_step) {
  SearchRow row;
  row.feasible = !runs.empty();
  row.runs = static_cast<int32_t>(runs.size());
  for (const RunFigures& r : runs) {
    row.feasible = row.feasible && r.feasible;
    row.step_time_ns += r.step_time_ns;
    row.peak_bytes = std::max(row.peak_bytes, r.peak_bytes);
    row.bytes_swapped += r.bytes_swapped;
    row.state_bytes_swapped += r.state_bytes_swapped;
    row.recompute_ns += r.recompute_ns;
    row.compute_stall_ns += r.compute_stall_ns;
    row.compute_ns += r.compute_ns;
    row.swap_ns += r.swap_ns;
    row.host_optimizer_ns += r.host_optimizer_ns;
  }
  if (!row.feasible) {
    row.step_time_ns = 0;
  } else if (row.step_time_ns > 0) {
    row.samples_per_s = static_cast<double>(samples_per_step) * 1e9 / static_cast<double>(row.step_time_ns);
  }
  return row;
}

}  // namespace mutwo::policies
