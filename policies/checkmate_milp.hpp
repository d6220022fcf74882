#pragma once
// Checkmate's optimal rematerialisation MILP (Jain et al., "Checkmate: Breaking the Memory Wall with
// Optimal Tensor Rematerialization", MLSys 2020, section 4), solved with COIN-OR CBC.
//
// The problem is stated on op positions 0..T-1 (the base schedule's run order) and on "values":
// the device tensors the step allocates (one per non-persistent tensor). Stage t computes op t (the
// paper's frontier-advancing form, 4.5) and may first recompute earlier ops:
// - R[t][i] = 1: op i runs in stage t (R[t][t] = 1; i < t is a recompute);
// - S[t][v] = 1: value v is resident at the start of stage t (retained from stage t-1);
// - FREE[t][v][k]: v is released right after op k of stage t. Checkmate's binary FREE with its
//   hazard count is replaced by the equivalent disaggregated form FREE <= R[t][k],
//   FREE <= 1 - S[t+1][v], FREE <= 1 - R[t][j] for each later reader j of v in stage t, with FREE
//   continuous: at integral R and S its bound is 0 or 1, and freeing less only over-counts memory;
// - U[t][k]: bytes resident after op k of stage t allocated its outputs (4.4's linearised
//   recurrence), kept with the op's workspace under the budget.
// Recomputing op p rebuilds only its outputs that are not resident (ir/schedule_check.hpp), so an
// output v adds M_v * A[t][v] with continuous A >= R[t][p] - S[t][v].
// Values that can no longer be read by any op that may still run (directly, or through a chain of
// recomputable readers) get no S or R variables past that stage: this trims the model without
// changing its optimum.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mutwo::policies {

struct RematValue {
  int64_t bytes = 0;      // device bytes while resident (callers round to the allocator's block)
  int32_t producer = -1;  // op position; -1: resident at the start and never rebuilt (input, label)
};

struct RematOp {
  int64_t cost_ns = 0;          // duration of one (re)computation
  int64_t workspace_bytes = 0;  // held while the op runs
  bool recomputable = false;
  // Last stage a recompute may run in: a later op overwrites one of its persistent inputs in place.
  int32_t recompute_until = INT32_MAX;
  std::vector<int32_t> inputs;   // values read, ascending, no repeats
  std::vector<int32_t> outputs;  // values written, ascending
};

struct RematProblem {
  std::vector<RematOp> ops;  // position t is computed in stage t
  std::vector<RematValue> values;
  int64_t budget_bytes = 0;  // for values + workspace (persistent tensors already taken off)
};

struct MilpOptions {
  double time_limit_s = 10.0;  // CBC's wall-clock limit
};

enum class MilpStatus : uint8_t {
  optimal,      // proven optimal
  time_limit,   // feasible solution, optimality not proven within the time limit
  infeasible,   // proven: no schedule of this form fits the budget
  no_solution,  // time limit reached before any feasible solution
};
const char* milp_status_name(MilpStatus status);

struct RematSolution {
  MilpStatus status = MilpStatus::no_solution;
  // When status is optimal or time_limit:
  std::vector<std::vector<int32_t>> runs;      // runs[t]: ops run in stage t, ascending, ending in t
  std::vector<std::vector<int32_t>> retained;  // retained[t]: values with S[t][v] = 1; size T + 1
  int64_t recompute_ns = 0;                    // sum of costs of runs[t] before t
  int64_t peak_bytes = 0;                      // the model's bound: max over stages of U + workspace
  double lower_bound_ns = 0;                   // CBC's best bound on recompute_ns
  // Always:
  double solve_seconds = 0;
  int32_t variables = 0;
  int32_t constraints = 0;
};

// The one walk of an integral plan, which both the emitted schedule (policies/impl/checkmate.cpp)
// and the solution's peak follow: stage by stage, at its start every value freed that the stage does
// not read and the next one does not retain (in value order); then each run in turn, its outputs made
// resident, then its inputs and outputs freed (ascending) once no later run of the stage reads them
// and the next stage does not retain them. Values without a producer are resident from the start.
struct RematWalk {
  std::function<void(size_t stage, size_t op)> run;  // a run starts: op == stage computes, else recomputes
  std::function<void(int32_t value)> made;           // an output that was not resident becomes so
  std::function<void(size_t op)> ran;                // the run's outputs are resident
  std::function<void(int32_t value)> freed;
};
void walk_remat_plan(const RematProblem& p, const RematSolution& s, const RematWalk& walk);

// Builds and solves the MILP. Throws mutwo::Error on an inconsistent problem (ids out of range, a
// value read before its producer, negative sizes or costs, time limit <= 0).
RematSolution solve_remat_milp(const RematProblem& problem, const MilpOptions& options = {});

// The `checkmate` policy (policies/impl/checkmate.cpp) with non-default settings.
struct CheckmateOptions {
  int32_t max_ops =
      60;  // larger graphs are refused: the MILP has O(ops^2) binaries; CBC needs > 10 s near 50 ops
  MilpOptions milp;
};
class MemoryPolicy;
std::unique_ptr<MemoryPolicy> make_checkmate_policy(const CheckmateOptions& options = {});

}  // namespace mutwo::policies
