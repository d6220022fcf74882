// hfta+capuchin: per architecture all models fused into one sub-array, planned by the capuchin
// policy (Peng et al., ASPLOS 2020); several architectures run one after another. Absent from a
// search (nullopt) when capuchin is not registered.
#include <string_view>

#include "policies/plain_schedule.hpp"
#include "policies/strategy.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {
namespace {

// The policy the HFTA+Capuchin baseline plans its fused sub-arrays with.
constexpr std::string_view kHftaCapuchinPolicy = "capuchin";

std::optional<StrategyOutcome> run_hfta_capuchin(const StrategyContext& ctx) {
  if (!ctx.registry->contains(kHftaCapuchinPolicy)) return std::nullopt;
  const std::unique_ptr<MemoryPolicy> capuchin = ctx.registry->create(kHftaCapuchinPolicy);
  std::vector<RunFigures> runs;
  std::vector<std::vector<int32_t>> sizes;
  LargestRun largest;
  for (size_t a = 0; a < ctx.config->architectures.size(); ++a) {
    const int32_t count = ctx.config->architectures[a].count;
    const ir::Schedule base = build_plain_schedule({ctx.step_graph(a, count)});
    PolicyInput input;
    input.base = &base;
    input.cost = ctx.cost;
    input.memory_limit_bytes = ctx.memory_limit_bytes;
    input.host_mode = ctx.host_mode;
    PolicyResult result = capuchin->plan(input);
    const RunFigures f = figures_at_limit(result.prediction);  // the policy simulated it already
    runs.push_back(f);
    sizes.push_back({count});
    largest.offer(f, std::move(result.schedule));
  }
  StrategyOutcome out;
  out.row = combine_runs(runs, ctx.samples_per_step);
  out.row.strategy = "hfta+capuchin";
  out.row.partition = partition_label(*ctx.config, sizes);
  out.row.policy = kHftaCapuchinPolicy;
  out.schedule = std::move(largest.schedule);
  out.schedule_is_whole_step = runs.size() == 1;
  return out;
}

void register_hfta_capuchin(StrategyRegistry& registry) {
  registry.add({"hfta+capuchin", "all models of an architecture fused in one sub-array, planned by capuchin",
                run_hfta_capuchin});
}

[[maybe_unused]] const bool kRegistered = Plugins<StrategyRegistry>::add(30, register_hfta_capuchin);

}  // namespace
}  // namespace mutwo::policies
