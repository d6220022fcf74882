#pragma once
// The one median of the project: measured step times, per-op profiled durations, the measured cost
// source's look-up and the error summaries of `mutwo compare` all take it from here.
#include <cstdint>
#include <vector>

namespace mutwo::support {

// What the median of an even count is. Each user states its rule where it calls median():
// - mean_of_middles: the mean of the two middle values; for integers rounded down
//   ({4, 1, 3, 2} -> 2, {10, 20} -> 15; as doubles {4, 1, 3, 2} -> 2.5);
// - lower_middle: the lower of the two ({10, 40} -> 10): a value that was really measured.
enum class EvenMedian { mean_of_middles, lower_middle };

// The middle value of `values` (any order) for an odd count, the rule's value for an even count,
// 0 for none.
int64_t median(std::vector<int64_t> values, EvenMedian rule);
double median(std::vector<double> values, EvenMedian rule);

}  // namespace mutwo::support
