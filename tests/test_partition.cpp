// Sub-array partitions: integer partitions of one count (order, counts p(n)), their cartesian
// product over a mixed array, and what each pruning option drops. Counts are the partition
// numbers p(n) (OEIS A000041); lists are written out by hand.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "policies/partition.hpp"
#include "support/error.hpp"

using namespace mutwo;
using mutwo::policies::ArchitectureCount;
using mutwo::policies::ArrayPartition;
using mutwo::policies::PartitionOptions;

namespace {

using Parts = std::vector<std::vector<int32_t>>;

std::vector<ArchitectureCount> arch(std::vector<std::pair<std::string, int32_t>> counts) {
  std::vector<ArchitectureCount> out;
  for (auto& [model, count] : counts) out.push_back({model, count, {}});
  return out;
}

std::vector<std::string> texts(const std::vector<ArrayPartition>& ps) {
  std::vector<std::string> out;
  for (const ArrayPartition& p : ps) out.push_back(policies::partition_text(p));
  return out;
}

}  // namespace

TEST_CASE("integer partitions of 4 and 5 come in reverse lexicographic order") {
  CHECK(policies::integer_partitions(1) == Parts{{1}});
  CHECK(policies::integer_partitions(4) == Parts{{4}, {3, 1}, {2, 2}, {2, 1, 1}, {1, 1, 1, 1}});
  CHECK(policies::integer_partitions(5) ==
        Parts{{5}, {4, 1}, {3, 2}, {3, 1, 1}, {2, 2, 1}, {2, 1, 1, 1}, {1, 1, 1, 1, 1}});
}

TEST_CASE("integer partition counts are the partition numbers p(n)") {
  // p(1..10) = 1, 2, 3, 5, 7, 11, 15, 22, 30, 42; p(32) = 8349.
  const std::vector<size_t> p{1, 2, 3, 5, 7, 11, 15, 22, 30, 42};
  for (int32_t n = 1; n <= 10; ++n)
    CHECK(policies::integer_partitions(n).size() == p[static_cast<size_t>(n - 1)]);
  CHECK(policies::integer_partitions(8).size() == 22);
  const Parts p32 = policies::integer_partitions(32);
  CHECK(p32.size() == 8349);
  // Each is non-increasing and sums to 32.
  bool all_ok = true;
  for (const auto& parts : p32) {
    int32_t sum = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      sum += parts[i];
      if (i > 0 && parts[i] > parts[i - 1]) all_ok = false;
    }
    if (sum != 32) all_ok = false;
  }
  CHECK(all_ok);
  CHECK(p32.front() == std::vector<int32_t>{32});
  CHECK(p32.back() == std::vector<int32_t>(32, 1));
}

TEST_CASE("max_parts keeps only partitions with that many parts or fewer") {
  // 6 in at most 2 parts: 6 | 5,1 | 4,2 | 3,3.
  CHECK(policies::integer_partitions(6, 2) == Parts{{6}, {5, 1}, {4, 2}, {3, 3}});
  // 5 in at most 3 parts: p(5) = 7 less 2,1,1,1 and 1,1,1,1,1.
  CHECK(policies::integer_partitions(5, 3) == Parts{{5}, {4, 1}, {3, 2}, {3, 1, 1}, {2, 2, 1}});
  CHECK(policies::integer_partitions(5, 1) == Parts{{5}});
  CHECK(policies::integer_partitions(3, 0).size() == 3);  // 0: unlimited
}

TEST_CASE("integer partitions refuse n < 1 and a negative max_parts") {
  CHECK_THROWS_WITH_AS(policies::integer_partitions(0), "integer_partitions: n 0 must be >= 1", Error);
  CHECK_THROWS_WITH_AS(policies::integer_partitions(3, -1), "integer_partitions: max_parts -1 must be >= 0",
                       Error);
}

TEST_CASE("a mixed array's partitions are the product of each architecture's, first outermost") {
  // bert-base:2 has {2}, {1,1}; vit-b16:3 has {3}, {2,1}, {1,1,1}: 2 x 3 = 6.
  const auto a = arch({{"bert-base", 2}, {"vit-b16", 3}});
  const std::vector<ArrayPartition> ps = policies::array_partitions(a, {});
  CHECK(texts(ps) == std::vector<std::string>{"bert-base:2, vit-b16:3", "bert-base:2, vit-b16:2+1",
                                              "bert-base:2, vit-b16:1+1+1", "bert-base:1+1, vit-b16:3",
                                              "bert-base:1+1, vit-b16:2+1", "bert-base:1+1, vit-b16:1+1+1"});
  REQUIRE(ps[1].size() == 3);
  CHECK(ps[1][0].model == "bert-base");
  CHECK(ps[1][0].width == 2);
  CHECK(ps[1][2].model == "vit-b16");
  CHECK(ps[1][2].width == 1);
  CHECK(policies::array_partition_count(a, {}) == 6);
}

