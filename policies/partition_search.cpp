#include "policies/partition_search.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/host_optimizer.hpp"
#include "policies/multiplex.hpp"
#include "policies/plain_schedule.hpp"
#include "policies/policy_result.hpp"
#include "policies/state_offload.hpp"
#include "policies/strategy.hpp"
#include "support/distinct.hpp"
#include "support/error.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::policies::partition_search {

int64_t persistent_bytes(const ir::Graph& graph) {
  int64_t bytes = 0;
  for (const ir::Tensor& t : graph.tensors) {
    if (ir::is_persistent(t.role)) bytes += t.bytes;
  }
  return bytes;
}

void validate(const SearchConfig& config, const PolicyRegistry& registry) {
  if (config.architectures.empty()) throw Error("search: the model array is empty; give at least one model");
  for (const ArchitectureCount& a : config.architectures) {
    zoo::find_model(a.model);  // a zoo model or a test-scale variant
    if (a.count < 1) throw Error(fmt::format("search: model '{}' count {} must be >= 1", a.model, a.count));
  }
  std::vector<std::string> models;
  for (const ArchitectureCount& a : config.architectures) models.push_back(a.model);
  if (const auto twice = support::first_repeat(models)) {
    throw Error(fmt::format("search: model '{}' is given twice; give it once with the total count",
                            models[twice->second]));
  }
  if (config.cost == nullptr) throw Error("search: no cost model");
  if (config.top < 1) throw Error(fmt::format("search: top {} must be >= 1", config.top));
  if (config.memory_limit_bytes < 0) {
    throw Error(fmt::format("search: memory limit {} B must be >= 0", config.memory_limit_bytes));
  }
  for (const std::string& p : config.policies) registry.find(p);
  if (const auto twice = support::first_repeat(config.policies)) {
    throw Error(fmt::format("search: policy '{}' is given twice; give each policy once",
                            config.policies[twice->second]));
  }
  // The partitions are enumerated into memory and each is planned: p(64) = 1.7 million takes 40 s and
  // 1.5 GB, p(128) = 4.4e9 cannot be held. Refuse before anything is built.
  const int64_t partitions = array_partition_count(config.architectures, config.prune);
  if (partitions > kMaxSearchPartitions) {
    std::vector<std::string> array;
    for (const ArchitectureCount& a : config.architectures)
      array.push_back(fmt::format("{}:{}", a.model, a.count));
    throw Error(fmt::format(
        "search: the array {} has {} sub-array partitions under the partition options, more than the {} a "
        "search plans; narrow them (max_sub_arrays, min_width, max_width: mutwo search --max-sub-arrays, "
        "--min-width, --max-width)",
        fmt::join(array, ", "),
        partitions == std::numeric_limits<int64_t>::max() ? std::string("over 9.2e18")
                                                          : std::to_string(partitions),
        kMaxSearchPartitions));
  }
}

// Feasible by step time (samples per step are the same for all), then infeasible by peak.
bool better(const SearchRow& a, int64_t seq_a, const SearchRow& b, int64_t seq_b) {
  if (a.feasible != b.feasible) return a.feasible;
  const int64_t ka = a.feasible ? a.step_time_ns : a.peak_bytes;
  const int64_t kb = b.feasible ? b.step_time_ns : b.peak_bytes;
  return std::tie(ka, seq_a) < std::tie(kb, seq_b);
}

