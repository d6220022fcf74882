#include "exec/interpreter.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "exec/leaf_init.hpp"
#include "exec/torch_types.hpp"
#include "ir/memory_rule.hpp"
#include "ir/schedule_check.hpp"
#include "support/error.hpp"

namespace mutwo::exec {
namespace {

using ir::InstrKind;
using ir::TensorRole;

bool is_step_input(TensorRole role) {
  return role == TensorRole::input || role == TensorRole::label;
}

int64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count();
}

std::string describe(const ir::Schedule& schedule, const ir::Instruction& instruction) {
  return fmt::format("instruction {} ({})", instruction.id,
                     ir::describe_instruction(schedule, instruction.id));
}

}  // namespace

Interpreter::Interpreter(const ir::Schedule& schedule, DeviceBackend& backend, InterpreterOptions options)
    : schedule_(schedule), graph_(schedule.graph), backend_(backend), options_(options) {
  ir::validate_schedule(schedule_);
  for (const ir::Instruction& instruction : schedule_.instructions) {
    if (!ir::runs_op(instruction.kind)) continue;
    const ir::Op& op = graph_.op(instruction.op);
    if (builtin_kernels()[static_cast<size_t>(op.kind)] == nullptr) {
      throw Error(
          fmt::format("op {} '{}' of graph '{}' has kind '{}', which mutwo cannot execute (an imported op "
                      "of unknown semantics); only graphs of known kinds run",
                      op.id, op.name, graph_.name, ir::kind_name(op.kind)));
    }
  }
  axes_ = model_axes(graph_);

  // Global model indices: the array's, where the plan ran sub-arrays out of the user's order
  // (SubArray::first_model), else consecutive in schedule order.
  const size_t op_count = graph_.ops.size();
  op_model_base_.assign(op_count, options_.first_model);
  models_ = 0;
  for (const ir::SubArray& s : schedule_.sub_arrays) {
    const int32_t first = s.first_model != ir::kNoId ? s.first_model : models_;
    for (ir::OpId id = s.first_op; id < s.end_op; ++id) {
      op_model_base_[static_cast<size_t>(id)] = options_.first_model + first;
    }
    models_ += s.width;
  }
  if (schedule_.sub_arrays.empty()) models_ = graph_.width;

  cache_.resize(op_count);
  runtime_.resize(op_count);
  for (size_t k = 0; k < op_count; ++k) {
    OpRuntime& r = runtime_[k];
    r.first_model = op_model_base_[k];
    r.base_name = base_name(graph_.ops[k].name);
    r.seed = options_.seed;
    r.axes = &axes_;
    r.cache = &cache_[k];
  }

  const size_t tensor_count = graph_.tensors.size();
  device_.resize(tensor_count);
  host_.resize(tensor_count);
  step_input_.resize(tensor_count);
  alloc_stream_.assign(tensor_count, ir::kComputeStream);
  loss_values_.resize(tensor_count);
  rounded_bytes_.resize(tensor_count);
  home_.resize(tensor_count);
  at_start_ = ir::resident_at_start_mask(schedule_);
  const at::Device device = backend_.device();
  for (size_t i = 0; i < tensor_count; ++i) {
    const ir::Tensor& t = graph_.tensors[i];
    rounded_bytes_[i] = ir::allocation_bytes(t.bytes);
    if (!ir::resident_at_start(t.role)) continue;
    if (!at_start_[i] && t.role == TensorRole::gradient) continue;  // on the host: written by backward
    const ir::OpId first_reader = t.consumers.empty() ? t.producer : t.consumers.front();
    const int32_t first_model =
        first_reader == ir::kNoId ? options_.first_model : op_model_base_[static_cast<size_t>(first_reader)];
    at::Tensor value = initial_leaf_value(graph_, t.id, axes_, first_model, options_.seed, device);
    if (is_step_input(t.role)) {
      // Kept on the host and uploaded at every step's start, as a data loader would.
      value = value.cpu();
      if (backend_.is_cuda()) value = value.pin_memory();
      step_input_[i] = value;
    } else if (!at_start_[i]) {
      // Model state whose home is the host: a pinned buffer kept across steps (swap_in reads it,
      // swap_out writes it).
      value = value.cpu();
      if (backend_.is_cuda()) value = value.pin_memory();
      home_[i] = value;
    } else {
      device_[i] = value;
    }
  }
}

const at::Tensor& Interpreter::tensor(ir::TensorId id) const {
  const auto i = static_cast<size_t>(id);
  if (is_step_input(graph_.tensor(id).role)) return step_input_.at(i);
  return home_.at(i).defined() ? home_[i] : device_.at(i);
}