TEST_CASE("each pruning option drops exactly the partitions it documents") {
  const auto a = arch({{"bert-base", 2}, {"vit-b16", 3}});
  PartitionOptions o;
  o.max_sub_arrays = 3;  // 1+1, 1+2, 2+1 sub-arrays survive; 1+3, 2+2, 2+3 are dropped
  CHECK(texts(policies::array_partitions(a, o)) == std::vector<std::string>{"bert-base:2, vit-b16:3",
                                                                            "bert-base:2, vit-b16:2+1",
                                                                            "bert-base:1+1, vit-b16:3"});
  CHECK(policies::array_partition_count(a, o) == 3);

  o = {};
  o.min_width = 2;  // bert {1,1} and vit {2,1}, {1,1,1} have a part of 1
  CHECK(texts(policies::array_partitions(a, o)) == std::vector<std::string>{"bert-base:2, vit-b16:3"});
  o.min_width = 3;  // bert-base's count 2 < 3 keeps its single partition {2}
  CHECK(texts(policies::array_partitions(a, o)) == std::vector<std::string>{"bert-base:2, vit-b16:3"});
  CHECK(policies::array_partition_count(a, o) == 1);

  o = {};
  o.max_width = 1;  // only all-ones survives
  CHECK(texts(policies::array_partitions(a, o)) == std::vector<std::string>{"bert-base:1+1, vit-b16:1+1+1"});
  o.max_width = 2;  // vit {3} dropped: 2 x 2 = 4
  CHECK(policies::array_partitions(a, o).size() == 4);
  CHECK(policies::array_partition_count(a, o) == 4);

  o = {};
  o.max_partitions = 4;  // the first 4 of the 6, in enumeration order; the count ignores the cap
  CHECK(texts(policies::array_partitions(a, o)) ==
        std::vector<std::string>{"bert-base:2, vit-b16:3", "bert-base:2, vit-b16:2+1",
                                 "bert-base:2, vit-b16:1+1+1", "bert-base:1+1, vit-b16:3"});
  CHECK(policies::array_partition_count(a, o) == 6);
}

TEST_CASE("the partition count agrees with the enumeration under every option") {
  // bert-base:7 x vit-b16:5 = p(7) 15 x p(5) 7 = 105 without options.
  const auto a = arch({{"bert-base", 7}, {"vit-b16", 5}});
  CHECK(policies::array_partitions(a, {}).size() == 105);
  for (int32_t max_sub : {0, 2, 3, 5, 8}) {
    for (int32_t min_w : {1, 2, 3, 6}) {
      for (int32_t max_w : {0, 2, 4}) {
        if (max_w > 0 && min_w > max_w) continue;
        PartitionOptions o;
        o.max_sub_arrays = max_sub;
        o.min_width = min_w;
        o.max_width = max_w;
        CAPTURE(max_sub);
        CAPTURE(min_w);
        CAPTURE(max_w);
        CHECK(static_cast<int64_t>(policies::array_partitions(a, o).size()) ==
              policies::array_partition_count(a, o));
      }
    }
  }
  // At most 2 sub-arrays: one per architecture, so {7} x {5}: 1.
  PartitionOptions two;
  two.max_sub_arrays = 2;
  CHECK(policies::array_partition_count(a, two) == 1);
}

TEST_CASE("32 models enumerate in well under a second") {
  // The search's budget is 10 s for everything; p(32) = 8349, and 16 + 16 gives p(16)^2 = 231^2 = 53361.
  const auto start = std::chrono::steady_clock::now();
  CHECK(policies::array_partitions(arch({{"bert-base", 32}}), {}).size() == 8349);
  CHECK(policies::array_partitions(arch({{"bert-base", 16}, {"vit-b16", 16}}), {}).size() == 53361);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("array_partitions for 32 + (16 + 16) models: " << s << " s");
  CHECK(s < 2.0);
  // p(200) = 3,972,999,029,388: counted, not enumerated.
  CHECK(policies::array_partition_count(arch({{"bert-base", 200}}), {}) == 3972999029388);
}

TEST_CASE("bad architectures and options are refused naming the field") {
  CHECK_THROWS_WITH_AS(policies::array_partitions({}, {}), "model array: no architectures given", Error);
  CHECK_THROWS_WITH_AS(policies::array_partitions(arch({{"bert-base", 0}}), {}),
                       "model array of 'bert-base': count 0 must be >= 1", Error);
  CHECK_THROWS_WITH_AS(
      policies::array_partitions(arch({{"bert-base", 1}, {"bert-base", 2}}), {}),
      "model array: architecture 'bert-base' is listed twice; give one count per architecture", Error);
  PartitionOptions o;
  o.max_sub_arrays = 1;
  CHECK_THROWS_WITH_AS(policies::array_partitions(arch({{"bert-base", 2}, {"vit-b16", 2}}), o),
                       "partition option max_sub_arrays 1 is below the 2 architectures (one sub-array each)",
                       Error);
  o = {};
  o.min_width = 3;
  o.max_width = 2;
  CHECK_THROWS_WITH_AS(policies::array_partitions(arch({{"bert-base", 4}}), o),
                       "partition option min_width 3 is above max_width 2", Error);
  o = {};
  o.min_width = 0;
  CHECK_THROWS_WITH_AS(policies::array_partition_count(arch({{"bert-base", 4}}), o),
                       "partition option min_width 0 must be >= 1", Error);
  o = {};
  o.max_partitions = -1;
  CHECK_THROWS_WITH_AS(policies::array_partitions(arch({{"bert-base", 4}}), o),
                       "partition option max_partitions -1 must be >= 0", Error);
}
