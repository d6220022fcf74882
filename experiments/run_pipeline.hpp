#pragma once
// The measured-run pipeline (`mutwo run`, the `measured` experiment kind): plan a model array with
// a policy (or read a schedule file), simulate the schedule on the catalog GPU, execute the same
// schedule through the executor interface (ir/executor.hpp, implemented by exec/'s module),
// and store prediction and measurement side by side in the results database. It reaches exec/
// only through that interface, so experiments/ builds and tests without LibTorch.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/device_spec.hpp"
#include "costmodel/op_cost_model.hpp"
#include "experiments/exec_target.hpp"
#include "experiments/records.hpp"
#include "ir/executor.hpp"
#include "ir/schedule.hpp"
#include "policies/model_array.hpp"
#include "sim/host_mode.hpp"
#include "sim/prediction.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::experiments {

// A model array as a user names it (flag or spec values as given; 0: the model's default).
struct ArrayRequest {
  std::string model;  // zoo name
  int32_t models = 1;
  std::vector<int32_t> partition;  // sub-array sizes; empty: all models in one
  int64_t batch_size = 0;
  int64_t seq_len = 0;
  int64_t image_size = 0;
  std::string dtype = "fp32";
  std::string precision = "fp32";  // ir/precision.hpp
  std::string optimizer = "adam";
  std::vector<double> lr;  // one, or one per model; empty: the optimizer's default
  std::string lean_ops = "none";  // transforms/lean_ops.hpp

  policies::ModelArray model_array() const;  // dtype and optimizer parsed; errors name the value
  std::vector<int32_t> sub_arrays() const;   // partition, or {models}
};

// What a measured run executes: a schedule file, or a model array.
struct ScheduleSource {
  std::string schedule_file;  // when set, `array` is ignored
  ArrayRequest array;
};

// The array's plain schedule (sub-arrays one after another) or the schedule file.
ir::Schedule plain_schedule(const ScheduleSource& source);

// The files the source reads, named by their flags (--schedule, --model for an exported model file):
// no output may name one.
support::FlagPaths input_files(const ScheduleSource& source);

// The runs row `run` and `profile` fill alike: the array (or schedule file), its sub-arrays,
// policy and sizes, where it ran, which mutwo, and the schedule's hash.
RunRecord executed_run_record(std::string kind, const ScheduleSource& source, const ir::Schedule& schedule,
                              const ExecTarget& target);

// The cost setup a prediction uses: the catalog GPU (with overrides) and the op cost model on it.
struct RunCost {
  costmodel::DeviceSpec gpu;
  std::unique_ptr<costmodel::OpCostModel> cost;
  std::string cost_source;          // the source's name, stored with the run
  std::vector<std::string> traces;  // measured trace files it read (part of the run's configuration)
};
// Builds the cost setup once the device is open: `executed_on` is the catalog GPU of the CUDA
// device the run executes on (ExecTarget::catalog_gpu), which the prediction should use unless the
// caller names a GPU of its own.
using RunCostFn = std::function<RunCost(const std::optional<std::string>& executed_on)>;

