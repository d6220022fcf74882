#include "policies/strategy.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "policies/plain_schedule.hpp"
#include "sim/simulator.hpp"

namespace mutwo::policies {
namespace {

// The policy the HFTA+Capuchin baseline plans its fused sub-arrays with (Peng et al., ASPLOS 2020).
constexpr std::string_view kHftaCapuchinPolicy = "capuchin";

}  // namespace

const StrategyRegistry& builtin_strategies() {
  static const StrategyRegistry registry = [] {
    StrategyRegistry r;
    r.add({"sequential",
           "one model at a time, each alone at its batch, plain schedule (no memory optimisation)",
           [](const StrategyContext& c) -> std::optional<StrategyOutcome> { return run_sequential(c); }});
    r.add({"hfta",
           "HFTA (Wang et al., MLSys 2021): fuse as many models as fit, groups one after another, no "
           "memory optimisation",
           [](const StrategyContext& c) -> std::optional<StrategyOutcome> { return run_hfta(c); },
           /*reference=*/true});
    r.add({"hfta+capuchin", "all models of an architecture fused in one sub-array, planned by capuchin",
           run_hfta_capuchin});
    r.add({"mutwo",
           "μ-TWO (Purandare et al., MLSys 2023): every sub-array partition x policy, multiplexed, best "
           "feasible",
           {}});
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

namespace {

ir::Schedule plain(const ir::Graph& graph) {
  return build_plain_schedule({graph});
}

// Keeps the schedule of the run with the highest peak (the one the limit binds).
struct LargestRun {
  int64_t peak_bytes = -1;
  std::optional<ir::Schedule> schedule;

  void offer(const RunFigures& f, ir::Schedule s) {
    if (f.peak_bytes <= peak_bytes) return;
    peak_bytes = f.peak_bytes;
    schedule = std::move(s);
  }
};

}  // namespace

StrategyOutcome run_sequential(const StrategyContext& ctx) {
  std::vector<RunFigures> runs;
  std::vector<std::vector<int32_t>> sizes;
  LargestRun largest;
  for (size_t a = 0; a < ctx.config->architectures.size(); ++a) {
    const int32_t count = ctx.config->architectures[a].count;
    ir::Schedule s = plain(ctx.step_graph(a, 1));
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

StrategyOutcome run_hfta(const StrategyContext& ctx) {
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
        figures[w] = measure_schedule(plain(ctx.step_graph(a, w)), *ctx.cost, ctx.memory_limit_bytes, ctx.host_mode);
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
      largest.offer(figures_at(1), plain(ctx.step_graph(a, 1)));
      continue;
    }
    const int32_t width = lo;
    std::vector<int32_t> groups(static_cast<size_t>(count / width), width);
    if (count % width != 0) groups.push_back(count % width);
    for (int32_t g : groups) runs.push_back(figures_at(g));
    sizes.push_back(groups);
    largest.offer(figures_at(width), plain(ctx.step_graph(a, width)));
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

std::optional<StrategyOutcome> run_hfta_capuchin(const StrategyContext& ctx) {
  if (!ctx.registry->contains(kHftaCapuchinPolicy)) return std::nullopt;
  const std::unique_ptr<MemoryPolicy> capuchin = ctx.registry->create(kHftaCapuchinPolicy);
  std::vector<RunFigures> runs;
  std::vector<std::vector<int32_t>> sizes;
  LargestRun largest;
  for (size_t a = 0; a < ctx.config->architectures.size(); ++a) {
    const int32_t count = ctx.config->architectures[a].count;
    const ir::Schedule base = plain(ctx.step_graph(a, count));
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

}  // namespace mutwo::policies
