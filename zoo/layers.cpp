#include "zoo/layers.hpp"

namespace mutwo::zoo {

ir::TensorId linear_layer(ir::GraphBuilder& b, ir::TensorId x, const std::string& module,
                          int64_t out_features) {
  const int64_t in_features = b.tensor(x).shape.back();
  const ir::TensorId w = b.add_weight(module + ".weight", {out_features, in_features}, ir::FuseAxis::stack);
  const ir::TensorId bias = b.add_weight(module + ".bias", {out_features}, ir::FuseAxis::stack);
  return b.op(ir::OpKind::linear, module, {x, w, bias});
}

ir::TensorId layer_norm_layer(ir::GraphBuilder& b, ir::TensorId x, const std::string& module, double eps) {
  const int64_t hidden = b.tensor(x).shape.back();
  const ir::TensorId gamma = b.add_weight(module + ".weight", {hidden}, ir::FuseAxis::stack);
  const ir::TensorId beta = b.add_weight(module + ".bias", {hidden}, ir::FuseAxis::stack);
  return b.op(ir::OpKind::layernorm, module, {x, gamma, beta}, {{"eps", eps}});
}

ir::TensorId dropout_layer(ir::GraphBuilder& b, ir::TensorId x, const std::string& module, double p) {
  return b.op(ir::OpKind::dropout, module, {x}, {{"p", p}});
}

}  // namespace mutwo::zoo
