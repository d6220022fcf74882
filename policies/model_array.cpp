#include "policies/model_array.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "profiles/error.hpp"

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

std::string partition_text(const std::vector<int32_t>& partition) { return fmt::format("{}", fmt::join(partition, ",")); }

void validate_partition(const ModelArray& array, const std::vector<int32_t>& partition) {
  if (array.count < 1) throw Error(fmt::format("model array of '{}': count {} must be >= 1", array.model, array.count));
  if (partition.empty()) throw Error("partition is empty; give the sub-array sizes, e.g. 2,2");
  int64_t sum = 0;
  for (int32_t size : partition) {
    if (size < 1) {
      throw Error(fmt::format("partition {}: sub-array size {} must be >= 1", partition_text(partition), size));
    }
    sum += size;
  }
  if (sum != array.count) {
    throw Error(fmt::format("partition {} covers {} models, the array has {}", partition_text(partition), sum,
                            array.count));
  }
}

std::vector<profiles::Graph> sub_array_steps(const ModelArray& array, const std::vector<int32_t>& partition) {
  validate_partition(array, partition);
  const profiles::OptimizerConfig& opt = array.optimizer;
  check_list("lr", opt.lr, array.count);
  check_list("momentum", opt.momentum, array.count);
  check_list("beta1", opt.beta1, array.count);
  check_list("beta2", opt.beta2, array.count);
  check_list("eps", opt.eps, array.count);
  check_list("weight_decay", opt.weight_decay, array.count);

  std::vector<profiles::Graph> parts;
  int32_t first = 0;
  for (int32_t size : partition) {
    profiles::ModelConfig config = array.config;
    config.width = size;
    profiles::OptimizerConfig sub = opt;
    sub.lr = slice(opt.lr, first, size);
    sub.momentum = slice(opt.momentum, first, size);
    sub.beta1 = slice(opt.beta1, first, size);
    sub.beta2 = slice(opt.beta2, first, size);
    sub.eps = slice(opt.eps, first, size);
    sub.weight_decay = slice(opt.weight_decay, first, size);
    parts.push_back(profiles::build_training_step(profiles::build_model(array.model, config), sub));
    first += size;
  }
  return parts;
}

}  // namespace mutwo::policies
