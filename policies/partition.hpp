#pragma once
// Sub-array partitions of a model array (μ-TWO, Purandare et al., MLSys 2023: the search splits
// the array into horizontally fused sub-arrays and multiplexes them). Each architecture's count
// is split by an integer partition; architectures never share a sub-array.
#include <cstdint>
#include <vector>

#include "policies/model_array.hpp"

namespace mutwo::policies {

// Every partition of n into positive parts, each in non-increasing order, in reverse
// lexicographic order: {n}, {n-1,1}, {n-2,2}, {n-2,1,1}, ..., {1,...,1} (n = 4: 4 | 3,1 | 2,2 |
// 2,1,1 | 1,1,1,1). max_parts > 0 keeps only partitions with at most that many parts (same
// order); 0 = unlimited. p(8) = 22, p(32) = 8349. Throws mutwo::Error on n < 1 or max_parts < 0.
std::vector<std::vector<int32_t>> integer_partitions(int32_t n, int32_t max_parts = 0);

// What array_partitions enumerates. Every option at its default keeps everything.
struct PartitionOptions {
  // > 0: drops array partitions with more sub-arrays in all (over every architecture) than this.
  // Each architecture needs one, so a value below the number of architectures is an error.
  int32_t max_sub_arrays = 0;
  // > 1: drops integer partitions with a part narrower than this, except that an architecture
  // whose count is below min_width keeps its single partition {count} (it cannot be split wider).
  int32_t min_width = 1;
  // > 0: drops integer partitions with a part wider than this (all-ones always survives).
  int32_t max_width = 0;
  // > 0: stops after this many array partitions, in enumeration order (the rest are dropped;
  // array_partition_count still tells how many the other options keep).
  int64_t max_partitions = 0;
};
using PartitionPruneOptions = PartitionOptions;  // the name search.hpp uses

// The cartesian product of each architecture's kept integer partitions, in the order: the first
// architecture's partitions outermost (integer_partitions order), the last innermost. Each array
// partition lists the architectures in list order, each architecture's widths non-increasing:
// bert-base:2 + vit-b16:3 -> {bert-base 2, vit-b16 3}, {bert-base 2, vit-b16 2, vit-b16 1}, ...,
// {bert-base 1, bert-base 1, vit-b16 1, vit-b16 1, vit-b16 1} (2 x 3 = 6). Throws mutwo::Error on
// bad architectures (validate_array_partition's rules) or a negative / inconsistent option.
std::vector<ArrayPartition> array_partitions(const std::vector<ArchitectureCount>& architectures,
                                             const PartitionOptions& options = {});

// How many array partitions the options keep, ignoring max_partitions (no enumeration of the
// product; saturates at INT64_MAX).
int64_t array_partition_count(const std::vector<ArchitectureCount>& architectures,
                              const PartitionOptions& options = {});

}  // namespace mutwo::policies
