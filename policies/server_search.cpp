#include "policies/server_search.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "costmodel/server_routes.hpp"
#include "policies/layer_packs.hpp"
#include "policies/search.hpp"
#include "policies/server_lift.hpp"
#include "policies/server_schemes.hpp"
#include "sim/server_simulator.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::policies {

using ir::ServerSchedule;

namespace {

ir::Graph training_step(const ArchitectureCount& a, const transforms::OptimizerConfig& optimizer) {
  zoo::ModelConfig config = a.config;
  config.width = 1;
  return transforms::build_training_step(zoo::build_model(a.model, config), optimizer);
}

// Fills a row's server-side figures from a simulation.
void fill(ServerSearchRow& row, const sim::ServerPrediction& p, const costmodel::ServerRoutes& routes) {
  row.step_time_ns = p.step_time_ns;
  row.samples_per_s = p.step_time_ns > 0 ? static_cast<double>(row.samples_per_step) * 1e9 / static_cast<double>(p.step_time_ns) : 0;
  for (const int64_t b : p.swap_bytes) row.swap_bytes += b;
  for (const int64_t b : p.peer_bytes) row.peer_bytes += b;
  row.compute_stall_ns = p.compute_stall_ns;
  for (const auto& g : p.gpus) row.peak_bytes = std::max(row.peak_bytes, g.peak_bytes);
  for (size_t r = 0; r < p.resource_utilisation.size(); ++r) {
    if (p.resource_utilisation[r] > row.busiest_link_share) {
      row.busiest_link_share = p.resource_utilisation[r];
      row.busiest_link = routes.resource_name(static_cast<int32_t>(r));
    }
  }
}

bool better(const ServerSearchRow& a, const ServerSearchRow& b) {
  if (a.feasible != b.feasible) return a.feasible;
  if (a.feasible) return a.samples_per_s > b.samples_per_s;
  return a.peak_bytes < b.peak_bytes;
}

struct Candidate {
  ServerSearchRow row;
  ServerSchedule schedule;
  std::vector<ServerGpuPart> parts;  // array placements, without their schedules (set for the winner)
  std::vector<const SearchReport*> part_reports;  // per part: its share's single-GPU search (the memo's)
};

// The single-GPU searches of an array's shares, by share (one per distinct share).
using ShareMemo = std::map<std::vector<int32_t>, SearchReport>;

// One model: every scheme x GPU count x micro-batch count.
void search_schemes(const ServerSearchConfig& c, int64_t limit, std::vector<Candidate>& out, ServerSearchStats& stats) {
  const costmodel::ServerRoutes routes(c.server);
  const ArchitectureCount& a = c.array.architectures.front();
  const ir::Graph step = training_step(a, c.array.optimizer);
  int32_t forward_ops = 0;
  for (const ir::Op& op : step.ops) forward_ops += op.phase == ir::Phase::forward ? 1 : 0;
  std::vector<int32_t> gpu_counts;
  for (int32_t g = 1; g < c.server.gpu_count; g *= 2) gpu_counts.push_back(g);
  gpu_counts.push_back(c.server.gpu_count);
  std::vector<std::string> schemes = c.schemes;
  if (schemes.empty()) {
    for (const auto& s : builtin_server_schemes().schemes()) schemes.push_back(s.name);
  }
  std::vector<int32_t> pack_counts;
  for (const int32_t packs : c.packs) pack_counts.push_back(std::min(packs, forward_ops));
  std::sort(pack_counts.begin(), pack_counts.end());
  pack_counts.erase(std::unique(pack_counts.begin(), pack_counts.end()), pack_counts.end());
  for (const int32_t packs : pack_counts) {
    const PackedModel packed = pack_training_step(step, *c.array.cost, packs);
    for (const std::string& scheme : schemes) {
      const ServerSchemeInfo& info = builtin_server_schemes().find(scheme);
      for (const int32_t gpus : gpu_counts) {
        if (!info.data_parallel && gpus > packs) continue;
        for (const int32_t m : c.micro_batches) {
          Candidate cand;
          cand.schedule = build_server_schedule(scheme, packed, c.server, {gpus, m});
          const sim::ServerPrediction p = sim::simulate_server(cand.schedule, c.server, {.memory_limit_bytes = limit});
          ++stats.candidates;
          ServerSearchRow& row = cand.row;
          row.strategy = scheme;
          row.placement = fmt::format("{} GPU{}, M = {}, {} packs", gpus, gpus == 1 ? "" : "s", m, packs);
          row.plan = fmt::format("{} packs of {}", packs, a.model);
          row.gpus = gpus;
          row.micro_batches = m;
          row.samples_per_step = cand.schedule.samples_per_step;
          row.feasible = !p.oom;
          fill(row, p, routes);
          if (p.oom) row.note = p.oom_message;
          out.push_back(std::move(cand));
        }
      }
    }
  }
}

// Per GPU, how many models of each architecture: instances by single-model compute (descending,
// then architecture order) each onto the least loaded GPU (lowest index on ties).
std::vector<std::vector<int32_t>> place(const std::vector<ArchitectureCount>& archs, const std::vector<int64_t>& compute_ns,
                                        int32_t gpus, std::vector<int64_t>& load_ns) {
  std::vector<size_t> instances;
  for (size_t i = 0; i < archs.size(); ++i) instances.insert(instances.end(), static_cast<size_t>(archs[i].count), i);
  std::stable_sort(instances.begin(), instances.end(),
                   [&](size_t x, size_t y) { return compute_ns[x] > compute_ns[y]; });
  std::vector<std::vector<int32_t>> share(static_cast<size_t>(gpus), std::vector<int32_t>(archs.size(), 0));
  load_ns.assign(static_cast<size_t>(gpus), 0);
  for (const size_t i : instances) {
    const auto g = static_cast<size_t>(std::min_element(load_ns.begin(), load_ns.end()) - load_ns.begin());
    ++share[g][i];
    load_ns[g] += compute_ns[i];
  }
  return share;
}

std::string share_text(const std::vector<ArchitectureCount>& archs, const std::vector<int32_t>& share) {
  std::string text;
  for (size_t i = 0; i < archs.size(); ++i) {
    if (share[i] > 0) text += fmt::format("{}{}:{}", text.empty() ? "" : " + ", archs[i].model, share[i]);
  }
  return text.empty() ? "idle" : text;
}

// A model array spread over 1 .. N GPUs.
void search_placements(const ServerSearchConfig& c, int64_t limit, ShareMemo& memo, std::vector<Candidate>& out,
                       ServerSearchStats& stats) {
  const costmodel::ServerRoutes routes(c.server);
  const auto& archs = c.array.architectures;
  std::vector<int64_t> compute_ns;
  int32_t models = 0;
  for (const ArchitectureCount& a : archs) {
    const std::vector<int64_t> d =
        costmodel::op_durations_ns(*c.array.cost, training_step(a, c.array.optimizer));
    compute_ns.push_back(std::accumulate(d.begin(), d.end(), int64_t{0}));
    models += a.count;
  }
  struct Placement {
    int32_t gpus;
    int64_t bound_ns;
    std::vector<std::vector<int32_t>> share;
  };
  std::vector<Placement> placements;
  for (int32_t g = 1; g <= std::min(c.server.gpu_count, models); ++g) {
    std::vector<int64_t> load;
    auto share = place(archs, compute_ns, g, load);
    placements.push_back({g, *std::max_element(load.begin(), load.end()), std::move(share)});
  }
  std::stable_sort(placements.begin(), placements.end(),
                   [](const Placement& x, const Placement& y) { return x.bound_ns < y.bound_ns; });
  int64_t best_ns = 0;
  for (const Placement& pl : placements) {
    if (best_ns > 0 && best_ns < pl.bound_ns) {
      ++stats.placements_pruned;
      continue;
    }
    Candidate cand;
    ServerSearchRow& row = cand.row;
    row.strategy = "mutwo";
    row.gpus = pl.gpus;
    row.micro_batches = 1;
    ServerSchedule& s = cand.schedule;
    s.server = c.server.name;
    s.gpu_count = pl.gpus;
    s.scheme = "mutwo";
    s.initial_bytes.assign(static_cast<size_t>(pl.gpus), 0);
    bool feasible = true;
    bool lifted = true;
    int64_t alone_ns = 0;
    std::vector<std::string> shares;
    std::map<std::vector<int32_t>, int32_t> share_gpus;
    for (const auto& share : pl.share) ++share_gpus[share];
    for (int32_t g = 0; g < pl.gpus; ++g) {
      const auto& share = pl.share[static_cast<size_t>(g)];
      auto it = memo.find(share);
      if (it == memo.end()) {
        SearchConfig sc;
        for (size_t i = 0; i < archs.size(); ++i) {
          if (share[i] == 0) continue;
          ArchitectureCount a = archs[i];
          a.count = share[i];
          sc.architectures.push_back(std::move(a));
        }
        sc.optimizer = c.array.optimizer;
        sc.cost = c.array.cost;
        sc.memory_limit_bytes = limit;
        sc.policies = c.array.policies;
        sc.top = 1;
        sc.host_mode = c.array.host_mode;
        it = memo.emplace(share, run_search(sc)).first;
        ++stats.gpu_searches;
      }
      const SearchReport& r = it->second;
      if (!r.any_feasible()) {
        feasible = false;
        row.peak_bytes = std::max(row.peak_bytes, r.smallest_limit_bytes);
        continue;
      }
      const SearchRow& best = r.rows.front();
      ServerGpuPart& part = cand.parts.emplace_back();
      part.gpu = g;
      for (size_t i = 0; i < archs.size(); ++i) {
        if (share[i] == 0) continue;
        part.architectures.push_back(archs[i]);
        part.architectures.back().count = share[i];
      }
      part.strategy = best.strategy;
      part.partition = best.partition;
      part.policy = best.policy;
      part.step_time_ns = best.step_time_ns;
      part.peak_bytes = best.peak_bytes;
      cand.part_reports.push_back(&r);
      row.samples_per_step += r.samples_per_step;
      row.peak_bytes = std::max(row.peak_bytes, best.peak_bytes);
      alone_ns = std::max(alone_ns, best.step_time_ns);
      // Separate runs (one run's schedule kept of several) are priced per GPU alone.
      if (!r.best_schedule_is_whole_step) lifted = false;
      if (lifted) lift_schedule(*r.best_schedule, *c.array.cost, g, s, c.array.host_mode);
    }
    std::string loads;
    for (const auto& share : pl.share) loads += fmt::format("{}{}", loads.empty() ? "" : " | ", share_text(archs, share));
    row.placement = fmt::format("{} GPU{}: {}", pl.gpus, pl.gpus == 1 ? "" : "s", loads);
    for (const auto& [share, n] : share_gpus) {
      const SearchReport& r = memo.at(share);
      const std::string plan = r.any_feasible() ? fmt::format("{} {} {}", r.rows.front().strategy, r.rows.front().partition,
                                                              r.rows.front().policy)
                                                : std::string("infeasible");
      row.plan += fmt::format("{}{} on {} GPU{}: {}", row.plan.empty() ? "" : "; ", share_text(archs, share), n,
                              n == 1 ? "" : "s", plan);
    }
    row.feasible = feasible;
    if (feasible && lifted) {
      s.samples_per_step = row.samples_per_step;
      const sim::ServerPrediction p = sim::simulate_server(s, c.server, {.memory_limit_bytes = -1});
      ++stats.candidates;
      const int64_t peak = row.peak_bytes;
      fill(row, p, routes);
      row.peak_bytes = peak;  // the single-GPU simulator's (lifted tasks allocate nothing)
    } else if (feasible) {
      // Priced per GPU alone: no link sharing.
      row.step_time_ns = alone_ns;
      row.samples_per_s = static_cast<double>(row.samples_per_step) * 1e9 / static_cast<double>(alone_ns);
      row.note = "a GPU's plan is separate runs: step priced per GPU alone, links not shared";
      s.tasks.clear();
    }
    if (feasible && (best_ns == 0 || row.step_time_ns < best_ns)) best_ns = row.step_time_ns;
    out.push_back(std::move(cand));
  }
}

}  // namespace

