#include "experiments/sweep_keys.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "ir/executor.hpp"
#include "sim/dtr_replay.hpp"
#include "support/error.hpp"

namespace mutwo::experiments {
namespace {

using support::TomlReader;

SweepModel read_model(const TomlReader& r, const toml::node& n, size_t index) {
  const std::string prefix = fmt::format("sweep.models[{}].", index);
  const auto* t = n.as_table();
  if (t == nullptr)
    r.fail(&n, prefix.substr(0, prefix.size() - 1), "must be a table { name = ..., batch_sizes = [...] }");
  r.reject_unknown(*t, prefix, {"name", "batch_sizes", "seq_len", "image_size"});
  SweepModel m;
  m.name = r.string(*t, prefix, "name");
  if (const toml::node* b = t->get("batch_sizes"))
    m.batch_sizes = r.integers(*b, prefix + "batch_sizes", 1, 1 << 20);
  if (const toml::node* s = t->get("seq_len")) m.seq_len = r.integer(*s, prefix + "seq_len", 1, 1 << 20);
  if (const toml::node* s = t->get("image_size"))
    m.image_size = r.integer(*s, prefix + "image_size", 1, 1 << 16);
  return m;
}

void read_models(const TomlReader& r, const toml::node& node, const std::string& key, Sweep& s) {
  const toml::array& a = r.array(node, key);
  for (size_t i = 0; i < a.size(); ++i) s.models.push_back(read_model(r, *a.get(i), i));
  for (size_t i = 0; i < s.models.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (s.models[i].name == s.models[j].name)
        r.fail(a.get(i), key, fmt::format("names '{}' twice", s.models[i].name));
    }
  }
}

std::vector<int32_t> counts(const TomlReader& r, const toml::node& node, const std::string& key,
                            int64_t max) {
  std::vector<int32_t> out;
  for (int64_t v : r.integers(node, key, 1, max)) out.push_back(static_cast<int32_t>(v));
  return out;
}

std::string text(const TomlReader& r, const toml::node& node, const std::string& key) {
  const auto* v = node.as_string();
  if (v == nullptr) r.fail(&node, key, fmt::format("must be a string, not {}", TomlReader::type_name(node)));
  return v->get();
}

// One reader per member kind, so that each table row names only its member.
#define MUTWO_SWEEP_STRINGS(member) \
  [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) { s.member = r.strings(n, k); }
#define MUTWO_SWEEP_TEXT(member) \
  [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) { s.member = text(r, n, k); }

}  // namespace

