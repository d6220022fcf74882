#pragma once
// An experiment spec (experiments/*.toml, experiments/README.md): which experiment kind runs, over
// which sweep, drawn as which figures. Read once, at the edge, by read_spec/parse_spec; the kind
// (experiment_kind.hpp) then checks the sweep's values and expands it into configurations.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/cost_setup.hpp"

namespace mutwo::experiments {

// One architecture of a sweep and the batch sizes it runs at.
struct SweepModel {
  std::string name;                  // zoo name, "bert-base"
  std::vector<int64_t> batch_sizes;  // per model; empty: the model's default
  int64_t seq_len = 0;               // 0: the model's default
  int64_t image_size = 0;            // 0: the model's default
};

// The [sweep] table. Which keys a kind accepts is the kind's (ExperimentKind::sweep_keys); a key
// the spec leaves out keeps the value here.
struct Sweep {
  std::vector<SweepModel> models;     // [[sweep.models]]
  std::vector<int32_t> model_counts;  // models in the array
  std::vector<std::string> gpus;      // device catalog names
  // Host-link bandwidths to sweep, GB/s each way (overriding the catalog's); empty: the catalog's.
  std::vector<double> host_link_gbps;
  std::vector<std::string> memory_limits;  // "device" (the GPU's memory) or a size "30GiB"
  std::vector<double> memory_fractions;    // of the unoptimised peak, in (0, 1]
  std::vector<std::string> strategies;     // sequential, hfta, hfta+capuchin, mutwo
  std::vector<std::string> policies;       // swap/recompute policies
  std::string dtype = "fp32";
  std::string precision = "fp32";     // ir/precision.hpp: fp32, tf32, amp-fp16, amp-bf16, bf16
  std::vector<std::string> lean_ops;  // Tempo's lean layers to sweep (transforms/lean_ops.hpp); empty: none
  // sim/host_mode.hpp: eager, libtorch, cuda-graph, none; empty: the kind's default (eager; the
  // measured kind: libtorch, as the executor issues its steps)
  std::string host_mode;
  std::string optimizer = "adam";
  std::string cost_source = costmodel::kDefaultCostSource;
  std::vector<std::string>
      traces;                     // the cost source's measured traces; relative paths: from the spec's folder
  std::vector<std::string> logs;  // DTR operator logs; relative paths: from the spec's folder
  std::vector<std::string> heuristics;  // DTR eviction heuristics
  std::vector<double> budget_ratios;    // of the DTR baseline peak
  double overhead_limit = 2.0;          // DTR's remat limit: baseline compute x (limit - 1)
  std::string device;                   // measured sweeps: where to execute; empty: the executor's default
  int32_t iterations = 20;              // measured sweeps: timed steps after warm-up
  int32_t warmup = 3;                   // measured sweeps: untimed steps first
  std::string published;  // published kind: CSV of published throughputs; relative: from the spec's folder
  std::vector<std::string> cost_sources;  // published kind: each row priced by each (default: analytic)
  std::vector<std::string> host_modes;    // published kind: sim/host_mode.hpp's names (default: eager)
  std::vector<std::string> servers;       // server kinds: server catalog names (costmodel/server_catalog.hpp)
  std::vector<std::string> schemes;       // server_schemes kind: policies/server_schemes.hpp names
  std::vector<int32_t> gpu_counts;        // server_schemes kind: GPUs used (N)
  std::vector<int32_t> micro_batches;     // server_schemes kind: micro-batches per data batch (M)
  std::vector<int32_t> packs;             // server_schemes kind: layer packs
};

struct ExperimentSpec {
  std::string name;                  // [a-z0-9_-]+, names the CSV and figure files and the database rows
  std::string title;                 // the figures' first title line
  std::string description;           // optional
  std::string kind;                  // experiment kind: strategies, policies, dtr, measured, published
  std::vector<std::string> figures;  // figure names scripts/plot.py draws
  Sweep sweep;
  std::vector<std::string> sweep_keys_given;  // the [sweep] keys the spec set, in file order

  std::string source;              // file path, or "<builtin>/name.toml" for an embedded spec
  std::filesystem::path base_dir;  // relative paths in the spec resolve against it
  std::string text;                // the TOML as read (stored with the results)
};

// Parses TOML text. Throws mutwo::FormatError naming `source`, the line and the key on a syntax
// error, an unknown key, a missing required key (name, title, kind), a value of the wrong type, a
// number out of range (count < 1, batch < 1, fraction outside (0, 1], ratio <= 0), or a name
// that is not [a-z0-9_-]+; UnknownNameError for an unknown kind. The kind's own checks
// (ExperimentKind::validate) run separately.
ExperimentSpec parse_spec(std::string_view text, std::string_view source,
                          const std::filesystem::path& base_dir);

// A spec by path (any file) or by the name of a shipped spec ("mutwo_throughput", embedded in the
// binary; shipped_specs()). A path is taken as such when it names an existing file or ends in
// ".toml". Throws mutwo::Error naming the path, or the valid shipped names.
ExperimentSpec read_spec(const std::string& path_or_name);

struct ShippedSpec {
  std::string_view name;  // "mutwo_throughput"
  std::string_view toml;  // the file's text
};
// experiments/*.toml of the source tree, embedded at build time, sorted by name.
const std::vector<ShippedSpec>& shipped_specs();

}  // namespace mutwo::experiments