SearchReport Search::run() {
  SearchReport report;
  report.memory_limit_bytes = limit_;
  report.samples_per_step = samples_per_step_;
  report.stats.policies = static_cast<int64_t>(policies_.size());

  StrategyContext ctx;
  ctx.config = &config_;
  ctx.cost = &cost_;
  ctx.registry = &registry_;
  ctx.memory_limit_bytes = limit_;
  ctx.samples_per_step = samples_per_step_;
  ctx.host_mode = config_.host_mode;
  ctx.step_graph = [this](size_t a, int32_t w) -> const ir::Graph& { return step_graph(a, w); };
  std::vector<StrategyOutcome> outcomes;
  size_t reference = 0;  // the reference baseline's outcome
  for (const StrategyInfo& s : builtin_strategies()) {
    if (!s.run) continue;
    std::optional<StrategyOutcome> o = s.run(ctx);
    if (!o) continue;
    if (s.reference) reference = outcomes.size();
    outcomes.push_back(std::move(*o));
  }

  std::optional<StrategyOutcome> separate = separate_runs(report.stats);
  if (config_.prune_below_separate_runs && separate && separate->row.feasible) {
    separate_runs_ns_ = separate->row.step_time_ns;
  }
  search_partitions(report.stats);
  if (separate) outcomes.push_back(std::move(*separate));
  offload_separate_partition(report.stats);
  for (Candidate& c : kept_) {
    if (c.row.pruned) {
      outcomes.push_back({c.row, std::nullopt, true});
      continue;
    }
    SearchRow row = combine_runs({c.figures}, samples_per_step_);
    row.strategy = "mutwo";
    row.partition = c.row.partition;
    row.policy = c.row.policy;
    row.note = c.row.note;
    row.state_offloaded = c.row.state_offloaded;
    row.optimizer_on_host = c.schedule.host_stream != ir::kNoStream;
    StrategyOutcome o;
    o.row = std::move(row);
    o.schedule = std::move(c.schedule);
    outcomes.push_back(std::move(o));
  }

  // Stable: baselines first among equals, then the mutwo rows in their ranked order.
  std::vector<size_t> order(outcomes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return better(outcomes[x].row, static_cast<int64_t>(x), outcomes[y].row, static_cast<int64_t>(y));
  });
  const SearchRow& hfta = outcomes[reference].row;
  report.smallest_limit_bytes = smallest_peak_;
  report.smallest_pruned_bytes = smallest_pruned_;
  for (size_t i : order) {
    SearchRow& row = outcomes[i].row;
    if (row.feasible && hfta.feasible) row.speedup_over_hfta = row.samples_per_s / hfta.samples_per_s;
    if (!row.pruned && (report.smallest_limit_bytes == 0 || row.peak_bytes < report.smallest_limit_bytes)) {
      report.smallest_limit_bytes = row.peak_bytes;
    }
    report.rows.push_back(row);
  }
  StrategyOutcome& best = outcomes[order.front()];
  if (best.row.feasible) {
    report.best_schedule = std::move(best.schedule);
    report.best_schedule_is_whole_step = best.schedule_is_whole_step;
  }
  return report;
}

const ir::Graph& Search::step_graph(size_t arch, int32_t width) {
  return graphs_.get(arch, width);
}

int64_t Search::compute_ns(size_t arch, int32_t width) {
  auto it = compute_ns_.find({arch, width});
  if (it != compute_ns_.end()) return it->second;
  const int64_t total = estimated_step_ns(step_graph(arch, width), cost_);
  compute_ns_.emplace(std::make_pair(arch, width), total);
  return total;
}

Search::OptimizerNs Search::optimizer_ns(size_t arch, int32_t width) {
  auto it = optimizer_ns_.find({arch, width});
  if (it != optimizer_ns_.end()) return it->second;
  OptimizerNs ns;
  const ir::Graph& graph = step_graph(arch, width);
  for (const ir::Op& op : graph.ops) {
    if (!ir::is_optimizer_update(op.kind)) continue;
    ns.device += cost_.op_duration_ns(graph, op);
    ns.host += costmodel::host_optimizer_ns(cost_.device(), op);
  }
  optimizer_ns_.emplace(std::make_pair(arch, width), ns);
  return ns;
}

int64_t Search::bound_ns(const Sizes& sizes) {
  int64_t compute = 0;
  int64_t device_optimizer = 0;
  int64_t host_optimizer = 0;
  for (size_t a = 0; a < sizes.size(); ++a) {
    for (int32_t w : sizes[a]) {
      compute += compute_ns(a, w);
      const OptimizerNs o = optimizer_ns(a, w);
      device_optimizer += o.device;
      host_optimizer += o.host;
    }
  }
  if (config_.offload_partitions <= 0) return compute;
  // An offloaded plan may run the optimizer on the host CPU, beside the compute stream: then the step
  // is at least the longer of the rest of the compute and the host's steps. Pruned by the whole
  // compute, a partition whose offloaded plan beat the kept rows was skipped (the winner changed with
  // --top).
  return std::min(compute, std::max(compute - device_optimizer, host_optimizer));
}

