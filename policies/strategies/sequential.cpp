// sequential: each model alone (width 1), plain schedule, one after another (policies/strategy.hpp).
#include <fmt/format.h>

#include "policies/plain_schedule.hpp"
#include "policies/strategy.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {
namespace {

StrategyOutcome run_sequential(const StrategyContext& ctx) {
  std::vector<RunFigures> runs;
  std::vector<std::vector<int32_t>> sizes;
  LargestRun largest;
  for (size_t a = 0; a < ctx.config->architectures.size(); ++a) {
    const int32_t count = ctx.config->architectures[a].count;
    ir::Schedule s = build_plain_schedule({ctx.step_graph(a, 1)});
    const RunFigures f = measure_schedule(s, *ctx.cost, ctx.memory_limit_bytes, ctx.host_mode);
    runs.insert(runs.end(), static_cast<size_t>(count), f);
    sizes.emplace_back(static_cast<size_t>(count), 1);
    largest.offer(f, std::move(s));
  }
  StrategyOutcome out;
  out.row = combine_runs(runs, ctx.samples_per_step);
  out.row.strategy = "sequential";
  out.row.partition = partition_label(*ctx.config, sizes);
  out.row.policy = "none";
  out.row.note = fmt::format("{} runs of one model", runs.size());
  out.schedule = std::move(largest.schedule);
  out.schedule_is_whole_step = runs.size() == 1;
  return out;
}

void register_sequential(StrategyRegistry& registry) {
  registry.add(
      {"sequential", "one model at a time, each alone at its batch, plain schedule (no memory optimisation)",
       [](const StrategyContext& c) -> std::optional<StrategyOutcome> { return run_sequential(c); }});
}

[[maybe_unused]] const bool kRegistered = Plugins<StrategyRegistry>::add(10, register_sequential);

}  // namespace
}  // namespace mutwo::policies
