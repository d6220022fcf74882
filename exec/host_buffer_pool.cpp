#include "exec/host_buffer_pool.hpp"

#include <ATen/ATen.h>

namespace mutwo::exec {

at::Tensor HostBufferPool::take(const at::Tensor& like) {
  const auto bytes = static_cast<int64_t>(like.nbytes());
  std::vector<at::Tensor>& free_list = free_[bytes];
  at::Tensor raw;
  if (free_list.empty()) {
    raw = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).pinned_memory(pinned_));
  } else {
    raw = std::move(free_list.back());
    free_list.pop_back();
  }
  taken_.push_back(raw);
  return raw.view(like.scalar_type()).view(like.sizes());
}

void HostBufferPool::give_back_all() {
  for (at::Tensor& raw : taken_) free_[static_cast<int64_t>(raw.nbytes())].push_back(std::move(raw));
  taken_.clear();
}

}  // namespace mutwo::exec
