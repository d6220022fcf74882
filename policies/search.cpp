#include "policies/search.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "policies/plain_schedule.hpp"
#include "policies/policy_result.hpp"
#include "policies/state_offload.hpp"
#include "policies/strategy.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

#include "policies/partition_search.hpp"

namespace mutwo::policies {

std::vector<std::string> default_search_policies(const PolicyRegistry& registry) {
  std::vector<std::string> names;
  for (const PolicyInfo& p : registry.policies()) {
    if (p.in_default_search) names.push_back(p.name);
  }
  return names;
}

namespace {

SearchReport run_one_search(const SearchConfig& config) {
  const PolicyRegistry& registry = config.registry != nullptr ? *config.registry : builtin_policies();
  partition_search::validate(config, registry);
  partition_search::Search search(config, registry);
  SearchReport report = search.run();
  const std::string lean = transforms::lean_ops_name(config.architectures.front().config.lean_ops);
  for (SearchRow& row : report.rows) row.lean_ops = lean;
  return report;
}

LeanEffect lean_effect(const ArchitectureCount& arch, const transforms::LeanOps& lean,
                       const SearchConfig& config) {
  zoo::ModelConfig model = arch.config;
  model.width = 1;
  model.lean_ops = {};
  const ir::Graph plain =
      transforms::build_training_step(zoo::build_model(arch.model, model), config.optimizer);
  model.lean_ops = lean;
  const ir::Graph leaned =
      transforms::build_training_step(zoo::build_model(arch.model, model), config.optimizer);
  const auto compute = [&](const ir::Graph& g) {
    int64_t ns = 0;
    for (const ir::Op& op : g.ops) ns += config.cost->op_duration_ns(g, op);
    return ns;
  };
  return {transforms::lean_ops_name(lean), arch.model,
          ir::saved_for_backward_bytes(plain) - ir::saved_for_backward_bytes(leaned),
          compute(leaned) - compute(plain)};
}

}  // namespace

SearchReport run_search(const SearchConfig& config) {
  if (config.lean_options.empty()) return run_one_search(config);
  // Each lean option searched alone, the rows merged by the same order; "vs hfta" against the first
  // option's hfta row.
  SearchReport merged;
  std::vector<std::pair<SearchRow, int64_t>> rows;
  std::optional<SearchRow> first_hfta;
  double best_samples = -1;
  for (size_t k = 0; k < config.lean_options.size(); ++k) {
    SearchConfig one = config;
    one.lean_options.clear();
    for (ArchitectureCount& a : one.architectures) a.config.lean_ops = config.lean_options[k];
    SearchReport report = run_one_search(one);
    merged.memory_limit_bytes = report.memory_limit_bytes;
    merged.samples_per_step = report.samples_per_step;
    if (merged.smallest_limit_bytes == 0 || report.smallest_limit_bytes < merged.smallest_limit_bytes) {
      merged.smallest_limit_bytes = report.smallest_limit_bytes;
    }
    if (report.smallest_pruned_bytes > 0 &&
        (merged.smallest_pruned_bytes == 0 || report.smallest_pruned_bytes < merged.smallest_pruned_bytes)) {
      merged.smallest_pruned_bytes = report.smallest_pruned_bytes;
    }
    merged.stats.partitions += report.stats.partitions;
    merged.stats.policies = report.stats.policies;
    merged.stats.plans += report.stats.plans;
    merged.stats.pruned_by_memory += report.stats.pruned_by_memory;
    merged.stats.partitions_pruned_by_bound += report.stats.partitions_pruned_by_bound;
    for (const SearchRow& row : report.rows) {
      if (k == 0 && row.strategy == builtin_strategies().reference().name) first_hfta = row;
      rows.emplace_back(row, static_cast<int64_t>(rows.size()));
    }
    if (report.any_feasible() && report.rows.front().samples_per_s > best_samples) {
      best_samples = report.rows.front().samples_per_s;
      merged.best_schedule = std::move(report.best_schedule);
      merged.best_schedule_is_whole_step = report.best_schedule_is_whole_step;
    }
    if (config.lean_options[k].any()) {
      for (const ArchitectureCount& a : config.architectures) {
        merged.lean_effects.push_back(lean_effect(a, config.lean_options[k], config));
      }
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return partition_search::better(x.first, x.second, y.first, y.second);
  });
  for (auto& [row, sequence] : rows) {
    row.speedup_over_hfta = row.feasible && first_hfta && first_hfta->feasible
                                ? row.samples_per_s / first_hfta->samples_per_s
                                : 0.0;
    merged.rows.push_back(std::move(row));
  }
  return merged;
}

}  // namespace mutwo::policies
