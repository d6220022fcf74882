#pragma once
// A device the interpreter runs on: streams and events, host buffers for swapped tensors, timers
// and memory statistics. The CPU backend runs everything in issue order (swaps are host copies);
// the CUDA backend (cuda_backend.cpp, MUTWO_WITH_CUDA) maps the Schedule's streams to one compute
// and two copy streams and its waits to CUDA events.
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/schedule.hpp"

namespace mutwo::exec {

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  virtual at::Device device() const = 0;
  // The product name as the runtime reports it ("cpu", "NVIDIA H100 80GB HBM3"); traces carry it.
  virtual std::string name() const = 0;
  virtual bool is_cuda() const = 0;
  // The CUDA device's compute capability {major, minor}; {0, 0} elsewhere.
  virtual std::pair<int, int> compute_capability() const { return {0, 0}; }

  // Instructions are issued in Schedule order. before() makes the instruction's stream current and
  // has it wait for the completion of every instruction in `waits` (issued earlier, on any stream);
  // after() marks the instruction's completion point on its stream.
  virtual void before(const ir::Instruction& instruction) = 0;
  virtual void after(const ir::Instruction& instruction) = 0;
  // Instead of before() for an instruction the host runs (Schedule::host_stream): blocks the host
  // until every instruction in `waits` has completed (the CPU backend's work already has).
  virtual void before_host(const ir::Instruction& instruction) { (void)instruction; }
  // Ends a step's issue: the compute stream joins the copy streams; the default stream is current.
  virtual void end_step() = 0;
  virtual void synchronize() = 0;

  // A host buffer shaped and typed like `device_tensor` (pinned on CUDA), from a pool reused across
  // steps; release_host_buffers() returns every buffer handed out to the pool.
  virtual at::Tensor host_buffer(const at::Tensor& device_tensor) = 0;
  virtual void release_host_buffers() = 0;
  // `tensor`, allocated on another stream, is used on `stream`: its memory must not be reused
  // before that use completes (recordStream on CUDA).
  virtual void note_use(const at::Tensor& tensor, int32_t stream) = 0;

  // Step timing: start() before the first instruction is issued, stop() after end_step(); stop()
  // waits for the device and returns the elapsed ns (CUDA events on the compute stream on GPU).
  virtual void start_step_timer() = 0;
  virtual int64_t stop_step_timer_ns() = 0;
  // Steps issued back to back (RunOptions::back_to_back): mark_steps_start() before the first,
  // mark_step_end() after each step's end_step() without waiting for the device; steps_elapsed_ns()
  // waits for the device and returns, per mark, its time since the start (CUDA events on the
  // compute stream; wall clock on the CPU, whose work is done when issued).
  virtual void mark_steps_start() = 0;
  virtual void mark_step_end() = 0;
  virtual std::vector<int64_t> steps_elapsed_ns() = 0;
  // Per-op timing for the profiler, around one op on the compute stream; op_time_ns() is valid
  // after the step's stop_step_timer_ns().
  virtual void start_op_timer(ir::OpId op) = 0;
  virtual void stop_op_timer(ir::OpId op) = 0;
  virtual int64_t op_time_ns(ir::OpId op) = 0;
  virtual void reset_op_timers(size_t op_count) = 0;

  // The host link (`mutwo bench-host`): one copy host->device (h2d_dst.copy_(h2d_src)) and/or one
  // device->host (d2h_dst.copy_(d2h_src)), each on its copy stream, started together; returns the
  // ns from their start to the last one's end (CUDA events; the cpu: wall clock, one after the
  // other). An undefined destination leaves that way out.
  virtual int64_t time_copy_ns(const at::Tensor& h2d_dst, const at::Tensor& h2d_src, const at::Tensor& d2h_dst,
                               const at::Tensor& d2h_src) = 0;

  // Allocator statistics; nullopt where the device has none (CPU: the interpreter's accounting).
  virtual void reset_peak_memory() = 0;
  virtual std::optional<int64_t> peak_allocated_bytes() = 0;
  virtual std::optional<int64_t> total_memory_bytes() = 0;
  // Caps the allocator at a fraction of the device's memory (CUDA); throws mutwo::Error elsewhere.
  virtual void set_memory_fraction(double fraction) = 0;
  // Whether an exception thrown while running is the device running out of memory.
  virtual bool is_out_of_memory(const std::exception& error) const = 0;

  // Whole-step CUDA graph capture (optional): begin/end around one step's issue, then replay.
  virtual bool supports_graph_capture() const { return false; }
  virtual void begin_capture() {}
  virtual void end_capture() {}
  virtual void replay() {}
};

// "cpu", "cuda" or "cuda:N". Throws mutwo::Error naming the device when it is unknown, when this
// build has no CUDA path, or when no CUDA device is present.
std::unique_ptr<DeviceBackend> make_backend(std::string_view device);

std::unique_ptr<DeviceBackend> make_cpu_backend();
#ifdef MUTWO_WITH_CUDA
std::unique_ptr<DeviceBackend> make_cuda_backend(int device_index);  // cuda_backend.cpp
#endif

}  // namespace mutwo::exec