void Interpreter::set_tensor(ir::TensorId id, const at::Tensor& value) {
  const ir::Tensor& t = graph_.tensor(id);
  if (is_step_input(t.role)) {
    step_input_.at(static_cast<size_t>(id)) = value.cpu().clone();
  } else if (home_.at(static_cast<size_t>(id)).defined()) {
    home_[static_cast<size_t>(id)].copy_(value.cpu());
  } else if (ir::is_persistent(t.role)) {
    device_.at(static_cast<size_t>(id)) = value.to(backend_.device()).clone();
  } else {
    throw Error(fmt::format("tensor {} '{}' has role {}; only persistent state and inputs can be set", id,
                            t.name, ir::role_name(t.role)));
  }
}

void Interpreter::upload_step_inputs(bool keep_uploaded) {
  in_use_bytes_ = 0;
  for (size_t i = 0; i < graph_.tensors.size(); ++i) {
    const ir::Tensor& t = graph_.tensors[i];
    if (is_step_input(t.role) && !(keep_uploaded && device_[i].defined())) {
      device_[i] = step_input_[i].to(backend_.device(), /*non_blocking=*/true, /*copy=*/true);
      alloc_stream_[i] = ir::kComputeStream;
    }
    if (at_start_[i]) in_use_bytes_ += rounded_bytes_[i];
    if (home_[i].defined()) host_[i] = home_[i];  // the host copy a swap_in loads
  }
  peak_bytes_ = in_use_bytes_;
  peak_instruction_ = ir::kNoId;
}

template <typename Where>
void Interpreter::reserve(int64_t bytes, ir::InstrId instruction, const Where& where, std::string_view what) {
  if (options_.memory_limit_bytes > 0 && in_use_bytes_ + bytes > options_.memory_limit_bytes) {
    throw OutOfMemory{instruction,
                      fmt::format("out of memory {}: {} B for {} with {} B in use would exceed the {} B limit",
                                  where(), bytes, what, in_use_bytes_, options_.memory_limit_bytes)};
  }
  in_use_bytes_ += bytes;
  if (in_use_bytes_ > peak_bytes_) {
    peak_bytes_ = in_use_bytes_;
    peak_instruction_ = instruction;
  }
}

void Interpreter::allocate(int64_t bytes, const ir::Instruction& instruction, std::string_view what) {
  reserve(bytes, instruction.id, [&] { return fmt::format("at {}", describe(schedule_, instruction)); }, what);
}

void Interpreter::release_tensor(ir::TensorId id) {
  at::Tensor& t = device_[static_cast<size_t>(id)];
  if (!t.defined()) return;
  in_use_bytes_ -= rounded_bytes_[static_cast<size_t>(id)];
  t.reset();
}

// An optimizer update on the host (Schedule::host_stream): the kernel runs on the host copies of
// its inputs and updates the weight's and state's copies in place (their homes); no device memory.
void Interpreter::run_host_op(const ir::Instruction& instruction) {
  const ir::Op& op = graph_.op(instruction.op);
  std::vector<at::Tensor> inputs;
  inputs.reserve(op.inputs.size());
  for (ir::TensorId id : op.inputs) {
    const at::Tensor& t = host_[static_cast<size_t>(id)];
    if (!t.defined()) {
      throw Error(fmt::format("{} runs on the host and reads tensor {} '{}', which has no host copy",
                              describe(schedule_, instruction), id, graph_.tensor(id).name));
    }
    inputs.push_back(t);
  }
  const KernelContext context{graph_, op, inputs, runtime_[static_cast<size_t>(op.id)]};
  run_kernel(context);
}

