// The CUDA backend (MUTWO_WITH_CUDA): the Schedule's compute stream and its two copy engines are
// three CUDA streams from PyTorch's pool; a wait on an instruction of another stream is a
// cudaStreamWaitEvent on that instruction's completion event. Swapped tensors go to pinned host
// buffers from a pool reused across steps; a tensor used on a stream other than the one it was
// allocated on is recordStream'ed so the caching allocator does not hand its memory out early.
// Step and op times are CUDA events on the compute stream; the peak is the caching allocator's.
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <torch/version.h>

#include "exec/device_backend.hpp"
#include "exec/host_buffer_pool.hpp"
#include "support/error.hpp"

namespace mutwo::exec {
namespace {

using c10::cuda::CUDAStream;

class CudaBackend final : public DeviceBackend {
 public:
  explicit CudaBackend(int index) : index_(static_cast<c10::DeviceIndex>(index)) {
    const int count = static_cast<int>(c10::cuda::device_count());
    if (count == 0) throw Error("device 'cuda': no CUDA device is visible to this process");
    if (index < 0 || index >= count) {
      throw Error(fmt::format("device 'cuda:{}': this machine has {} CUDA device(s)", index, count));
    }
    c10::cuda::set_device(index_);
    streams_ = {c10::cuda::getStreamFromPool(false, index_), c10::cuda::getStreamFromPool(false, index_),
                c10::cuda::getStreamFromPool(false, index_)};
    c10::cuda::setCurrentCUDAStream(streams_[ir::kComputeStream]);
    // PyTorch 2.x initialises its caching allocator lazily, at the first CUDA tensor: until then
    // resetPeakStats and setMemoryFraction throw "Invalid device argument" / "Allocator not
    // initialized for device" (seen on an H200 with torch 2.11, docs/VALIDATION.md). One small
    // allocation initialises CUDA and the allocator on this device, on every LibTorch version.
    (void)at::empty({1}, at::TensorOptions().dtype(at::kFloat).device(device()));
  }

  at::Device device() const override { return at::Device(at::kCUDA, index_); }
  std::string name() const override { return at::cuda::getDeviceProperties(index_)->name; }
  bool is_cuda() const override { return true; }
  std::pair<int, int> compute_capability() const override {
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(index_);
    return {p->major, p->minor};
  }

  // Extra compute streams (ids >= kFirstExtraComputeStream) share the compute stream: one compute
  // stream is what the simulator models by default.
  const CUDAStream& stream(int32_t id) const {
    return streams_[static_cast<size_t>(id <= ir::kHostToDeviceStream ? id : ir::kComputeStream)];
  }

  void before(const ir::Instruction& instruction) override {
    const CUDAStream& own = stream(instruction.stream);
    for (ir::InstrId w : instruction.waits) {
      if (stream(stream_of_.at(static_cast<size_t>(w))) != own)
        events_.at(static_cast<size_t>(w))->block(own);
    }
    if (instruction.stream == ir::kDeviceToHostStream || instruction.stream == ir::kHostToDeviceStream) {
      used_copy_stream_[static_cast<size_t>(instruction.stream)] = true;
    }
    c10::cuda::setCurrentCUDAStream(own);
  }

  void before_host(const ir::Instruction& instruction) override {
    for (ir::InstrId w : instruction.waits) events_.at(static_cast<size_t>(w))->synchronize();
  }

  void after(const ir::Instruction& instruction) override {
    const auto id = static_cast<size_t>(instruction.id);
    if (events_.size() <= id) {
      events_.resize(id + 1);
      stream_of_.resize(id + 1, ir::kComputeStream);
    }
    if (!events_[id]) events_[id] = std::make_unique<at::cuda::CUDAEvent>();  // timing disabled: cheap
    stream_of_[id] = instruction.stream;
    events_[id]->record(stream(instruction.stream));
    c10::cuda::setCurrentCUDAStream(streams_[ir::kComputeStream]);
  }

