#pragma once
// Host buffers for swapped-out tensors, pooled by byte size and reused across steps: a step's swaps
// take buffers, the step's end gives them all back, and the next step takes the same ones again.
// Pinned (page-locked, for asynchronous copies) on CUDA, pageable on the CPU.
#include <cstdint>
#include <map>
#include <vector>

#include <ATen/core/Tensor.h>

namespace mutwo::exec {

class HostBufferPool {
 public:
  explicit HostBufferPool(bool pinned) : pinned_(pinned) {}
  // A buffer shaped and typed like `like`, taken from the pool or newly allocated.
  at::Tensor take(const at::Tensor& like);
  // Every buffer taken since the last call returns to the pool.
  void give_back_all();

 private:
  bool pinned_;
  std::map<int64_t, std::vector<at::Tensor>> free_;  // raw byte buffers by size
  std::vector<at::Tensor> taken_;
};

}  // namespace mutwo::exec