const std::vector<SweepKeyInfo>& sweep_key_table() {
  static const std::vector<SweepKeyInfo> table = {
      {"models",
       "[[sweep.models]]: name (zoo or exported file), batch_sizes, seq_len, image_size",
       read_models,
       {"model", "batch_size"}},
      {"model_counts",
       "models in the array, 1 to 1024",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.model_counts = counts(r, n, k, 1024);
       },
       {"models"}},
      {"gpus", "device catalog names or device files", MUTWO_SWEEP_STRINGS(gpus), {"gpu"}},
      {"host_link_gbps",
       "host-link bandwidths to sweep, GB/s each way (default: the catalog's)",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.host_link_gbps = r.positives(n, k, 10000.0);
       },
       {"host_link_gbps"},
       [](const Sweep& s) { return !s.host_link_gbps.empty(); }},
      {"memory_limits",
       "\"device\" (the GPU's memory) or sizes such as \"30GiB\"",
       MUTWO_SWEEP_STRINGS(memory_limits),
       {"memory_limit_bytes"}},
      {"memory_fractions",
       "fractions of the unoptimised peak, in (0, 1]",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.memory_fractions = r.positives(n, k, 1.0);
       },
       {"memory_fraction"}},
      {"strategies", "sequential, hfta, hfta+capuchin, mutwo", MUTWO_SWEEP_STRINGS(strategies), {"strategy"}},
      {"policies", "swap/recompute policies", MUTWO_SWEEP_STRINGS(policies), {"policy"}},
      {"lean_ops",
       "Tempo's lean layers to sweep (none, tempo, ...)",
       MUTWO_SWEEP_STRINGS(lean_ops),
       {"lean_ops"},
       [](const Sweep& s) { return !s.lean_ops.empty(); },
       "none"},
      {"dtype", "fp32, fp16, bf16 (default fp32)", MUTWO_SWEEP_TEXT(dtype), {"dtype"}},
      {"optimizer",
       "sgd, adam, adamw, adam-fused, adamw-fused, bert-adam, bert-adam-hf (default adam)",
       MUTWO_SWEEP_TEXT(optimizer),
       {"optimizer"}},
      {"cost_source", "the op cost source (default waves)", MUTWO_SWEEP_TEXT(cost_source), {"cost_source"}},
      {"device", "measured sweeps: where to execute (default: the executor's)", MUTWO_SWEEP_TEXT(device)},
      {"precision", "fp32, tf32, amp-fp16, amp-bf16, bf16 (default fp32)", MUTWO_SWEEP_TEXT(precision)},
      {"host_mode", "eager, libtorch, cuda-graph, none (default: the kind's)", MUTWO_SWEEP_TEXT(host_mode)},
      {"iterations", "measured sweeps: timed steps after warm-up (default 20)",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.iterations = static_cast<int32_t>(r.integer(n, k, 1, ir::kMaxRunSteps));  // as mutwo run --iters
       }},
      {"warmup", "measured sweeps: untimed steps first (default 3)",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.warmup = static_cast<int32_t>(r.integer(n, k, 0, ir::kMaxRunSteps));
       }},
      {"logs",
       "DTR operator logs; relative paths from the spec's folder",
       MUTWO_SWEEP_STRINGS(logs),
       {"log"}},
      {"traces", "the cost source's measured traces; relative paths from the spec's folder",
       MUTWO_SWEEP_STRINGS(traces)},
      {"heuristics", "DTR eviction heuristics", MUTWO_SWEEP_STRINGS(heuristics), {"heuristic"}},
      {"cost_sources", "published kind: each row priced by each (default waves, the default source)",
       MUTWO_SWEEP_STRINGS(cost_sources)},
      {"host_modes", "published kind: host modes (default eager)", MUTWO_SWEEP_STRINGS(host_modes)},
      {"published", "published kind: CSV of published throughputs; relative from the spec's folder",
       MUTWO_SWEEP_TEXT(published)},
      {"servers", "server kinds: server catalog names", MUTWO_SWEEP_STRINGS(servers), {"server"}},
      {"schemes", "server_schemes kind: scheme names", MUTWO_SWEEP_STRINGS(schemes), {"scheme"}},
      {"gpu_counts",
       "server_schemes kind: GPUs used (N), 1 to 1024",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.gpu_counts = counts(r, n, k, 1024);
       },
       {"gpus"}},
      {"micro_batches",
       "server_schemes kind: micro-batches per data batch (M), 1 to 1024",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.micro_batches = counts(r, n, k, 1024);
       },
       {"micro_batches"}},
      {"packs",
       "server_schemes kind: layer packs, 1 to 4096",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.packs = counts(r, n, k, 4096);
       },
       {"packs"}},
      {"budget_ratios",
       "dtr kind: budgets as ratios of the DTR baseline peak (at most 1000)",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         // Past the baseline peak nothing is evicted; 1000x bounds the budget well inside int64 for
         // any log, where 1e9x overflowed at the first log whose peak it met.
         s.budget_ratios = r.positives(n, k, 1000.0);
       },
       {"budget_ratio"}},
      {"overhead_limit",
       "dtr kind: the remat limit, baseline compute x (limit - 1); > 1 and at most 100 (default 2)",
       [](const TomlReader& r, const toml::node& n, const std::string& k, Sweep& s) {
         s.overhead_limit = r.number(n, k);
         if (!(s.overhead_limit > 1 && s.overhead_limit <= sim::kDtrMaxOverheadLimit)) {
           r.fail(&n, k,
                  fmt::format("= {} must be > 1 and at most {} (as mutwo replay --overhead-limit)",
                              s.overhead_limit, sim::kDtrMaxOverheadLimit));
         }
       },
       {"overhead_limit"}},
  };
  return table;
}

#undef MUTWO_SWEEP_STRINGS
#undef MUTWO_SWEEP_TEXT

std::vector<std::string> sweep_columns(const ExperimentSpec& spec,
                                       const std::vector<std::string_view>& keys) {
  std::vector<std::string> columns;
  for (std::string_view key : keys) {
    const SweepKeyInfo* info = find_sweep_key(key);
    if (info == nullptr) throw Error(fmt::format("sweep columns: '{}' is not a sweep key", key));
    if (info->shown_when != nullptr && !info->shown_when(spec.sweep)) continue;
    columns.insert(columns.end(), info->columns.begin(), info->columns.end());
  }
  return columns;
}

std::string_view absent_cell(std::string_view column) {
  for (const SweepKeyInfo& k : sweep_key_table()) {
    if (std::find(k.columns.begin(), k.columns.end(), column) != k.columns.end()) return k.absent_cell;
  }
  return "";
}

const SweepKeyInfo* find_sweep_key(std::string_view name) {
  for (const SweepKeyInfo& k : sweep_key_table()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace mutwo::experiments
