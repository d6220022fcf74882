#pragma once
// A single-GPU search (policies/search.hpp) as `mutwo search` and `mutwo.search()` ask for it: the
// model array by names and counts, and the report as JSON (rows usable as a pandas DataFrame).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/device_spec.hpp"
#include "costmodel/op_cost_model.hpp"
#include "policies/search.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::api {

// An array where memory forces a choice (μ-TWO's MobileNet-V3-Large at its larger batch, 8 models on
// an A100-40GB): HFTA cannot fuse all 8 within 40 GiB, so it runs 7 + 1; fused wider, the small
// kernels fill the GPU, and recomputation (or swapping) makes all 8 fit in one fused step.
inline constexpr const char* kDefaultSearchModel = "mobilenet-v3-large:8";
inline constexpr int64_t kDefaultSearchBatch = 128;

struct SearchRequest {
  std::vector<std::string> models;  // "bert-base:8" (zoo name or model file, and a count); empty: the default
  int64_t batch_size = 0;           // 0: each model's default (128 for the default array)
  int64_t seq_len = 0;
  int64_t image_size = 0;
  std::string dtype = "fp32";
  std::string precision = "fp32";
  std::string lean_ops = "none";  // none, tempo, both (searched side by side), or a list
  std::string host_mode = "eager";
  std::string optimizer = "adam";
  std::vector<std::string> policies;  // empty: the default search's
  int32_t top = 10;
  int32_t jobs = 1;                       // SearchConfig::jobs (0: one per hardware thread)
  policies::PartitionOptions partitions;  // which sub-array partitions are enumerated (partition.hpp)
  std::function<void(int64_t visited, int64_t partitions)> progress;  // SearchConfig::progress
};

// "bert-base:8" -> {bert-base, 8}; "bert-base" -> {bert-base, 1}. Throws Error naming the value for a
// count that is not a whole number from 1 to 1024, UnknownNameError for an unknown model.
policies::ArchitectureCount parse_model_count(const std::string& text, const zoo::ModelConfig& config);

// The search's configuration on `cost` at `memory_limit_bytes`; throws what the parsers throw,
// naming the value.
policies::SearchConfig search_config(const SearchRequest& request, const costmodel::OpCostModel& cost,
                                     int64_t memory_limit_bytes);

// device {name, memory_bytes}, cost_source, memory_limit_bytes, samples_per_step, feasible,
// smallest_limit_bytes, rows (strategy, partition, policy, feasible, peak_bytes, pruned, runs, note,
// lean_ops; and for feasible rows step_time_ns, samples_per_s, speedup_over_hfta, bytes swapped,
// model_state, optimizer, host_optimizer_ns, recompute_ns, compute_stall_ns), lean_effects, stats.
nlohmann::json search_json(const policies::SearchReport& report, const costmodel::DeviceSpec& device,
                           const std::string& cost_source);

}  // namespace mutwo::api
