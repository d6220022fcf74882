#pragma once
// Replay of a DTR operator log under a memory budget, with the semantics of DTR's simulator simrd
// (RuntimeV2EagerOptimized, simrd/runtime/v2.py; written up in tests/fixtures/dtr/SEMANTICS.md), so its
// answers on DTR's own logs are DTR's answers:
// - storages, not tensors, hold memory; a view shares its base's storage; evicting a storage
//   undefines all of its tensors; a storage's compute is the summed time of its distinct ops;
// - compute(op): inputs are used (staleness reset), locked, rematerialised recursively when evicted
//   (their producer runs again; all of its outputs come back), then storages are evicted by the
//   heuristic while the op's outputs do not fit, then the op runs (clock += time);
// - a storage whose last handle is released is evicted at once (eager eviction) unless pinned;
//   pinned storages (constants, tensors held at the end) are never evicted nor freed;
// - the run fails with OOM when nothing is left to evict, and with remat_limit_exceeded when the
//   rematerialisation time passes the limit (checked after every materialisation).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/dtr_log.hpp"
#include "sim/eviction_heuristic.hpp"

namespace mutwo::sim {

enum class DtrOutcome : uint8_t { ok, oom, remat_limit_exceeded };
std::string_view dtr_outcome_name(DtrOutcome outcome);  // "ok", "OOM", "remat_limit_exceeded"

struct DtrReplayResult {
  DtrOutcome outcome = DtrOutcome::ok;
  int64_t budget_bytes = 0;
  int64_t clock_ns = 1;          // simrd's clock: starts at 1, + every op run (remats included)
  int64_t model_compute_ns = 0;  // first runs
  int64_t remat_compute_ns = 0;
  int64_t peak_bytes = 0;
  int64_t final_bytes = 0;
  int32_t remat_ops = 0;         // ops re-run to rebuild a tensor
  int32_t remat_collateral = 0;  // sibling outputs rebuilt along with them
  int32_t evictions = 0;         // all evictions, eager ones included
  int32_t evictions_eager = 0;   // of storages whose last handle was released
  int64_t op_count = 0;          // ops run for the first time before the end or the failure
};

// Fails (outcome oom / remat_limit_exceeded) rather than throwing: a failed replay is a result.
// remat_limit_ns < 0: no limit.
DtrReplayResult replay_dtr_log(const io::DtrLog& log, int64_t budget_bytes, double remat_limit_ns,
                               const EvictionHeuristic& heuristic);

// simrd's baseline (RuntimeV1, infinite budget): storages freed when their last handle goes, pinned
// ones included; the peak is taken right after each op allocates its outputs.
struct DtrBaseline {
  int64_t peak_bytes = 0;
  int64_t compute_ns = 0;  // every op once
  int64_t constant_bytes = 0;
};
DtrBaseline dtr_baseline(const io::DtrLog& log);

// The paper's "pareto" protocol (simrd_experiments/eval/pareto/run.py): budget = int(peak * ratio),
// remat limit = baseline compute * (overhead_limit - 1).
struct DtrSweepRow {
  std::string heuristic;  // EvictionHeuristic::name()
  double ratio = 0;
  DtrReplayResult result;
  double overhead = 0;  // clock / baseline compute; meaningful only when outcome == ok
};
inline constexpr double kDtrOverheadLimit = 2.0;
// The largest overhead limit a sweep takes. A thrashing run replays rematerialisations until the
// limit, so the time grows with it: inceptionv4's 60 runs (every heuristic and paper ratio) took 17 s
// at 10 and 45 s at 30 on 2 cores, and 1e9 had not ended after 100 s.
inline constexpr double kDtrMaxOverheadLimit = 100.0;
const std::vector<double>& dtr_paper_ratios();  // 0.1, 0.2, ..., 1.0
// Every heuristic at every ratio (rows heuristic-major, in the order given). The runs are
// independent and spread over `jobs` threads (0: one per hardware thread; support/parallel_for.hpp);
// the rows, and which run's error is thrown (the first in row order), do not depend on it. Throws
// mutwo::Error before any run, naming `log_name` where the log is at fault, on a ratio that is not a
// finite number > 0, a budget (ratio x peak) past int64, a ratio or heuristic given twice, an
// overhead limit that is not a finite number in [1, kDtrMaxOverheadLimit], and a log check_dtr_sweep
// refuses.
std::vector<DtrSweepRow> sweep_dtr_log(const io::DtrLog& log, const DtrBaseline& baseline,
                                       const std::vector<double>& ratios,
                                       const std::vector<const EvictionHeuristic*>& heuristics, int jobs = 1,
                                       double overhead_limit = kDtrOverheadLimit,
                                       std::string_view log_name = "(unnamed)");

// Throws mutwo::Error "log <log_name>: ..." when the whole log (after START) gives a sweep nothing to
// measure: no op, no compute (every CALL's and MUTATE's TIME is 0: each overhead is a ratio over it),
// or a baseline peak of 0 bytes (every budget would be 0 B). Single ops of TIME 0 or MEMORY 0 are
// ordinary (DTR's logs have views and cheap ops).
void check_dtr_sweep(const io::DtrLog& log, const DtrBaseline& baseline, std::string_view log_name);

}  // namespace mutwo::sim