  // The compute stream joins the copy streams. In a capture only those the step forked into it:
  // waiting on an event recorded outside the capture crosses its boundary and invalidates it
  // (cudaErrorStreamCaptureIsolation; the H200 lease of 2026-11-27 failed every --cuda-graph run so).
  void end_step() override {
    const CUDAStream& compute = streams_[ir::kComputeStream];
    for (int32_t s : {ir::kDeviceToHostStream, ir::kHostToDeviceStream}) {
      const auto i = static_cast<size_t>(s);
      if (capturing_ && !used_copy_stream_[i]) continue;
      tails_[i].record(stream(s));
      tails_[i].block(compute);
    }
    used_copy_stream_ = {};
    c10::cuda::setCurrentCUDAStream(compute);
  }

  void synchronize() override { c10::cuda::device_synchronize(); }

  at::Tensor host_buffer(const at::Tensor& like) override { return host_buffers_.take(like); }
  void release_host_buffers() override { host_buffers_.give_back_all(); }
  void note_use(const at::Tensor& tensor, int32_t stream_id) override {
    if (tensor.defined() && tensor.is_cuda()) {
      c10::cuda::CUDACachingAllocator::recordStream(tensor.storage().data_ptr(), stream(stream_id));
    }
  }

  int64_t time_copy_ns(const at::Tensor& h2d_dst, const at::Tensor& h2d_src, const at::Tensor& d2h_dst,
                       const at::Tensor& d2h_src) override {
    synchronize();
    at::cuda::CUDAEvent start(cudaEventDefault);
    start.record(streams_[ir::kComputeStream]);
    // Each copy on its own copy stream, both released by one event: started together.
    const auto copy = [&](const at::Tensor& dst, const at::Tensor& src, int32_t id, at::cuda::CUDAEvent& end) {
      const CUDAStream& s = streams_[static_cast<size_t>(id)];
      start.block(s);
      c10::cuda::setCurrentCUDAStream(s);
      dst.copy_(src, /*non_blocking=*/true);
      end.record(s);
    };
    at::cuda::CUDAEvent h2d_end(cudaEventDefault);
    at::cuda::CUDAEvent d2h_end(cudaEventDefault);
    if (h2d_dst.defined()) copy(h2d_dst, h2d_src, ir::kHostToDeviceStream, h2d_end);
    if (d2h_dst.defined()) copy(d2h_dst, d2h_src, ir::kDeviceToHostStream, d2h_end);
    c10::cuda::setCurrentCUDAStream(streams_[ir::kComputeStream]);
    synchronize();
    float ms = 0;
    if (h2d_dst.defined()) ms = std::max(ms, start.elapsed_time(h2d_end));
    if (d2h_dst.defined()) ms = std::max(ms, start.elapsed_time(d2h_end));
    return static_cast<int64_t>(static_cast<double>(ms) * 1e6);
  }

  void start_step_timer() override { step_start_.record(streams_[ir::kComputeStream]); }
  int64_t stop_step_timer_ns() override {
    step_end_.record(streams_[ir::kComputeStream]);
    step_end_.synchronize();
    synchronize();
    return static_cast<int64_t>(static_cast<double>(step_start_.elapsed_time(step_end_)) * 1e6);
  }

  void mark_steps_start() override {
    steps_start_.record(streams_[ir::kComputeStream]);
    marks_ = 0;
  }
  // After end_step() the compute stream has joined the copy streams: an event on it marks the
  // whole step's end. Events are kept across runs and re-recorded.
  void mark_step_end() override {
    if (step_marks_.size() <= marks_) step_marks_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
    step_marks_[marks_++]->record(streams_[ir::kComputeStream]);
  }
  std::vector<int64_t> steps_elapsed_ns() override {
    synchronize();
    std::vector<int64_t> out;
    for (size_t i = 0; i < marks_; ++i) {
      out.push_back(static_cast<int64_t>(static_cast<double>(steps_start_.elapsed_time(*step_marks_[i])) * 1e6));
    }
    return out;
  }