// Pruning rule 1 (search.hpp): the sub-array alone, beside the other models' persistent state.
Search::Lone Search::lone(size_t arch, int32_t width, size_t policy, SearchStats& stats) {
  const auto key = std::make_tuple(arch, width, policy);
  auto it = lone_.find(key);
  if (it != lone_.end()) return it->second;
  const ir::Graph& graph = step_graph(arch, width);
  const int64_t others = total_persistent_bytes_ - persistent_bytes(graph);
  Lone verdict{false, total_persistent_bytes_};
  if (limit_ - others > 0) {
    const ir::Schedule base = build_plain_schedule({graph});
    PolicyInput input;
    input.base = &base;
    input.cost = &cost_;
    input.memory_limit_bytes = limit_ - others;
    const PolicyResult result = policies_[policy]->plan(input);
    verdict = {result.feasible, result.peak_bytes + others};
    ++stats.plans;
  }
  lone_.emplace(key, verdict);
  return verdict;
}

bool Search::offload_fits(const std::vector<SubArrayKey>& neighbours, size_t policy, SearchStats& stats) {
  auto key = std::make_pair(neighbours, policy);
  auto it = offload_fits_.find(key);
  if (it != offload_fits_.end()) return it->second;
  // Memory grows with width: a verdict on the same architectures at widths all >= (fails) or all
  // <= (fits) these decides it without planning.
  for (const auto& [known, fits] : offload_fits_) {
    if (known.second != policy || known.first.size() != neighbours.size()) continue;
    bool wider = true;
    bool narrower = true;
    for (size_t i = 0; i < neighbours.size(); ++i) {
      if (known.first[i].first != neighbours[i].first) wider = narrower = false;
      wider = wider && known.first[i].second <= neighbours[i].second;
      narrower = narrower && known.first[i].second >= neighbours[i].second;
    }
    if ((!fits && wider) || (fits && narrower)) return fits;
  }
  std::vector<ir::Graph> parts;
  for (const auto& [arch, width] : neighbours) parts.push_back(step_graph(arch, width));
  const ir::Schedule base = build_multiplexed_schedule(std::move(parts), cost_);
  PolicyInput input;
  input.base = &base;
  input.cost = &cost_;
  input.memory_limit_bytes = limit_;
  const PolicyResult planned = plan_with_state_offload(*policies_[policy], input);
  const bool fits = planned.feasible;
  ++stats.plans;
  // A plan holding these neighbours needs at least their peak: what the pruned plans need, at least.
  if (!fits && planned.peak_bytes > 0 && (smallest_pruned_ == 0 || planned.peak_bytes < smallest_pruned_))
    smallest_pruned_ = planned.peak_bytes;
  offload_fits_.emplace(std::move(key), fits);
  return fits;
}

std::vector<Search::SubArrayKey> Search::multiplex_sequence(const Sizes& sizes) {
  std::vector<SubArrayKey> keys;
  std::vector<int64_t> step_ns;
  for (size_t a = 0; a < sizes.size(); ++a) {
    for (int32_t w : sizes[a]) {
      keys.emplace_back(a, w);
      step_ns.push_back(compute_ns(a, w));
    }
  }
  std::vector<SubArrayKey> ordered;
  for (int32_t i : multiplex_order(step_ns)) ordered.push_back(keys[static_cast<size_t>(i)]);
  return ordered;
}

int Search::offer_offloaded(const Sizes& sizes, size_t policy, std::optional<ir::Schedule>& base,
                            SearchStats& stats) {
  if (!registry_.find(names_[policy]).static_plan) return 0;
  const std::vector<SubArrayKey> sequence = multiplex_sequence(sizes);
  // Rule 1': neighbours in multiplex order (multiplexed plan), each sub-array alone (back to back).
  auto pairs_fit = [&] {
    if (sequence.size() < 2) return offload_fits(sequence, policy, stats);
    for (size_t i = 0; i + 1 < sequence.size(); ++i) {
      if (!offload_fits({sequence[i], sequence[i + 1]}, policy, stats)) return false;
    }
    return true;
  };
  auto each_fits = [&] {
    for (const SubArrayKey& k : sequence) {
      if (!offload_fits({k}, policy, stats)) return false;
    }
    return true;
  };
  PolicyInput input = whole_limit_input(nullptr);
  std::optional<PolicyResult> result;
  if (pairs_fit()) {
    if (!base) base = multiplexed(sizes, true);
    input.base = &*base;
    result = plan_with_state_offload(*policies_[policy], input);
    ++stats.plans;
  }
  // With the state dominating memory, two neighbours' state may not share the device: back to
  // back, one sub-array's state is resident at a time (plus the next one's prefetch).
  if ((!result || !result->feasible) && sequence.size() > 1 && each_fits()) {
    const ir::Schedule back_to_back = multiplexed(sizes, false);
    input.base = &back_to_back;
    PolicyResult alt = plan_with_state_offload(*policies_[policy], input);
    ++stats.plans;
    if (!result || alt.feasible || alt.peak_bytes < result->peak_bytes) {
      alt.note += " (sub-arrays back to back)";
      result = std::move(alt);
    }
  }
  if (!result) {
    ++stats.pruned_by_memory;
    return 0;
  }
  const int made = result->feasible ? 2 : 1;
  Candidate c = partition_candidate(config_, sizes, names_[policy] + "+offload", std::move(*result));
  c.row.state_offloaded = true;
  c.sequence = sequence_++;
  offer(std::move(c));
  return made;
}

