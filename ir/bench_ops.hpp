#pragma once
// What `mutwo bench-ops` asks the executor to time (Executor::bench_ops): single ATen kernels at
// given shapes and precisions, each the median of timed launches, and the default grid of shapes.
// Torch-free: the CLI builds the request, exec/ runs it (exec/bench_ops.cpp), and costmodel/ turns
// the timings into calibration CSV rows (costmodel/bench_rows.hpp).
//
// Kernels and the meaning of BenchShape::dims (dilation 1, contiguous row-major tensors):
//   gemm                    {m, n, k}: C[m,n] = A[m,k] B[k,n] (at::mm, no transposes)
//   conv2d_forward          {N, C, H, W, K, R, S, pad, stride, groups}: x[N,C,H,W] * w[K,C/groups,R,S]
//                           (at::convolution; groups divides C and K: C = K = groups is depthwise)
//   conv2d_backward_data    the same dims: dx from dy and w (at::convolution_backward, input mask only)
//   conv2d_backward_filter  the same dims: dw from dy and x (at::convolution_backward, weight mask only)
//   relu, gelu, softmax     {rows, cols}: the op kind on x[rows,cols] (softmax over the last dim)
//   add                     {rows, cols}: a + b, both [rows,cols]
//   layernorm               {rows, cols}: native_layer_norm over the last dim (affine, eps 1e-5)
//   batchnorm2d             {N, C, H, W}: training-mode native_batch_norm (affine, no running stats,
//                           as exec/kernels/norm.cpp runs it)
// Precisions: fp32 (f32 tensors, TF32 off in cuBLAS and cuDNN), tf32 (f32 tensors, TF32 on; GEMM
// and conv kernels only: elsewhere it is fp32), fp16, bf16 (16-bit tensors; PyTorch's defaults
// otherwise). The CPU runs fp32 only.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mutwo::ir {

// One kernel at one shape.
struct BenchShape {
  std::string kernel;         // one of bench_kernel_names()
  std::vector<int64_t> dims;  // as the table above says for the kernel
  std::string source;  // where the shape comes from ("pow2", "DeepBench", "resnet50 res3"); may be empty
};

// The most warm-up or timed launches per shape: past it a typo would time one shape for hours.
inline constexpr int32_t kMaxBenchLaunches = 1000;

struct BenchOpsOptions {
  std::string device = "cpu";           // "cpu", "cuda", "cuda:N"
  std::vector<BenchShape> shapes;       // each run at every precision below that applies to it
  std::vector<std::string> precisions;  // empty: every precision the device runs
  int32_t warmup_iterations = 3;        // untimed launches first
  int32_t timed_iterations = 10;        // timed launches; the median is kept
};

// One kernel's time at one shape and precision.
struct KernelTiming {
  BenchShape shape;
  std::string precision;
  // Median of the timed launches (an even count: the mean of the two middle values, rounded down),
  // at least 1 ns. CUDA: CUDA events between back-to-back launches on one stream; CPU: steady_clock
  // around each call.
  int64_t time_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  int32_t samples = 0;
};

// "gemm", "conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter", "relu", "gelu", "add",
// "softmax", "layernorm", "batchnorm2d".
const std::vector<std::string>& bench_kernel_names();
// Throws UnknownNameError "unknown kernel 'x'; valid: gemm, ..." for a name not in the list.
void check_bench_kernel(std::string_view kernel);
// The dims count a kernel takes (3, 10, 2 or 4); throws as check_bench_kernel.
size_t bench_dims_count(std::string_view kernel);
// Throws Error naming the kernel and dims when the count is wrong, a dim is < 1 (pad < 0), a conv's
// filter is larger than its padded input, or its groups divide not both C and K.
void validate_bench_shape(const BenchShape& shape);
// Whether `precision` changes the kernel's math: tf32 only for gemm and conv2d_*.
bool bench_precision_applies(std::string_view kernel, std::string_view precision);

// Convolution dims by name, from a conv kernel's dims.
struct BenchConv {
  int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1, pad = 0, stride = 1, groups = 1;
  int64_t p() const { return (h + 2 * pad - r) / stride + 1; }  // output height
  int64_t q() const { return (w + 2 * pad - s) / stride + 1; }  // output width
};
BenchConv bench_conv(const BenchShape& shape);

// The default grid of `kernel` (costmodel/README.md, "Calibration inputs"); `quick`: a handful of
// tiny shapes, seconds on a CPU (tests, a smoke run).
std::vector<BenchShape> default_bench_grid(std::string_view kernel, bool quick);

}  // namespace mutwo::ir
