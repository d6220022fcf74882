#include "profiles/memory_rule.hpp"

namespace mutwo::profiles {

bool resident_at_start(TensorRole role) {
  return is_persistent(role) || role == TensorRole::input || role == TensorRole::label;
}

int64_t resident_at_start_bytes(const Graph& graph) {
  int64_t bytes = 0;
  for (const Tensor& t : graph.tensors) {
    if (resident_at_start(t.role)) bytes += allocation_bytes(t.bytes);
  }
  return bytes;
}

}  // namespace mutwo::profiles