struct RunRequest {
  ScheduleSource source;
  std::string policy = "none";  // plans the array (ignored for a schedule file)
  std::string order = "best";   // multiplexed, back-to-back or best
  bool allow_oom = false;       // run the policy's best plan even when it does not fit
  bool state_offload = false;   // keep the model state on the host between uses (policies/state_offload.hpp)
  std::string optimizer_on = "best";  // with state_offload: the optimizer step on the device, the host or best
  std::string device;           // "cpu", "cuda", "cuda:N"; empty: the executor's default
  std::string memory_cap;       // a fraction of the CUDA device ("0.5") or a size ("2GiB"); empty: none
  uint64_t seed = 0;
  int32_t warmup_iterations = 3;
  int32_t timed_iterations = 20;
  bool cuda_graph = false;
  // Timed steps back to back (ir::RunOptions::back_to_back), predicted alike: the simulator's
  // steady state (the last of 3 iterations); false: steps timed one by one, one iteration predicted.
  bool back_to_back = true;
  // With back_to_back and a multiplexed plan of two or more sub-arrays: wrap the iteration
  // boundaries (ir/unrolled_schedule.hpp) in both the prediction and the timed program, the
  // merge weighed by the prediction's cost model. Throws mutwo::Error where the plan has one
  // sub-array, with --sync-each-step or --cuda-graph.
  bool wrap = false;
  // The prediction's host timeline (sim/host_mode.hpp). Empty: cuda-graph with cuda_graph, else
  // libtorch, as the executor issues the step (PyTorch's dispatch and a launch per kernel in front of
  // the GPU, every op issued from C++).
  std::string host_mode;
  RunCostFn cost;  // the prediction's cost setup, called once the device is open
  std::string save_schedule;  // write the executed schedule to this file; empty: not written
  std::string db;             // results database to store the run in; empty: not stored
  std::function<bool()> stop_requested;  // ir::RunOptions::stop_requested
};

struct RunOutcome {
  ExecTarget target;
  RunCost cost;
  int64_t memory_limit_bytes = 0;
  ir::Schedule schedule;
  bool multiplexed = false;
  std::string plan_note;  // the policy's one-line summary, or "schedule file"
  int64_t samples_per_step = 0;
  sim::Prediction prediction;
  sim::HostMode host_mode = sim::HostMode::libtorch;  // the prediction's host timeline
  ir::Measurement measurement;
  // The rows as stored (or as they would be): the run (config_hash of the run's configuration),
  // its prediction and its measurement.
  RunRecord record;
  PredictionRecord prediction_record;
  MeasurementRecord measurement_record;
  std::optional<int64_t> run_id;  // when stored
  // Why the run is not stored where the request named a database (empty when stored or not asked):
  // run_pipeline returns the measurement all the same, for the caller to show before it fails.
  std::string store_error;
};

// Throws ResultsDbError "<store_error>; measured, not stored: <measured>" when the run is not stored
// where asked; `measured` is how the caller shows the measurement (the CLI, having printed it, says so).
void throw_if_not_stored(const RunOutcome& out, std::string_view measured);

// The policy's best plan does not fit the memory limit (and allow_oom is not set). The message
// gives the sizes in bytes; the fields let a caller word it in its own units.
class InfeasiblePlanError : public Error {
 public:
  InfeasiblePlanError(std::string policy, std::string array, int64_t limit_bytes, int64_t needed_bytes);
  std::string policy;
  std::string array;  // "4 x resnet-mini [2,2]"
  int64_t limit_bytes = 0;
  int64_t needed_bytes = 0;
};

// What planning a run yields: the schedule, whether its sub-arrays are multiplexed, and the
// policy's note.
struct PlannedRun {
  ir::Schedule schedule;
  bool multiplexed = false;
  std::string note;
};
// The plan step of run_pipeline, alone: the schedule file as read, or the array planned by the
// request's policy, order, state offload, optimizer place and wrap at `limit_bytes`. `mutwo
// simulate --policy` plans through it too. Throws InfeasiblePlanError unless allow_oom.
PlannedRun plan_run(const RunRequest& request, const costmodel::OpCostModel& cost, int64_t limit_bytes);

// plan -> simulate -> run -> store. The measured step running out of memory is not an error here
// (outcome.measurement.oom, stored like any run); the caller decides. Throws InfeasiblePlanError,
// mutwo::Error from any step (an unknown policy, device or order, a bad cap, a database error).
RunOutcome run_pipeline(const RunRequest& request, ir::Executor& executor);

// The run's configuration as `mutwo run` hashes it (runs.config_hash) to recognise a repeat.
nlohmann::json run_config(const RunRequest& request, const RunOutcome& outcome);

MeasurementRecord measurement_record(const ir::Measurement& m, int64_t samples_per_step);

}  // namespace mutwo::experiments