  void start_op_timer(ir::OpId op) override {
    op_events_.at(static_cast<size_t>(op)).first->record(streams_[ir::kComputeStream]);
  }
  void stop_op_timer(ir::OpId op) override {
    op_events_.at(static_cast<size_t>(op)).second->record(streams_[ir::kComputeStream]);
    timed_.at(static_cast<size_t>(op)) = 1;
  }
  int64_t op_time_ns(ir::OpId op) override {
    if (!timed_.at(static_cast<size_t>(op))) return 0;
    const auto& [start, end] = op_events_[static_cast<size_t>(op)];
    return static_cast<int64_t>(static_cast<double>(start->elapsed_time(*end)) * 1e6);
  }
  void reset_op_timers(size_t op_count) override {
    while (op_events_.size() < op_count) {
      op_events_.emplace_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault),
                              std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault));
    }
    timed_.assign(op_count, 0);
  }

  void reset_peak_memory() override {
    synchronize();
    c10::cuda::CUDACachingAllocator::resetPeakStats(index_);
  }
  std::optional<int64_t> peak_allocated_bytes() override {
    // allocated_bytes[0] is StatType::AGGREGATE (the enum moved namespaces across releases).
    return c10::cuda::CUDACachingAllocator::getDeviceStats(index_).allocated_bytes[0].peak;
  }
  std::optional<int64_t> total_memory_bytes() override {
    return static_cast<int64_t>(at::cuda::getDeviceProperties(index_)->totalGlobalMem);
  }
  void set_memory_fraction(double fraction) override {
    if (!(fraction > 0.0 && fraction <= 1.0)) {
      throw Error(fmt::format("memory cap fraction {} must be in (0, 1]", fraction));
    }
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, index_);
  }
  bool is_out_of_memory(const std::exception& error) const override {
    return dynamic_cast<const c10::OutOfMemoryError*>(&error) != nullptr;
  }

  bool supports_graph_capture() const override { return true; }
  void begin_capture() override {
    synchronize();
    graph_ = std::make_unique<at::cuda::CUDAGraph>();
    c10::cuda::setCurrentCUDAStream(streams_[ir::kComputeStream]);
    used_copy_stream_ = {};
    capturing_ = true;
    // Relaxed: a captured step may make calls CUDA deems unsafe in another thread's capture (the
    // allocators' event queries); ops that would synchronise still fail the capture.
#if TORCH_VERSION_MAJOR >= 2
    graph_->capture_begin({0, 0}, cudaStreamCaptureModeRelaxed);
#else
    graph_->capture_begin();
#endif
  }
  void end_capture() override {
    capturing_ = false;
    graph_->capture_end();
  }
  void replay() override { graph_->replay(); }

 private:
  c10::DeviceIndex index_;
  std::vector<CUDAStream> streams_;                           // compute, device->host, host->device
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events_;  // per instruction: its completion
  std::vector<int32_t> stream_of_;
  std::array<at::cuda::CUDAEvent, 3> tails_;
  at::cuda::CUDAEvent step_start_{cudaEventDefault};
  at::cuda::CUDAEvent step_end_{cudaEventDefault};
  at::cuda::CUDAEvent steps_start_{cudaEventDefault};
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> step_marks_;
  size_t marks_ = 0;
  std::vector<std::pair<std::unique_ptr<at::cuda::CUDAEvent>, std::unique_ptr<at::cuda::CUDAEvent>>>
      op_events_;
  std::vector<uint8_t> timed_;
  HostBufferPool host_buffers_{true};
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  bool capturing_ = false;
  std::array<bool, 3> used_copy_stream_{};  // per stream id: issued on since the step began
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cuda_backend(int device_index) {
  return std::make_unique<CudaBackend>(device_index);
}

}  // namespace mutwo::exec
