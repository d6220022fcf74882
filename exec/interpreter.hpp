#pragma once
// The Schedule interpreter: executes compute, recompute, swap_out, swap_in and free exactly as
// listed (ir/schedule_check.hpp's residency model), on a DeviceBackend, one training step per
// step() call. Persistent state (weights, gradients, optimizer state) lives across steps, on the
// device or, for Schedule::host_state, in pinned host buffers; inputs and labels are uploaded again
// at the start of every step.
//
// Memory accounting follows the memory rule (ir/memory_rule.hpp), as the simulator does:
// each live tensor counts its allocation bytes; what is resident at the start from the step's
// start; an op's request from its start (the workspace until its end); a swap_in's tensor from its
// start; a free releases. A resident
// gradient an op writes is overwritten in place (released just before the op, so the device's
// allocator never holds two copies). With a limit, an allocation that would take the accounted
// bytes over it stops the step as out of memory — how a smaller device is emulated on the CPU.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "exec/device_backend.hpp"
#include "exec/kernel.hpp"
#include "ir/schedule.hpp"
#include "ir/unrolled_schedule.hpp"

namespace mutwo::exec {

struct InterpreterOptions {
  uint64_t seed = 0;               // leaf values and dropout masks (leaf_init.hpp, kernel.hpp)
  int64_t memory_limit_bytes = 0;  // accounted cap; <= 0: none
  bool time_ops = false;           // time every compute on the device (the profiler's op timers)
  // Time each compute's issue on the host (steady_clock from before() to after(), the op timers'
  // own calls taken out): the dispatch of its ATen ops and the launch of their kernels, what the
  // simulator's host timeline charges an op (the profiler on a GPU; on the cpu issue is the work).
  // The device is synchronised before each timed issue, so no launch waits on a full launch queue
  // (which would time the GPU, not the host): steps timed so run slower, and their op timers would
  // include the launch; the profiler times ops and host issue in separate steps.
  bool time_host = false;
  // Global index of the schedule's first model in the model array: seeds leaves and dropout, so a
  // schedule of model m alone starts and draws as model m of a larger array does.
  int32_t first_model = 0;
};

struct StepResult {
  bool oom = false;
  ir::InstrId oom_instruction = ir::kNoId;
  std::string oom_message;
  std::vector<double> losses;        // per model of the array: the sum of its loss tensors
  int64_t accounted_peak_bytes = 0;  // highest accounted bytes in the step
  ir::InstrId peak_instruction = ir::kNoId;
  int64_t resident_bytes = 0;  // accounted bytes at the step's start
  int64_t step_time_ns = 0;    // from the first instruction's issue to the device's completion
};

class Interpreter {
 public:
  // Validates the schedule (ir::validate_schedule), then allocates and initialises the
  // persistent state on the backend's device. Throws mutwo::Error on an invalid schedule or an
  // op kind without a kernel (naming the op) before running anything.
  Interpreter(const ir::Schedule& schedule, DeviceBackend& backend, InterpreterOptions options = {});

  // Runs one training step. An out-of-memory error (accounted limit or the device's allocator) is
  // caught and reported in the result; the step's transient tensors are released either way.
  // Only the OOM is caught: other errors propagate.
  // wait = false (steps back to back, RunOptions::back_to_back): no step timer and no wait for the
  // device; the backend marks the step's end (mark_step_end) and its losses are read later by
  // back_to_back_losses (step_time_ns and losses stay empty here).
  StepResult step(bool wait = true);
  // The losses of the k-th step run with wait = false (0-based, in issue order; waits for the device).
  std::vector<double> back_to_back_losses(size_t k) const;

  // Runs unrolled iterations of this schedule (ir/unrolled_schedule.hpp: the order the
  // simulator replays, wrapped boundaries included) without waiting: as program.iterations steps
  // run with wait = false, except that the iterations overlap as listed. The batch uploads are its
  // instructions; the backend marks each iteration's end (end_step, mark_step_end) after that
  // iteration's last instruction; each iteration's losses are read by back_to_back_losses. A wrapped
  // program's last partner (the head of one more iteration) runs too and is dropped. The result
  // carries the peak and OOM of the whole run. Throws mutwo::Error when the program is not this
  // schedule's.
  StepResult run_iterations(const ir::UnrolledSchedule& program);

  // Issues one step's instructions without waiting or reading results, drawing random numbers from
  // the default generator: CUDA-graph capture records this once; finish_captured_step() then releases the
  // step's host-side handles (the graph keeps its memory) and advances the step count.
  // prepare_capture() first uploads the step's inputs and keeps them on the device: the captured step
  // reads them there (a static batch, replayed), as no host copy can be part of a capture.
  void prepare_capture();
  void issue_step();
  void finish_captured_step();

