// The CPU backend: the Schedule's streams run in issue order on the calling thread, so waits are
// already met; swaps copy into host buffers; timing is wall clock (steady_clock).
#include <cctype>
#include <charconv>
#include <chrono>
#include <vector>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "exec/device_backend.hpp"
#include "exec/host_buffer_pool.hpp"
#include "ir/exec_device.hpp"
#include "support/error.hpp"

namespace mutwo::exec {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class CpuBackend final : public DeviceBackend {
 public:
  at::Device device() const override { return at::Device(at::kCPU); }
  std::string name() const override { return "cpu"; }
  bool is_cuda() const override { return false; }

  void before(const ir::Instruction&) override {}
  void after(const ir::Instruction&) override {}
  void end_step() override {}
  void synchronize() override {}

  at::Tensor host_buffer(const at::Tensor& like) override { return host_buffers_.take(like); }
  void release_host_buffers() override { host_buffers_.give_back_all(); }
  void note_use(const at::Tensor&, int32_t) override {}

  void start_step_timer() override { step_start_ns_ = now_ns(); }
  int64_t stop_step_timer_ns() override { return now_ns() - step_start_ns_; }
  void mark_steps_start() override {
    steps_start_ns_ = now_ns();
    step_ends_ns_.clear();
  }
  void mark_step_end() override { step_ends_ns_.push_back(now_ns() - steps_start_ns_); }
  std::vector<int64_t> steps_elapsed_ns() override { return step_ends_ns_; }
  void start_op_timer(ir::OpId) override { op_start_ns_ = now_ns(); }
  void stop_op_timer(ir::OpId op) override { op_ns_.at(static_cast<size_t>(op)) += now_ns() - op_start_ns_; }
  int64_t op_time_ns(ir::OpId op) override { return op_ns_.at(static_cast<size_t>(op)); }
  void reset_op_timers(size_t op_count) override { op_ns_.assign(op_count, 0); }

  int64_t time_copy_ns(const at::Tensor& h2d_dst, const at::Tensor& h2d_src, const at::Tensor& d2h_dst,
                       const at::Tensor& d2h_src) override {
    const int64_t start = now_ns();
    if (h2d_dst.defined()) h2d_dst.copy_(h2d_src);
    if (d2h_dst.defined()) d2h_dst.copy_(d2h_src);
    return now_ns() - start;
  }

  void reset_peak_memory() override {}
  std::optional<int64_t> peak_allocated_bytes() override { return std::nullopt; }
  std::optional<int64_t> total_memory_bytes() override { return std::nullopt; }
  void set_memory_fraction(double fraction) override {
    throw Error(
        fmt::format("a memory cap as a fraction ({}) needs a CUDA device; on the cpu give the "
                    "limit in bytes (e.g. --memory-cap 2GiB)",
                    fraction));
  }
  bool is_out_of_memory(const std::exception& error) const override {
    // A failed host allocation: c10's "DefaultCPUAllocator: can't allocate memory".
    return dynamic_cast<const std::bad_alloc*>(&error) != nullptr ||
           std::string_view(error.what()).find("can't allocate memory") != std::string_view::npos;
  }

 private:
  HostBufferPool host_buffers_{false};
  int64_t step_start_ns_ = 0;
  int64_t steps_start_ns_ = 0;
  std::vector<int64_t> step_ends_ns_;
  int64_t op_start_ns_ = 0;
  std::vector<int64_t> op_ns_;
};

}  // namespace

std::unique_ptr<DeviceBackend> make_cpu_backend() {
  return std::make_unique<CpuBackend>();
}

std::unique_ptr<DeviceBackend> make_backend(std::string_view device) {
  const std::optional<int> cuda = ir::parse_exec_device(device);
  if (!cuda) return make_cpu_backend();
#ifdef MUTWO_WITH_CUDA
  return make_cuda_backend(*cuda);
#else
  throw Error(
      fmt::format("device '{}' needs mutwo built against a LibTorch with CUDA (MUTWO_WITH_CUDA); "
                  "this build is CPU-only, e.g. Debian's libtorch-dev (scripts/device-check.sh builds "
                  "against PyTorch's LibTorch on a GPU machine)",
                  device));
#endif
}

}  // namespace mutwo::exec
