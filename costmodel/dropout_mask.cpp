#include "costmodel/dropout_mask.hpp"

#include <algorithm>

namespace mutwo::costmodel {

std::vector<OpKernel> dropout_mask_draws(const ir::Graph& graph, const ir::Op& op) {
  std::vector<OpKernel> out;
  if (op.kind != ir::OpKind::dropout && op.kind != ir::OpKind::attn_dropout_context) return out;
  for (ir::TensorId id : op.outputs) {
    const ir::Tensor& mask = graph.tensor(id);
    if (mask.dtype != ir::DType::boolean) continue;
    const int64_t launches = std::max<int64_t>(1, op.width);
    OpKernel k =
        pass_kernel("dropout_mask", ir::KindCategory::elementwise, 1.0 / static_cast<double>(launches), mask);
    k.sample.m = std::max<int64_t>(1, k.sample.m / launches);
    k.launches = launches;
    k.helper = true;
    out.push_back(std::move(k));
    break;
  }
  return out;
}

}  // namespace mutwo::costmodel
