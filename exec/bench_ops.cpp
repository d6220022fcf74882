// Single ATen kernels timed for `mutwo bench-ops` (ir/bench_ops.hpp says each kernel's call
// and dims): cuBLAS/cuDNN on a CUDA device, ATen's CPU kernels on the cpu. Each launch is timed by
// the device backend's op timers (CUDA events on the compute stream around each of the
// back-to-back launches; steady_clock on the cpu). On a GPU a kernel shorter than the host's time
// per launch reads as that time: the rows' timing is host-paced (costmodel/calibration_csv.hpp).
#include <algorithm>
#include <functional>
#include <memory>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "exec/device_backend.hpp"
#include "exec/executor.hpp"
#include "exec/tf32_guard.hpp"
#include "exec/torch_types.hpp"
#include "ir/iterations.hpp"
#include "ir/kernel_precision.hpp"
#include "support/error.hpp"

namespace mutwo::exec {
namespace {

using ir::BenchShape;
using Launch = std::function<void()>;

at::ScalarType precision_scalar_type(std::string_view precision) {
  return scalar_type(ir::kernel_precision(precision).dtype);  // tf32: fp32 data
}

// Each setup makes the kernel's inputs at the shape and returns the call that launches it once.
using KernelSetup = Launch (*)(const BenchShape& shape, const at::TensorOptions& options);

Launch gemm(const BenchShape& s, const at::TensorOptions& o) {
  const int64_t m = s.dims[0], n = s.dims[1], k = s.dims[2];
  at::Tensor a = at::randn({m, k}, o);
  at::Tensor b = at::randn({k, n}, o);
  return [a, b] { (void)at::mm(a, b); };
}

struct ConvTensors {
  ir::BenchConv c;
  at::Tensor x, w, dy;
};

ConvTensors conv_tensors(const BenchShape& s, const at::TensorOptions& o, bool with_dy) {
  ConvTensors t{ir::bench_conv(s), {}, {}, {}};
  t.x = at::randn({t.c.n, t.c.c, t.c.h, t.c.w}, o);
  t.w = at::randn({t.c.k, t.c.c / t.c.groups, t.c.r, t.c.s}, o);
  if (with_dy) t.dy = at::randn({t.c.n, t.c.k, t.c.p(), t.c.q()}, o);
  return t;
}

Launch conv_forward(const BenchShape& s, const at::TensorOptions& o) {
  ConvTensors t = conv_tensors(s, o, false);
  return [t] {
    (void)at::convolution(t.x, t.w, {}, {t.c.stride, t.c.stride}, {t.c.pad, t.c.pad}, {1, 1}, false, {0, 0},
                          t.c.groups);
  };
}

Launch conv_backward(const BenchShape& s, const at::TensorOptions& o, std::array<bool, 3> mask) {
  ConvTensors t = conv_tensors(s, o, true);
  return [t, mask] {
    (void)at::convolution_backward(t.dy, t.x, t.w, c10::nullopt, {t.c.stride, t.c.stride}, {t.c.pad, t.c.pad},
                                   {1, 1}, false, {0, 0}, t.c.groups, mask);
  };
}

Launch conv_backward_data(const BenchShape& s, const at::TensorOptions& o) {
  return conv_backward(s, o, {true, false, false});
}

Launch conv_backward_filter(const BenchShape& s, const at::TensorOptions& o) {
  return conv_backward(s, o, {false, true, false});
}

Launch relu(const BenchShape& s, const at::TensorOptions& o) {
  at::Tensor x = at::randn({s.dims[0], s.dims[1]}, o);
  return [x] { (void)at::relu(x); };
}

Launch gelu(const BenchShape& s, const at::TensorOptions& o) {
  at::Tensor x = at::randn({s.dims[0], s.dims[1]}, o);
  return [x] { (void)at::gelu(x); };
}

Launch add(const BenchShape& s, const at::TensorOptions& o) {
  at::Tensor a = at::randn({s.dims[0], s.dims[1]}, o);
  at::Tensor b = at::randn({s.dims[0], s.dims[1]}, o);
  return [a, b] { (void)at::add(a, b); };
}

Launch softmax(const BenchShape& s, const at::TensorOptions& o) {
  at::Tensor x = at::randn({s.dims[0], s.dims[1]}, o);
  return [x] { (void)at::_softmax(x, -1, false); };
}

Launch layernorm(const BenchShape& s, const at::TensorOptions& o) {
  const int64_t cols = s.dims[1];
  at::Tensor x = at::randn({s.dims[0], cols}, o);
  at::Tensor gamma = at::ones({cols}, o);
  at::Tensor beta = at::zeros({cols}, o);
  return [x, gamma, beta, cols] { (void)at::native_layer_norm(x, {cols}, gamma, beta, 1e-5); };
}

Launch batchnorm2d(const BenchShape& s, const at::TensorOptions& o) {
  at::Tensor x = at::randn({s.dims[0], s.dims[1], s.dims[2], s.dims[3]}, o);
  at::Tensor gamma = at::ones({s.dims[1]}, o);
  at::Tensor beta = at::zeros({s.dims[1]}, o);
  return [x, gamma, beta] { (void)at::native_batch_norm(x, gamma, beta, {}, {}, true, 0.1, 1e-5); };
}

struct KernelEntry {
  std::string_view name;
  KernelSetup setup;
};

// One entry per name of ir::bench_kernel_names() (tests/cli_bench_ops.cmake runs each).
constexpr std::array<KernelEntry, 10> kKernelSetups{{{"gemm", gemm},
                                                     {"conv2d_forward", conv_forward},
                                                     {"conv2d_backward_data", conv_backward_data},
                                                     {"conv2d_backward_filter", conv_backward_filter},
                                                     {"relu", relu},
                                                     {"gelu", gelu},
                                                     {"add", add},
                                                     {"softmax", softmax},
                                                     {"layernorm", layernorm},
                                                     {"batchnorm2d", batchnorm2d}}};

KernelSetup kernel_setup(std::string_view kernel) {
  for (const KernelEntry& e : kKernelSetups) {
    if (e.name == kernel) return e.setup;
  }
  ir::check_bench_kernel(kernel);  // throws listing the valid names
  throw Error(fmt::format("bench-ops: kernel '{}' has no ATen implementation in this executor", kernel));
}

std::string dims_text(const BenchShape& shape) {
  return fmt::format("{} [{}]", shape.kernel, fmt::join(shape.dims, ","));
}

// The first line of an exception's message (c10 errors append a backtrace).
std::string_view first_line(const std::exception& error) {
  const std::string_view what = error.what();
  return what.substr(0, what.find('\n'));
}

ir::KernelTiming time_kernel(DeviceBackend& backend, const BenchShape& shape, const std::string& precision,
                             const ir::BenchOpsOptions& options) {
  const Tf32Guard tf32(ir::kernel_precision(precision).id == ir::KernelPrecision::tf32);
  const Launch launch = kernel_setup(shape.kernel)(
      shape, at::TensorOptions().dtype(precision_scalar_type(precision)).device(backend.device()));
  const auto timed = static_cast<size_t>(options.timed_iterations);
  for (int32_t i = 0; i < options.warmup_iterations; ++i) launch();
  backend.synchronize();
  backend.reset_op_timers(timed);
  backend.start_step_timer();
  for (size_t i = 0; i < timed; ++i) {
    backend.start_op_timer(static_cast<ir::OpId>(i));
    launch();
    backend.stop_op_timer(static_cast<ir::OpId>(i));
  }
  (void)backend.stop_step_timer_ns();  // waits for the device: the op timers are readable after it
  std::vector<int64_t> samples;
  samples.reserve(timed);
  for (size_t i = 0; i < timed; ++i) samples.push_back(backend.op_time_ns(static_cast<ir::OpId>(i)));
  ir::KernelTiming t;
  t.shape = shape;
  t.precision = precision;
  t.time_ns = std::max<int64_t>(1, median_ns(samples));
  t.min_ns = *std::min_element(samples.begin(), samples.end());
  t.max_ns = *std::max_element(samples.begin(), samples.end());
  t.samples = options.timed_iterations;
  return t;
}

// The precisions a device runs: the cpu fp32 (ATen 1.13 has no fp16 GEMM on the CPU); a CUDA device
// fp32 and fp16, and tf32 and bf16 from compute capability 8.0 (Ampere's tensor cores: before it
// the TF32 flags change nothing and a "tf32" row would be fp32 math).
std::vector<std::string> device_precisions(const DeviceBackend& backend) {
  if (!backend.is_cuda()) return {"fp32"};
  const bool ampere = backend.compute_capability().first >= 8;
  std::vector<std::string> out{"fp32"};
  if (ampere) out.push_back("tf32");
  out.push_back("fp16");
  if (ampere) out.push_back("bf16");
  return out;
}

}  // namespace

std::vector<ir::KernelTiming> bench_ops(const ir::BenchOpsOptions& options) {
  ir::check_iterations(options.warmup_iterations, options.timed_iterations, ir::kMaxBenchLaunches,
                       "bench-ops");
  std::unique_ptr<DeviceBackend> backend = make_backend(options.device);
  const std::vector<std::string> runs = device_precisions(*backend);
  std::vector<std::string> precisions = options.precisions.empty() ? runs : options.precisions;
  for (const std::string& p : precisions) {
    if (std::find(runs.begin(), runs.end(), p) != runs.end()) continue;
    ir::kernel_precision(p);  // an unknown name: UnknownNameError listing the valid ones
    throw Error(fmt::format("bench-ops: precision '{}' does not run on device '{}' ({}); it runs: {}", p,
                            options.device, backend->name(), fmt::join(runs, ", ")));
  }
  for (const BenchShape& shape : options.shapes) {
    ir::validate_bench_shape(shape);
    (void)kernel_setup(shape.kernel);
  }

  std::vector<ir::KernelTiming> out;
  for (const BenchShape& shape : options.shapes) {
    for (const std::string& precision : precisions) {
      if (!ir::bench_precision_applies(shape.kernel, precision)) continue;
      try {
        out.push_back(time_kernel(*backend, shape, precision, options));
      } catch (const Error&) {
        throw;
      } catch (const std::exception& error) {
        throw Error(fmt::format("bench-ops: {} at {} on '{}' failed: {}", dims_text(shape), precision,
                                options.device, first_line(error)));
      }
    }
  }
  return out;
}

}  // namespace mutwo::exec
