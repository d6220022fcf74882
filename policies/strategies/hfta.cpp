// hfta (HFTA, Wang et al., MLSys 2021), the reference strategy: per architecture the largest width w
// whose plain fused step fits, then ceil(n / w) groups (w, w, ..., the rest) one after another.
// Assumes the plain peak grows with the width (binary search over w).
#include <fmt/format.h>

#include "policies/plain_schedule.hpp"
#include "policies/strategy.hpp"
#include "support/plugins.hpp"

namespace mutwo::policies {
namespace {

StrategyOutcome run_hfta(const StrategyContext& ctx) {
  auto plain = [&](size_t a, int32_t width) { return build_plain_schedule({ctx.step_graph(a, width)}); };
  std::vector<RunFigures> runs;
  std::vector<std::vector<int32_t>> sizes;
  LargestRun largest;
  bool all_fit = true;
  for (size_t a = 0; a < ctx.config->architectures.size(); ++a) {
    const int32_t count = ctx.config->architectures[a].count;
    // Largest fitting width by binary search: fits(lo) holds (or lo = 0), fits(hi + 1) fails.
    std::vector<std::optional<RunFigures>> figures(static_cast<size_t>(count) + 1);
    auto figures_at = [&](int32_t w) -> const RunFigures& {
      if (!figures[w])
        figures[w] = measure_schedule(plain(a, w), *ctx.cost, ctx.memory_limit_bytes, ctx.host_mode);
      return *figures[w];
    };
    int32_t lo = 0;
    int32_t hi = count;
    while (lo < hi) {
      const int32_t mid = lo + (hi - lo + 1) / 2;
      if (figures_at(mid).feasible) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    if (lo == 0) {
      // Not even one model fits: report the single model's plan and its smallest limit.
      all_fit = false;
      runs.push_back(figures_at(1));
      sizes.push_back(std::vector<int32_t>(static_cast<size_t>(count), 1));
      largest.offer(figures_at(1), plain(a, 1));
      continue;
    }
    const int32_t width = lo;
    std::vector<int32_t> groups(static_cast<size_t>(count / width), width);
    if (count % width != 0) groups.push_back(count % width);
    for (int32_t g : groups) runs.push_back(figures_at(g));
    sizes.push_back(groups);
    largest.offer(figures_at(width), plain(a, width));
  }
  StrategyOutcome out;
  out.row = combine_runs(runs, ctx.samples_per_step);
  out.row.strategy = "hfta";
  out.row.partition = partition_label(*ctx.config, sizes);
  out.row.policy = "none";
  out.row.note =
      all_fit ? fmt::format("{} fused group{} one after another", runs.size(), runs.size() == 1 ? "" : "s")
              : std::string("one model alone does not fit");
  out.schedule = std::move(largest.schedule);
  out.schedule_is_whole_step = runs.size() == 1;
  return out;
}

void register_hfta(StrategyRegistry& registry) {
  registry.add({"hfta",
                "HFTA (Wang et al., MLSys 2021): fuse as many models as fit, groups one after another, no "
                "memory optimisation",
                [](const StrategyContext& c) -> std::optional<StrategyOutcome> { return run_hfta(c); },
                /*reference=*/true});
}

[[maybe_unused]] const bool kRegistered = Plugins<StrategyRegistry>::add(20, register_hfta);

}  // namespace
}  // namespace mutwo::policies