ServerSearchReport run_server_search(const ServerSearchConfig& c) {
  if (c.array.architectures.empty()) throw Error("server search: no architectures");
  if (c.array.cost == nullptr) throw Error("server search: no cost model");
  if (c.array.cost->device().name != c.server.gpu) {
    throw Error(fmt::format("server search: the cost model prices '{}' but server '{}' has '{}' GPUs",
                            c.array.cost->device().name, c.server.name, c.server.gpu));
  }
  for (const int32_t packs : c.packs) {
    if (packs < 1 || packs > kMaxLayerPacks) {
      throw Error(
          fmt::format("server search: layer pack count {} must be from 1 to {}", packs, kMaxLayerPacks));
    }
  }
  if (c.packs.empty()) throw Error("server search: no layer pack counts");
  if (c.array.top < 1) throw Error(fmt::format("server search: top = {} must be >= 1", c.array.top));
  for (const int32_t m : c.micro_batches) {
    if (m < 1 || m > kMaxMicroBatches) {
      throw Error(
          fmt::format("server search: micro-batch count {} must be from 1 to {}", m, kMaxMicroBatches));
    }
  }
  for (const std::string& s : c.schemes) builtin_server_schemes().find(s);
  if (const auto twice = support::first_repeat(c.schemes)) {
    throw Error(fmt::format("server search: scheme '{}' is given twice; give each scheme once",
                            c.schemes[twice->second]));
  }
  if (const auto twice = support::first_repeat(c.micro_batches)) {
    throw Error(fmt::format("server search: micro-batch count {} is given twice; give each count once",
                            c.micro_batches[twice->second]));
  }
  if (const auto twice = support::first_repeat(c.packs)) {
    throw Error(fmt::format("server search: layer pack count {} is given twice; give each count once",
                            c.packs[twice->second]));
  }
  ServerSearchReport report;
  const int64_t limit =
      c.array.memory_limit_bytes > 0 ? c.array.memory_limit_bytes : c.array.cost->device().memory_bytes;
  report.memory_limit_bytes = limit;
  std::vector<Candidate> candidates;
  ShareMemo memo;  // outlives the candidates' pointers into it
  const bool one_model = c.array.architectures.size() == 1 && c.array.architectures.front().count == 1;
  if (one_model) {
    search_schemes(c, limit, candidates, report.stats);
  } else {
    search_placements(c, limit, memo, candidates, report.stats);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return better(a.row, b.row); });
  if (!candidates.empty() && candidates.front().row.feasible) {
    report.best = std::move(candidates.front().schedule);
    report.best_parts = std::move(candidates.front().parts);
    // Only the winner's parts carry their schedules (a copy each): separate runs have none.
    for (size_t i = 0; i < report.best_parts.size(); ++i) {
      const SearchReport& r = *candidates.front().part_reports[i];
      if (r.best_schedule_is_whole_step) report.best_parts[i].schedule = r.best_schedule;
    }
  }
  for (size_t i = 0; i < candidates.size() && i < static_cast<size_t>(c.array.top); ++i) {
    report.rows.push_back(std::move(candidates[i].row));
  }
  return report;
}

}  // namespace mutwo::policies