std::vector<Sizes> Search::enumerate_partitions() const {
  std::vector<Sizes> out;
  for (const ArrayPartition& p : array_partitions(config_.architectures, config_.prune)) {
    Sizes sizes(config_.architectures.size());
    for (const SubArraySpec& s : p) {
      for (size_t a = 0; a < config_.architectures.size(); ++a) {
        if (config_.architectures[a].model == s.model) sizes[a].push_back(s.width);
      }
    }
    out.push_back(std::move(sizes));
  }
  return out;
}

Candidate partition_candidate(const SearchConfig& config, const Sizes& sizes, std::string policy) {
  Candidate c;
  c.row.strategy = "mutwo";
  c.row.partition = partition_label(config, sizes);
  c.row.policy = std::move(policy);
  return c;
}

Candidate partition_candidate(const SearchConfig& config, const Sizes& sizes, std::string policy,
                              PolicyResult result) {
  Candidate c = partition_candidate(config, sizes, std::move(policy));
  c.row.feasible = result.feasible;
  c.row.step_time_ns = result.feasible ? result.step_time_ns : 0;
  c.row.peak_bytes = result.peak_bytes;
  c.row.note = std::move(result.note);
  c.figures = figures_at_limit(result.prediction);
  c.schedule = std::move(result.schedule);
  return c;
}

PolicyInput Search::whole_limit_input(const ir::Schedule* base) const {
  PolicyInput input;
  input.base = base;
  input.cost = &cost_;
  input.memory_limit_bytes = limit_;
  input.host_mode = config_.host_mode;
  return input;
}

size_t total_sub_arrays(const Sizes& sizes) {
  size_t n = 0;
  for (const auto& widths : sizes) n += widths.size();
  return n;
}

// Sub-arrays ordered by multiplex_order (neighbours with the closest step times pair up).
// interleave = false: the same sub-arrays in the same order, back to back (plain schedule).
ir::Schedule Search::multiplexed(const Sizes& sizes, bool interleave) {
  std::vector<const ir::Graph*> graphs;
  std::vector<int64_t> step_ns;
  for (size_t a = 0; a < sizes.size(); ++a) {
    for (int32_t w : sizes[a]) {
      graphs.push_back(&step_graph(a, w));
      step_ns.push_back(compute_ns(a, w));
    }
  }
  std::vector<ir::Graph> parts;
  for (int32_t i : multiplex_order(step_ns)) parts.push_back(*graphs[static_cast<size_t>(i)]);
  return interleave ? build_multiplexed_schedule(std::move(parts), cost_)
                    : build_plain_schedule(std::move(parts));
}

void Search::offer(Candidate c) {
  const int64_t peak = c.row.peak_bytes;
  if (!c.row.pruned && (smallest_peak_ == 0 || peak < smallest_peak_)) smallest_peak_ = peak;
  auto pos = std::find_if(kept_.begin(), kept_.end(),
                          [&](const Candidate& k) { return better(c.row, c.sequence, k.row, k.sequence); });
  if (pos == kept_.end() && kept_.size() >= static_cast<size_t>(config_.top)) return;
  kept_.insert(pos, std::move(c));
  if (kept_.size() > static_cast<size_t>(config_.top)) kept_.pop_back();
}

}  // namespace mutwo::policies::partition_search
