#include "policies/model_array.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <utility>

#include "support/error.hpp"

namespace mutwo::policies {

namespace {

// The slice [first, first + size) of a per-model list, or the list itself when it has one value.
std::vector<double> slice(const std::vector<double>& values, int32_t first, int32_t size) {
  if (values.size() == 1) return values;
  return {values.begin() + first, values.begin() + first + size};
}

void check_list(const char* field, const std::vector<double>& values, int32_t count) {
  if (values.size() != 1 && values.size() != static_cast<size_t>(count)) {
    throw Error(fmt::format("optimizer '{}' has {} values; give one, or one per model ({})", field,
                            values.size(), count));
  }
}

}  // namespace

std::string partition_text(const std::vector<int32_t>& partition) {
  return fmt::format("{}", fmt::join(partition, ","));
}

void validate_partition(const ModelArray& array, const std::vector<int32_t>& partition) {
  if (array.count < 1)
    throw Error(fmt::format("model array of '{}': count {} must be >= 1", array.model, array.count));
  if (partition.empty()) throw Error("partition is empty; give the sub-array sizes, e.g. 2,2");
  int64_t sum = 0;
  for (int32_t size : partition) {
    if (size < 1) {
      throw Error(
          fmt::format("partition {}: sub-array size {} must be >= 1", partition_text(partition), size));
    }
    sum += size;
  }
  if (sum != array.count) {
    throw Error(fmt::format("partition {} covers {} models, the array has {}", partition_text(partition), sum,
                            array.count));
  }
}

std::vector<ir::Graph> sub_array_steps(const ModelArray& array, const std::vector<int32_t>& partition) {
  validate_partition(array, partition);
  const transforms::OptimizerConfig& opt = array.optimizer;
  check_list("lr", opt.lr, array.count);
  check_list("momentum", opt.momentum, array.count);
  check_list("beta1", opt.beta1, array.count);
  check_list("beta2", opt.beta2, array.count);
  check_list("eps", opt.eps, array.count);
  check_list("weight_decay", opt.weight_decay, array.count);

  std::vector<ir::Graph> parts;
  int32_t first = 0;
  for (int32_t size : partition) {
    zoo::ModelConfig config = array.config;
    config.width = size;
    transforms::OptimizerConfig sub = opt;
    sub.lr = slice(opt.lr, first, size);
    sub.momentum = slice(opt.momentum, first, size);
    sub.beta1 = slice(opt.beta1, first, size);
    sub.beta2 = slice(opt.beta2, first, size);
    sub.eps = slice(opt.eps, first, size);
    sub.weight_decay = slice(opt.weight_decay, first, size);
    parts.push_back(transforms::build_training_step(zoo::build_model(array.model, config), sub));
    first += size;
  }
  return parts;
}

// ---- Mixed arrays ----

namespace {

int64_t total_count(const std::vector<ArchitectureCount>& architectures) {
  int64_t total = 0;
  for (const ArchitectureCount& a : architectures) total += a.count;
  return total;
}

void validate_architectures(const std::vector<ArchitectureCount>& architectures) {
  if (architectures.empty()) throw Error("model array: no architectures given");
  std::set<std::string> seen;
  for (size_t i = 0; i < architectures.size(); ++i) {
    const ArchitectureCount& a = architectures[i];
    if (a.model.empty()) throw Error(fmt::format("model array: architecture {} has an empty model name", i));
    if (a.count < 1) throw Error(fmt::format("model array of '{}': count {} must be >= 1", a.model, a.count));
    if (!seen.insert(a.model).second) {
      throw Error(fmt::format(
          "model array: architecture '{}' is listed twice; give one count per architecture", a.model));
    }
  }
}

// Index of `model` in architectures; throws naming the partition.
size_t architecture_index(const std::vector<ArchitectureCount>& architectures, const std::string& model,
                          const ArrayPartition& partition) {
  for (size_t i = 0; i < architectures.size(); ++i) {
    if (architectures[i].model == model) return i;
  }
  throw Error(fmt::format("partition {}: model '{}' is not in the array", partition_text(partition), model));
}

void check_lists(const transforms::OptimizerConfig& opt, int32_t count) {
  check_list("lr", opt.lr, count);
  check_list("momentum", opt.momentum, count);
  check_list("beta1", opt.beta1, count);
  check_list("beta2", opt.beta2, count);
  check_list("eps", opt.eps, count);
  check_list("weight_decay", opt.weight_decay, count);
}

transforms::OptimizerConfig slice_optimizer(const transforms::OptimizerConfig& opt, int32_t first,
                                            int32_t size) {
  transforms::OptimizerConfig sub = opt;
  sub.lr = slice(opt.lr, first, size);
  sub.momentum = slice(opt.momentum, first, size);
  sub.beta1 = slice(opt.beta1, first, size);
  sub.beta2 = slice(opt.beta2, first, size);
  sub.eps = slice(opt.eps, first, size);
  sub.weight_decay = slice(opt.weight_decay, first, size);
  return sub;
}

ir::Graph build_step(const ArchitectureCount& a, int32_t width, const transforms::OptimizerConfig& opt) {
  zoo::ModelConfig config = a.config;
  config.width = width;
  return transforms::build_training_step(zoo::build_model(a.model, config), opt);
}

// First model index (over the whole array) of each architecture.
std::vector<int32_t> model_offsets(const std::vector<ArchitectureCount>& architectures) {
  std::vector<int32_t> first(architectures.size(), 0);
  int32_t next = 0;
  for (size_t i = 0; i < architectures.size(); ++i) {
    first[i] = next;
    next += architectures[i].count;
  }
  return first;
}

}  // namespace

std::string partition_text(const ArrayPartition& partition) {
  std::vector<std::pair<std::string, std::vector<int32_t>>> groups;  // in first-appearance order
  for (const SubArraySpec& s : partition) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == s.model; });
    if (it == groups.end()) {
      groups.push_back({s.model, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(s.width);
  }
  std::string out;
  for (size_t i = 0; i < groups.size(); ++i) {
    out += fmt::format("{}{}:{}", i == 0 ? "" : ", ", groups[i].first, fmt::join(groups[i].second, "+"));
  }
  return out;
}

void validate_array_partition(const std::vector<ArchitectureCount>& architectures,
                              const ArrayPartition& partition) {
  validate_architectures(architectures);
  if (partition.empty()) throw Error("array partition is empty; give one sub-array per group of models");
  std::vector<int64_t> covered(architectures.size(), 0);
  for (const SubArraySpec& s : partition) {
    const size_t a = architecture_index(architectures, s.model, partition);
    if (s.width < 1) {
      throw Error(fmt::format("partition {}: sub-array width {} of '{}' must be >= 1",
                              partition_text(partition), s.width, s.model));
    }
    covered[a] += s.width;
  }
  for (size_t a = 0; a < architectures.size(); ++a) {
    if (covered[a] != architectures[a].count) {
      throw Error(fmt::format("partition {}: {} widths cover {} models, the array has {}",
                              partition_text(partition), architectures[a].model, covered[a],
                              architectures[a].count));
    }
  }
}

std::vector<ir::Graph> sub_array_steps(const std::vector<ArchitectureCount>& architectures,
                                       const ArrayPartition& partition,
                                       const transforms::OptimizerConfig& optimizer) {
  validate_array_partition(architectures, partition);
  check_lists(optimizer, static_cast<int32_t>(total_count(architectures)));
  std::vector<int32_t> next_model = model_offsets(architectures);
  std::vector<ir::Graph> parts;
  parts.reserve(partition.size());
  for (const SubArraySpec& s : partition) {
    const size_t a = architecture_index(architectures, s.model, partition);
    parts.push_back(
        build_step(architectures[a], s.width, slice_optimizer(optimizer, next_model[a], s.width)));
    next_model[a] += s.width;
  }
  return parts;
}

StepGraphCache::StepGraphCache(std::vector<ArchitectureCount> architectures,
                               transforms::OptimizerConfig optimizer)
    : architectures_(std::move(architectures)), optimizer_(std::move(optimizer)) {
  validate_architectures(architectures_);
  check_lists(optimizer_, static_cast<int32_t>(total_count(architectures_)));
}

const ir::Graph& StepGraphCache::get(const std::string& model, int32_t width) {
  for (size_t i = 0; i < architectures_.size(); ++i) {
    if (architectures_[i].model == model) return get(i, width);
  }
  throw Error(fmt::format("step graph cache: model '{}' is not in the array", model));
}

const ir::Graph& StepGraphCache::get(size_t architecture, int32_t width) {
  if (architecture >= architectures_.size()) {
    throw Error(fmt::format("step graph cache: architecture index {} out of range [0, {})", architecture,
                            architectures_.size()));
  }
  const ArchitectureCount& a = architectures_[architecture];
  if (width < 1 || width > a.count) {
    throw Error(
        fmt::format("step graph cache: width {} of '{}' must be in [1, {}]", width, a.model, a.count));
  }
  std::unique_ptr<ir::Graph>& slot = graphs_[{architecture, width}];
  if (!slot) {
    const int32_t first = model_offsets(architectures_)[architecture];
    slot = std::make_unique<ir::Graph>(build_step(a, width, slice_optimizer(optimizer_, first, width)));
  }
  return *slot;
}

std::vector<ir::Graph> StepGraphCache::steps(const ArrayPartition& partition) {
  validate_array_partition(architectures_, partition);
  std::vector<ir::Graph> parts;
  parts.reserve(partition.size());
  for (const SubArraySpec& s : partition) parts.push_back(get(s.model, s.width));
  return parts;
}

}  // namespace mutwo::policies
