#pragma once
// The memory rule every component that counts device memory follows (the simulator, the executor's
// accounting, DTR, checkmate, the plan emitter and schedule validation): one definition, so a
// predicted and a measured peak mean the same thing.
//
// - Block size: every allocation is rounded up to a multiple of 512 B, the caching allocator's
//   minimum block size (PyTorch c10/cuda/CUDACachingAllocator.cpp, kMinBlockSize = 512); a 0-byte
//   tensor takes nothing. Segments (2 MiB / 20 MiB) and fragmentation are not modelled: the figure
//   is the sum of live blocks, what torch.cuda.max_memory_allocated() reports.
// - Resident at the start of a step: weights, gradients and optimizer state (they persist across
//   steps) and the step's inputs and labels; model state a schedule keeps on the host
//   (Schedule::host_state) is not.
// - Each op's request when it starts: its outputs that are not resident yet, plus its workspace,
//   which is released when the op ends (an optimizer step's: the weight-sized temporaries its
//   update holds at once, ir/optimizer_kernels.hpp).
#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.hpp"
#include "ir/schedule.hpp"

namespace mutwo::ir {

inline constexpr int64_t kAllocationBlockBytes = 512;

// bytes rounded up to whole 512-B blocks (0 stays 0). bytes must be >= 0.
constexpr int64_t allocation_bytes(int64_t bytes) {
  return (bytes + kAllocationBlockBytes - 1) / kAllocationBlockBytes * kAllocationBlockBytes;
}

// Allocated before the first instruction of a step and never freed by it.
bool resident_at_start(TensorRole role);

// Per tensor of schedule.graph: 1 when it is on the device at the step's start (resident_at_start
// by role and not in schedule.host_state). Ids in host_state must be in range (validate first).
std::vector<uint8_t> resident_at_start_mask(const Schedule& schedule);

// Rounded bytes op asks for when it starts: its outputs for which is_resident(t) is false, plus
// its workspace. IsResident: bool(TensorId).
template <typename IsResident>
int64_t op_request_bytes(const Graph& graph, OpId op, IsResident&& is_resident) {
  const Op& o = graph.ops[static_cast<size_t>(op)];
  int64_t bytes = allocation_bytes(o.workspace_bytes);
  for (TensorId t : o.outputs) {
    if (!is_resident(t)) bytes += allocation_bytes(graph.tensors[static_cast<size_t>(t)].bytes);
  }
  return bytes;
}

}  // namespace mutwo::ir
