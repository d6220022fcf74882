#pragma once
// Where a measured run executes: the device the executor opened (its label, product name and
// memory), the memory cap in force, and the memory limit a run plans, predicts and enforces.
// Shared by the run and profile pipelines.
#include <cstdint>
#include <optional>
#include <string>

#include "ir/executor.hpp"

namespace mutwo::experiments {

struct ExecTarget {
  std::string device;   // as the executor takes it: "cpu", "cuda", "cuda:N"
  std::string label;    // "cpu", "cuda:0 NVIDIA H100 80GB HBM3"
  std::string product;  // "cpu", "NVIDIA H100 80GB HBM3"
  bool is_cuda = false;
  int64_t total_memory_bytes = 0;  // the CUDA device's; 0 on the cpu
  int64_t cap_bytes = 0;           // the memory cap in bytes; 0: none
  double cap_fraction = 0.0;       // CUDA: the allocator fraction; 0: none
  // The catalog GPU of this CUDA device (costmodel::match_device), which predictions use unless
  // the caller names one; nullopt on the cpu or for a device the catalog does not know.
  std::optional<std::string> catalog_gpu;
};

// Opens `device` (empty: the executor's default) once to read its name and memory, and reads the
// memory cap: a fraction of the CUDA device's memory ("0.5") or a size ("2GiB"; on the cpu
// enforced by accounting); empty: none. Throws mutwo::Error on an unknown device, a CUDA device in
// a CPU-only build, a malformed cap, or a fraction on the cpu.
ExecTarget resolve_exec_target(ir::Executor& executor, const std::string& device,
                               const std::string& memory_cap);

// The memory limit a run plans, predicts and (on the cpu) enforces: the catalog GPU's memory
// (or its override), lowered to the cap when one is given.
int64_t run_memory_limit(const ExecTarget& target, int64_t gpu_memory_bytes);

}  // namespace mutwo::experiments
