#pragma once
// The executor flags `run` and `profile` share (--device, --memory-cap, --seed), and the device they
// resolve to: its label, the catalog GPU a prediction uses for it, and the memory cap in force.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/device_flags.hpp"

namespace mutwo::cli {

struct ExecFlags {
  std::string device;      // "cpu", "cuda", "cuda:N"; empty: cuda in a CUDA build, else cpu
  std::string memory_cap;  // "0.5" (a fraction of the CUDA device) or "2GiB"; empty: none
  uint64_t seed = 0;
};

void add_exec_flags(CLI::App* cmd, ExecFlags& flags);

struct ExecTarget {
  std::string label;    // "cpu", "cuda:0 NVIDIA H100 80GB HBM3"
  std::string product;  // "cpu", "NVIDIA H100 80GB HBM3"
  bool is_cuda = false;
  int64_t total_memory_bytes = 0;  // the CUDA device's; 0 on the cpu
  int64_t cap_bytes = 0;           // --memory-cap in bytes; 0: none
  double cap_fraction = 0.0;       // CUDA: the allocator fraction; 0: none
};

// Opens the device once to read its name and memory. Without --gpu, a CUDA device the catalog
// knows becomes the prediction's GPU (device_flags.gpu is set). Throws mutwo::Error on an unknown
// device, a CUDA device in a CPU-only build, a malformed cap, or a fraction on the cpu.
ExecTarget resolve_exec_target(ExecFlags& flags, DeviceFlags& device_flags);

// The memory limit a run plans, predicts and (on the cpu) enforces: the catalog GPU's memory
// (or --memory), lowered to the cap when one is given.
int64_t run_memory_limit(const ExecTarget& target, int64_t gpu_memory_bytes);

}  // namespace mutwo::cli