void Interpreter::run_op(const ir::Instruction& instruction, bool recompute) {
  const ir::Op& op = graph_.op(instruction.op);
  std::vector<at::Tensor> inputs;
  inputs.reserve(op.inputs.size());
  for (ir::TensorId id : op.inputs) {
    const at::Tensor& t = device_[static_cast<size_t>(id)];
    if (!t.defined()) {
      throw Error(fmt::format("{} reads tensor {} '{}', which is not resident",
                              describe(schedule_, instruction), id, graph_.tensor(id).name));
    }
    if (alloc_stream_[static_cast<size_t>(id)] != instruction.stream)
      backend_.note_use(t, instruction.stream);
    inputs.push_back(t);
  }
  // The memory rule's request (ir/memory_rule.hpp): outputs not resident, plus the workspace.
  const int64_t bytes = ir::op_request_bytes(
      graph_, op.id, [&](ir::TensorId id) { return device_[static_cast<size_t>(id)].defined(); });
  allocate(bytes, instruction, "its outputs and workspace");
  if (!recompute) {
    // A resident gradient is overwritten: release the old copy first (its bytes stay accounted).
    for (ir::TensorId id : op.outputs) device_[static_cast<size_t>(id)].reset();
  }
  const KernelContext context{graph_, op, inputs, runtime_[static_cast<size_t>(op.id)]};
  const bool timed = options_.time_ops && !recompute;
  if (timed) {
    const auto t0 = std::chrono::steady_clock::now();
    backend_.start_op_timer(op.id);
    timer_ns_ += elapsed_ns(t0);
  }
  std::vector<at::Tensor> outputs = run_kernel(context);
  if (timed) {
    const auto t0 = std::chrono::steady_clock::now();
    backend_.stop_op_timer(op.id);
    timer_ns_ += elapsed_ns(t0);
  }
  in_use_bytes_ -= ir::allocation_bytes(op.workspace_bytes);

  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto id = static_cast<size_t>(op.outputs[i]);
    if (recompute && device_[id].defined()) continue;  // still resident: the recomputed copy is dropped
    device_[id] = std::move(outputs[i]);
    alloc_stream_[id] = instruction.stream;
    if (!recompute) host_[id].reset();  // a host copy of an older value is stale
    if (graph_.tensors[id].role == TensorRole::loss) (*loss_sink_)[id] = device_[id];
  }
  if (op.phase == ir::Phase::optimizer) {
    for (ir::TensorId id : op.inputs) host_[static_cast<size_t>(id)].reset();  // updated in place
  }
}

void Interpreter::execute(const ir::Instruction& instruction) {
  switch (instruction.kind) {
    case InstrKind::compute:
      if (ir::runs_on_host(schedule_, instruction)) {
        run_host_op(instruction);
      } else {
        run_op(instruction, false);
      }
      return;
    case InstrKind::recompute:
      run_op(instruction, true);
      return;
    case InstrKind::swap_out: {
      const auto id = static_cast<size_t>(instruction.tensor);
      const at::Tensor& t = device_[id];
      at::Tensor host = home_[id].defined() ? home_[id] : backend_.host_buffer(t);
      if (alloc_stream_[id] != instruction.stream) backend_.note_use(t, instruction.stream);
      host.copy_(t, /*non_blocking=*/true);
      host_[id] = host;
      return;
    }
    case InstrKind::swap_in: {
      const auto id = static_cast<size_t>(instruction.tensor);
      const ir::Tensor& ir = graph_.tensors[id];
      if (!host_[id].defined()) {
        throw Error(fmt::format("{}: tensor {} '{}' has no host copy", describe(schedule_, instruction),
                                ir.id, ir.name));
      }
      allocate(rounded_bytes_[id], instruction, "the swapped-in tensor");
      at::Tensor t =
          at::empty(ir.shape, at::TensorOptions().dtype(scalar_type(ir.dtype)).device(backend_.device()));
      t.copy_(host_[id], /*non_blocking=*/true);
      device_[id] = t;
      alloc_stream_[id] = instruction.stream;
      return;
    }
    case InstrKind::free:
      release_tensor(instruction.tensor);
      return;
  }
}

void Interpreter::issue_instructions(ir::InstrId* current) {
  if (options_.time_host) op_host_ns_.assign(graph_.ops.size(), 0);
  for (const ir::Instruction& instruction : schedule_.instructions) {
    *current = instruction.id;
    const bool on_host = ir::runs_on_host(schedule_, instruction);
    const bool host_timed = options_.time_host && instruction.kind == InstrKind::compute && !on_host;
    if (host_timed) backend_.synchronize();  // an empty launch queue: the issue alone is timed
    const auto t0 = std::chrono::steady_clock::now();
    timer_ns_ = 0;
    if (on_host) {
      backend_.before_host(instruction);
    } else {
      backend_.before(instruction);
    }
    execute(instruction);
    backend_.after(instruction);
    if (host_timed) op_host_ns_[static_cast<size_t>(instruction.op)] = std::max<int64_t>(0, elapsed_ns(t0) - timer_ns_);
  }
  backend_.end_step();
}

void Interpreter::prepare_capture() {
  upload_step_inputs();
  captured_inputs_.clear();
  for (size_t i = 0; i < graph_.tensors.size(); ++i) {
    if (is_step_input(graph_.tensors[i].role)) captured_inputs_.push_back(device_[i]);
  }
  backend_.synchronize();
}

void Interpreter::issue_step() {
  for (OpRuntime& r : runtime_) {
    r.optimizer_step = step_;
    r.capturing = true;
  }
  ir::InstrId current = ir::kNoId;
  upload_step_inputs(/*keep_uploaded=*/true);
  issue_instructions(&current);
  for (OpRuntime& r : runtime_) r.capturing = false;
}

void Interpreter::finish_captured_step() {
  release_transients();
  ++step_;
}

std::vector<double> Interpreter::back_to_back_losses(size_t k) const {
  return read_losses(back_to_back_losses_.at(k));
}

