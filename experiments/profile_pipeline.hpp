#pragma once
// The profile pipeline (`mutwo profile`): time every op of an array's plain training step through
// the executor interface (1 warm-up + 3 measured steps by default, the median per op, as μ-TWO
// profiles), write the measured trace the simulator's `measured` cost source replays, and
// optionally store the op times beside the analytic model's prediction of each op.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "experiments/exec_target.hpp"
#include "experiments/run_pipeline.hpp"
#include "io/trace_file.hpp"
#include "ir/executor.hpp"

namespace mutwo::experiments {

struct ProfileRequest {
  ScheduleSource source;
  std::string device;  // empty: the executor's default
  uint64_t seed = 0;
  int32_t warmup_iterations = 1;
  int32_t measured_iterations = 3;
  bool time_host = false;  // host issue times on the cpu too (ir::ProfileOptions::time_host)
  std::string output;  // the measured trace to write
  // Results database for the op times; empty: not stored. `gpu` (empty: the CUDA device's catalog
  // GPU, else a100-40gb) is the catalog GPU of the analytic predictions stored beside them.
  std::string db;
  std::string gpu;
  std::function<bool()> stop_requested;  // ir::ProfileOptions::stop_requested
};

struct ProfileOutcome {
  ExecTarget target;
  ir::Trace trace;
  std::optional<int64_t> run_id;  // when stored
};

// Throws mutwo::Error from any step (an unknown device, OOM while profiling, a file or database
// that cannot be written).
// No output may name a file the request reads (its model or schedule file, its --gpu file): checked
// before anything runs, by the pipeline and, before it loads the executor, by the command.
void check_profile_outputs(const ProfileRequest& request);

ProfileOutcome profile_pipeline(const ProfileRequest& request, ir::Executor& executor);

}  // namespace mutwo::experiments
