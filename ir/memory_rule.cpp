#include "ir/memory_rule.hpp"

namespace mutwo::ir {

bool resident_at_start(TensorRole role) {
  return is_persistent(role) || role == TensorRole::input || role == TensorRole::label;
}

std::vector<uint8_t> resident_at_start_mask(const Schedule& schedule) {
  std::vector<uint8_t> mask(schedule.graph.tensors.size(), 0);
  for (const Tensor& t : schedule.graph.tensors)
    mask[static_cast<size_t>(t.id)] = resident_at_start(t.role) ? 1 : 0;
  for (TensorId id : schedule.host_state) mask.at(static_cast<size_t>(id)) = 0;
  return mask;
}

}  // namespace mutwo::ir
