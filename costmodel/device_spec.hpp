#pragma once
// A GPU and its host link, as the cost model and the memory simulator see it.
#include <cstdint>
#include <string>

#include "ir/dtype.hpp"

namespace mutwo::costmodel {

// The host side of issuing work under PyTorch: how long the CPU takes to dispatch an op and launch
// its kernels (eager), or to replay a captured CUDA graph, and how far it may run ahead of the GPU.
struct HostDispatch {
  int64_t forward_op_ns = 0;       // eager: one forward op, Python module call to kernel launch
  int64_t backward_op_ns = 0;      // eager: one backward or optimizer op, issued from C++ (autograd)
  int64_t copy_issue_ns = 0;       // cudaMemcpyAsync of a swap
  int64_t launch_ns = 0;           // cudaLaunchKernel alone: an op issued inside another call
  int64_t python_op_ns = 0;        // eager: one tensor op a Python loop issues (a per-parameter optimizer)
  int64_t graph_kernel_ns = 0;     // CUDA-graph replay: per kernel node
  int32_t launch_queue_depth = 0;  // launches the host may have outstanding (0: unbounded)
  std::string source;              // where the figures come from, for listings
};

// The host CPU running an optimizer update (ZeRO-Offload's CPU Adam, Ren et al., ATC 2021): an
// update of B bytes (the op's bytes read + written) takes per_op_ns + min(B, large_from_bytes) /
// bytes_per_ns + max(B - large_from_bytes, 0) / large_bytes_per_ns (costmodel/host_optimizer.hpp).
struct HostOptimizer {
  int64_t per_op_ns = 0;
  double bytes_per_ns = 0;        // updates that fit in the host's caches
  double large_bytes_per_ns = 0;  // the bytes of an update past large_from_bytes
  int64_t large_from_bytes = 0;
  std::string source;  // where the figures come from, for listings
};

struct DeviceSpec {
  std::string name;          // catalog key, "a100-40gb"
  std::string description;   // "NVIDIA A100-SXM4-40GB"
  std::string chip;          // the GPU die, "GA100": parts of one chip are held out together in validation
  int64_t memory_bytes = 0;  // usable device memory (the memory limit unless overridden)
  // Dense peak throughput (FLOP per ns == TFLOP/s * 1000), per math mode.
  double fp32_flops_per_ns = 0;  // plain FP32 (CUDA cores)
  double tf32_flops_per_ns = 0;  // TF32 tensor cores (0 if none)
  double half_flops_per_ns = 0;  // FP16/BF16 tensor cores
  double fp64_flops_per_ns = 0;  // plain FP64 (CUDA cores; f64 ops are rare in DL training)
  double hbm_bytes_per_ns = 0;   // device memory bandwidth (GB/s == bytes/ns)
  int32_t sm_count = 0;
  int32_t boost_clock_mhz = 0;  // the datasheet's boost clock: a wave's fixed cycles take time at it
  int64_t l2_bytes = 0;         // last-level cache: what a memory-bound kernel's working set may sit in
  // What may hold the clock below boost on a long run of math (wave_kernel.hpp, sustained_clock_ratio):
  double board_power_w = 0;  // the board's power limit (TDP); 0: not known, never power-limited
  std::string process;       // the chip's fabrication process (process_node.hpp), "TSMC 12FFN"
  // Host link, per direction (pinned memory), and per-transfer latency.
  double h2d_bytes_per_ns = 0;
  double d2h_bytes_per_ns = 0;
  int64_t h2d_latency_ns = 0;
  int64_t d2h_latency_ns = 0;
  int64_t launch_overhead_ns = 0;  // per kernel
  bool full_duplex = true;         // copy engines move both directions at once
  std::string host_link;           // "PCIe 4.0 x16", for listings
  HostDispatch host;               // the host's dispatch costs (0: the host never limits)
  HostOptimizer host_optimizer;    // the host's optimizer update rate (a host-placed optimizer)
};

inline double gbps_to_bytes_per_ns(double gigabytes_per_s) {
  return gigabytes_per_s;
}  // 1e9 B/s == 1 B/ns
inline double tflops_to_flops_per_ns(double tflops) {
  return tflops * 1000.0;
}

}  // namespace mutwo::costmodel
