// The host link and the host's dispatch, timed for `mutwo bench-host` (ir/bench_host.hpp): each
// size copied between a device buffer and a host buffer from the backend's pool (pinned on CUDA,
// as the executor's swaps use), h2d, d2h and both at once, timed by the backend (CUDA events on the
// copy streams); then a 1-element in-place add launched back to back, its host time per call
// (steady_clock) and its device interval per launch (the backend's step timer).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "exec/device_backend.hpp"
#include "exec/executor.hpp"
#include "support/error.hpp"
#include "support/median.hpp"

namespace mutwo::exec {
namespace {

using ir::CopyWay;

ir::LinkTiming time_link(DeviceBackend& backend, int64_t bytes, CopyWay way,
                         const ir::BenchHostOptions& options) {
  const at::TensorOptions on_device = at::TensorOptions().dtype(at::kByte).device(backend.device());
  // Distinct buffers each way, so that the pair of "both" shares no memory.
  const at::Tensor device_in = at::empty({bytes}, on_device);
  const at::Tensor device_out = at::full({bytes}, 7, on_device);  // not zeros: a real payload
  const at::Tensor host_in = backend.host_buffer(device_in).fill_(3);
  const at::Tensor host_out = backend.host_buffer(device_out);
  const bool h2d = way != CopyWay::d2h;
  const bool d2h = way != CopyWay::h2d;
  const auto once = [&] {
    return backend.time_copy_ns(h2d ? device_in : at::Tensor(), host_in, d2h ? host_out : at::Tensor(), device_out);
  };
  for (int32_t i = 0; i < options.warmup_iterations; ++i) (void)once();
  std::vector<int64_t> samples;
  for (int32_t i = 0; i < options.timed_iterations; ++i) samples.push_back(once());
  backend.release_host_buffers();
  ir::LinkTiming t;
  t.way = way;
  t.bytes = bytes;
  t.min_ns = *std::min_element(samples.begin(), samples.end());
  t.max_ns = *std::max_element(samples.begin(), samples.end());
  t.time_ns = std::max<int64_t>(1, support::median(std::move(samples), support::EvenMedian::lower_middle));
  t.samples = options.timed_iterations;
  return t;
}

// The host time per call and the device interval per kernel of a 1-element in-place add.
void time_dispatch(DeviceBackend& backend, const ir::BenchHostOptions& options, ir::HostBench& out) {
  at::Tensor x = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(backend.device()));
  const int32_t calls = options.dispatch_calls;
  for (int32_t i = 0; i < calls; ++i) x.add_(1);
  backend.synchronize();
  std::vector<int64_t> host, device;
  for (int32_t sample = 0; sample < options.timed_iterations; ++sample) {
    backend.start_step_timer();
    const auto start = std::chrono::steady_clock::now();
    for (int32_t i = 0; i < calls; ++i) x.add_(1);
    const auto issued = std::chrono::steady_clock::now();
    device.push_back(backend.stop_step_timer_ns() / calls);  // waits for the device
    host.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(issued - start).count() / calls);
  }
  out.dispatch_calls = calls;
  out.dispatch_ns = std::max<int64_t>(1, support::median(std::move(host), support::EvenMedian::lower_middle));
  out.kernel_interval_ns =
      std::max<int64_t>(1, support::median(std::move(device), support::EvenMedian::lower_middle));
}

}  // namespace

ir::HostBench bench_host(const ir::BenchHostOptions& options) {
  ir::validate_bench_host(options);
  std::unique_ptr<DeviceBackend> backend = make_backend(options.device);
  const std::vector<int64_t> sizes =
      options.sizes_bytes.empty() ? ir::default_link_sizes() : options.sizes_bytes;
  // time_link holds two device and two host buffers of a size: on the cpu all four are host memory.
  const int64_t host_memory_bytes = int64_t{::sysconf(_SC_PHYS_PAGES)} * int64_t{::sysconf(_SC_PAGESIZE)};
  if (host_memory_bytes > 0)
    ir::check_link_sizes_fit(sizes, backend->device().is_cpu() ? 4 : 2, host_memory_bytes);
  ir::HostBench out;
  out.device_name = backend->name();
  for (int64_t bytes : sizes) {
    for (CopyWay way : {CopyWay::h2d, CopyWay::d2h, CopyWay::both}) {
      try {
        out.copies.push_back(time_link(*backend, bytes, way, options));
      } catch (const Error&) {
        throw;
      } catch (const std::exception& error) {
        const std::string_view what = error.what();
        throw Error(fmt::format("bench-host: a {} copy of {} B on '{}' failed: {}", ir::copy_way_name(way),
                                bytes, options.device, what.substr(0, what.find('\n'))));
      }
    }
  }
  time_dispatch(*backend, options, out);
  return out;
}

}  // namespace mutwo::exec
