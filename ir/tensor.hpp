#pragma once
// A tensor of the Graph IR: shape, dtype, size, role and where it is produced and read.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.hpp"

namespace mutwo::ir {

using TensorId = int32_t;
using OpId = int32_t;
inline constexpr int32_t kNoId = -1;

// What a tensor is for; decides its lifetime in memory simulation.
// weight, gradient and optimizer_state stay resident across steps; input and label live for the
// step; activation, temporary and loss live from their producer to their last reader.
enum class TensorRole : uint8_t {
  input,
  label,
  weight,
  gradient,         // gradient of a weight (persistent, like PyTorch's .grad)
  optimizer_state,  // momentum, Adam moments
  activation,       // forward result (including tensors saved for backward: masks, statistics)
  temporary,        // backward intermediates: gradients of activations, partial gradients
  loss,
};

std::string_view role_name(TensorRole role);
TensorRole parse_role(std::string_view name);  // throws UnknownNameError
// Resident for the whole run rather than allocated by the step.
bool is_persistent(TensorRole role);

struct Tensor {
  TensorId id = kNoId;
  std::string name;
  std::vector<int64_t> shape;  // fused layout when width > 1 (see ir/op_kind.hpp)
  DType dtype = DType::f32;
  int64_t bytes = 0;  // product(shape) * dtype size
  TensorRole role = TensorRole::activation;
  OpId producer = kNoId;        // derived by Graph::link(); kNoId for inputs and persistent state
  std::vector<OpId> consumers;  // derived by Graph::link(); ascending op ids
  int32_t width = 1;            // models this tensor holds
};

// Throws GraphError naming the shape when the product overflows int64.
int64_t element_count(const std::vector<int64_t>& shape);
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace mutwo::ir
