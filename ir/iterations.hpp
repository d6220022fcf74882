#pragma once
// The warm-up and timed iteration counts of a measurement (run, profile, bench-ops, bench-host), one
// rule for all four: what each checks before it times anything.
#include <algorithm>
#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::ir {

// Throws Error "<what>: ..." for warm-up < 0, timed < 1, or either past `most` (each command's bound:
// kMaxRunSteps, kMaxProfileSteps, kMaxBenchLaunches, kMaxBenchCopies).
inline void check_iterations(int32_t warmup, int32_t timed, int32_t most, std::string_view what) {
  if (warmup < 0) throw Error(fmt::format("{}: warm-up iterations {} must be >= 0", what, warmup));
  if (timed < 1) throw Error(fmt::format("{}: timed iterations {} must be >= 1", what, timed));
  if (std::max(warmup, timed) > most) {
    throw Error(fmt::format("{}: {} warm-up and {} timed iterations: each must be at most {}", what, warmup,
                            timed, most));
  }
}

}  // namespace mutwo::ir