  int64_t steps_done() const { return step_ - 1; }
  int32_t model_count() const { return models_; }
  // Between steps: the value of a persistent tensor (on the device, or its host home when the
  // schedule keeps it there), or of an input or label (the host copy uploaded at every step's
  // start); undefined for other tensors (and for gradients kept on the host).
  const at::Tensor& tensor(ir::TensorId id) const;
  // Replaces a persistent tensor's value (tests start two interpreters from the same state).
  void set_tensor(ir::TensorId id, const at::Tensor& value);
  const ir::Schedule& schedule() const { return schedule_; }
  DeviceBackend& backend() { return backend_; }
  // Switches the timing of the next steps (InterpreterOptions::time_ops, time_host).
  void set_timing(bool time_ops, bool time_host) {
    options_.time_ops = time_ops;
    options_.time_host = time_host;
  }
  // With time_host: the host time of op `op`'s compute in the last step (0 when it was not computed
  // in it, or computed only as a recompute).
  int64_t op_host_ns(ir::OpId op) const { return op_host_ns_.at(static_cast<size_t>(op)); }

 private:
  struct OutOfMemory {
    ir::InstrId instruction;
    std::string message;
  };

  // keep_uploaded: inputs already on the device stay (a captured step's static batch).
  void upload_step_inputs(bool keep_uploaded = false);
  void upload_input(const ir::Instruction& upload);
  StepResult caught_oom(const std::exception& error, ir::InstrId current);
  // Runs `issue` (one step's or several iterations' instructions) with the handling both share: an
  // out-of-memory stops it and is reported (at *current); any other error propagates after the
  // device is drained and the transients released. Then the peak, and the transients released.
  StepResult guarded(const std::function<void(StepResult&)>& issue, const ir::InstrId* current);
  void issue_instructions(ir::InstrId* current);
  void execute(const ir::Instruction& instruction);
  void run_host_op(const ir::Instruction& instruction);
  void run_op(const ir::Instruction& instruction, bool recompute);
  void allocate(int64_t bytes, const ir::Instruction& instruction, std::string_view what);
  // Accounts bytes against the limit (OutOfMemory at `instruction`, the message "out of memory
  // <where()>: ..." built only then) and the peak. Defined and used in interpreter.cpp only.
  template <typename Where>
  void reserve(int64_t bytes, ir::InstrId instruction, const Where& where, std::string_view what);
  void release_tensor(ir::TensorId id);
  void release_transients();
  std::vector<double> read_losses(const std::vector<at::Tensor>& loss_values) const;

  const ir::Schedule& schedule_;
  const ir::Graph& graph_;
  DeviceBackend& backend_;
  InterpreterOptions options_;
  std::vector<ModelAxis> axes_;
  std::vector<OpRuntime> runtime_;              // per op
  std::vector<std::vector<at::Tensor>> cache_;  // per op: kernel constants
  std::vector<int32_t> op_first_model_;
  std::vector<int32_t> op_model_base_;  // per op: first global model of its sub-array
  int32_t models_ = 1;

  std::vector<at::Tensor> device_;      // per tensor: device copy (undefined when not resident)
  std::vector<at::Tensor> host_;        // per tensor: host copy from swap_out (this step)
  std::vector<at::Tensor> home_;        // per host_state weight / optimizer state: its pinned home
  std::vector<uint8_t> at_start_;       // per tensor: on the device at the step's start
  std::vector<at::Tensor> step_input_;  // per input/label tensor: the value uploaded each step
  std::vector<at::Tensor> captured_inputs_;  // prepare_capture()'s uploads, alive for the graph's replays
  std::vector<int32_t> alloc_stream_;   // per tensor: stream its device copy was allocated on
  std::vector<int64_t> rounded_bytes_;
  std::vector<at::Tensor> loss_values_;  // loss tensors of this step, by tensor id
  std::vector<at::Tensor>* loss_sink_ = &loss_values_;  // where run_op keeps a loss it computes
  std::vector<std::vector<at::Tensor>> back_to_back_losses_;  // loss_values_ of each step run with wait = false
  int64_t in_use_bytes_ = 0;
  int64_t peak_bytes_ = 0;
  ir::InstrId peak_instruction_ = ir::kNoId;
  int64_t step_ = 1;
  std::vector<int64_t> op_host_ns_;  // per op: host issue time in the last step (time_host)
  int64_t timer_ns_ = 0;             // host time inside the op timers' calls of the current instruction
};

}  // namespace mutwo::exec