std::vector<double> Interpreter::read_losses(const std::vector<at::Tensor>& loss_values) const {
  std::vector<double> losses(static_cast<size_t>(models_), 0.0);
  for (size_t i = 0; i < loss_values.size(); ++i) {
    if (!loss_values[i].defined()) continue;
    const ir::Tensor& t = graph_.tensors[i];
    const int32_t base =
        (t.producer == ir::kNoId ? options_.first_model : op_model_base_[static_cast<size_t>(t.producer)]) -
        options_.first_model;
    const at::Tensor values = loss_values[i].to(at::kDouble).cpu().reshape({-1});
    for (int64_t j = 0; j < values.numel(); ++j) {
      losses.at(static_cast<size_t>(base + j)) += values[j].item<double>();
    }
  }
  return losses;
}

void Interpreter::release_transients() {
  for (size_t i = 0; i < graph_.tensors.size(); ++i) {
    const ir::Tensor& t = graph_.tensors[i];
    host_[i].reset();
    loss_values_[i].reset();
    if (!at_start_[i] && ir::is_persistent(t.role)) {
      device_[i].reset();  // its home is the host (a step stopped by OOM may leave a device copy)
      continue;
    }
    if (ir::is_persistent(t.role)) {
      // A step stopped between releasing a gradient and writing it leaves it missing: zero it.
      if (!device_[i].defined()) {
        device_[i] =
            at::zeros(t.shape, at::TensorOptions().dtype(scalar_type(t.dtype)).device(backend_.device()));
      }
      continue;
    }
    device_[i].reset();
  }
  backend_.release_host_buffers();
}

// A later iteration's batch upload (ir/unrolled_schedule.hpp), accounted as the simulator
// does: a tensor still resident is overwritten in place (no bytes), else allocated.
void Interpreter::upload_input(const ir::Instruction& upload) {
  const auto id = static_cast<size_t>(upload.tensor);
  if (device_[id].defined()) {
    device_[id].copy_(step_input_[id], /*non_blocking=*/true);
    return;
  }
  // An upload is no instruction of the step: the OOM and peak name none.
  reserve(
      rounded_bytes_[id], ir::kNoId, [] { return std::string("uploading the next batch"); },
      fmt::format("tensor {} '{}'", upload.tensor, graph_.tensors[id].name));
  device_[id] = step_input_[id].to(backend_.device(), /*non_blocking=*/true, /*copy=*/true);
  alloc_stream_[id] = upload.stream;
}

StepResult Interpreter::guarded(const std::function<void(StepResult&)>& issue, const ir::InstrId* current) {
  StepResult result;
  try {
    issue(result);
  } catch (const OutOfMemory& oom) {
    result.oom = true;
    result.oom_instruction = oom.instruction;
    result.oom_message = oom.message;
  } catch (const std::exception& error) {
    loss_sink_ = &loss_values_;
    if (!backend_.is_out_of_memory(error)) {
      backend_.end_step();
      backend_.synchronize();
      release_transients();
      throw;
    }
    const int64_t resident = result.resident_bytes;
    result = caught_oom(error, *current);
    result.resident_bytes = resident;
  }
  loss_sink_ = &loss_values_;
  if (result.oom) {
    backend_.end_step();
    backend_.synchronize();
  }
  result.accounted_peak_bytes = peak_bytes_;
  result.peak_instruction = peak_instruction_;
  release_transients();
  return result;
}

StepResult Interpreter::caught_oom(const std::exception& error, ir::InstrId current) {
  StepResult result;
  result.oom = true;
  result.oom_instruction = current;
  result.oom_message = fmt::format(
      "out of memory at {}: {}",
      current == ir::kNoId ? std::string("the step's start")
                           : describe(schedule_, schedule_.instructions[static_cast<size_t>(current)]),
      std::string_view(error.what()).substr(0, std::string_view(error.what()).find('\n')));
  return result;
}

StepResult Interpreter::step(bool wait) {
  ir::InstrId current = ir::kNoId;
  if (options_.time_ops) backend_.reset_op_timers(graph_.ops.size());
  for (OpRuntime& r : runtime_) r.optimizer_step = step_;
  StepResult result = guarded(
      [&](StepResult& r) {
        upload_step_inputs();
        r.resident_bytes = in_use_bytes_;
        if (wait) backend_.start_step_timer();
        issue_instructions(&current);
        if (wait) {
          r.step_time_ns = backend_.stop_step_timer_ns();
          r.losses = read_losses(loss_values_);
        } else {
          backend_.mark_step_end();
          back_to_back_losses_.push_back(loss_values_);
        }
      },
      &current);
  ++step_;
  return result;
}

}  // namespace mutwo::exec
