#pragma once
// A model array (k copies of one zoo architecture, or a mix of architectures) and its split into
// fused sub-arrays: the training-step graphs a schedule builder takes, one per sub-array.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.hpp"
#include "transforms/autodiff.hpp"
#include "zoo/model_registry.hpp"

namespace mutwo::policies {

// The most models one array holds: wider arrays are no sweep anyone trains, and a graph of them
// would be built before anything else refused it.
inline constexpr int32_t kMaxArrayModels = 1024;

struct ModelArray {
  std::string model;             // zoo name, "bert-base"
  int32_t count = 1;             // models in the array
  zoo::ModelConfig config;       // per-model batch, sequence length, image size, dtype (width ignored)
  transforms::OptimizerConfig optimizer;
};

// Checks that the sub-array sizes are >= 1 and add up to array.count; throws mutwo::Error naming
// the partition and what is wrong ("partition 2,1 covers 3 models, the array has 4").
void validate_partition(const ModelArray& array, const std::vector<int32_t>& partition);

// "2,2"
std::string partition_text(const std::vector<int32_t>& partition);

// One fused training-step graph per sub-array (width = its size), named "bert-base x2". The
// optimizer's per-model lists must have one value or array.count values; with count values each
// sub-array gets its models' slice.
std::vector<ir::Graph> sub_array_steps(const ModelArray& array, const std::vector<int32_t>& partition);

// ---- Mixed arrays: several architectures, each split into its own sub-arrays ----

// `count` models of architecture `model` (a zoo name), each with `config` (width ignored).
struct ArchitectureCount {
  std::string model;
  int32_t count = 1;
  zoo::ModelConfig config;
};

// One fused sub-array: `width` models of architecture `model`. Architectures never share one.
struct SubArraySpec {
  std::string model;
  int32_t width = 1;
};

// The sub-arrays of a mixed array, in run order. For each architecture, the widths of the
// sub-arrays naming it add up to its count; the models of an architecture go to its sub-arrays
// in the order they appear here.
using ArrayPartition = std::vector<SubArraySpec>;

// "bert-base:4+4, vit-b16:2": one "model:w+w+..." group per architecture, in the order each
// architecture first appears, widths in the order they appear, groups joined by ", ".
// "" for an empty partition.
std::string partition_text(const ArrayPartition& partition);

// Throws mutwo::Error naming the field and value on: no architectures, an empty or duplicate
// model name, a count < 1 (architectures); an empty partition, a width < 1, a model not in the
// architecture list, or an architecture whose widths do not add up to its count
// ("partition bert-base:2+1: bert-base widths cover 3 models, the array has 4").
void validate_array_partition(const std::vector<ArchitectureCount>& architectures,
                              const ArrayPartition& partition);

// One fused training-step graph per sub-array, in partition order, named "bert-base x2" (built
// as sub_array_steps above does). The optimizer's per-model lists have one value, or one per
// model of the whole array (sum of counts, architectures in list order, each architecture's
// models in order); a sub-array gets its models' slice. Throws as validate_array_partition and
// on a list of another length (naming the field).
std::vector<ir::Graph> sub_array_steps(const std::vector<ArchitectureCount>& architectures,
                                       const ArrayPartition& partition,
                                       const transforms::OptimizerConfig& optimizer);

// Builds each (architecture, width) training-step graph once and keeps it for the cache's
// lifetime: the search builds the same sub-array for many partitions. References returned stay
// valid until the cache is destroyed (moving the cache keeps them valid too). A cached graph
// uses the hyper-parameters of its architecture's first `width` models (per-model lists sliced
// as sub_array_steps does for the first sub-array); the values do not change the graph's
// structure, sizes or costs. Not thread-safe.
class StepGraphCache {
 public:
  // Validates the architectures and the optimizer's list lengths (as sub_array_steps).
  StepGraphCache(std::vector<ArchitectureCount> architectures, transforms::OptimizerConfig optimizer);

  // Throws mutwo::Error on an unknown model or a width outside [1, that architecture's count].
  const ir::Graph& get(const std::string& model, int32_t width);
  const ir::Graph& get(size_t architecture, int32_t width);  // index into architectures()

  // Copies of the cached graphs, one per sub-array, in partition order (for the schedule
  // builders, which take their parts by value). Validates the partition.
  std::vector<ir::Graph> steps(const ArrayPartition& partition);

  const std::vector<ArchitectureCount>& architectures() const { return architectures_; }
  const transforms::OptimizerConfig& optimizer() const { return optimizer_; }
  int64_t graphs_built() const { return static_cast<int64_t>(graphs_.size()); }

 private:
  std::vector<ArchitectureCount> architectures_;
  transforms::OptimizerConfig optimizer_;
  std::map<std::pair<size_t, int32_t>, std::unique_ptr<ir::Graph>> graphs_;
};

}  // namespace mutwo::policies
