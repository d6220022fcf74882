#pragma once
// The PyTorch modules several zoo families build alike (nn.Linear, nn.LayerNorm, nn.Dropout), each
// named as its module's state_dict keys ("<module>.weight", "<module>.bias") and stacked at width k.
// Family constants (eps, p) stay in the family's file, with their sources.
#include <string>

#include "ir/graph_builder.hpp"

namespace mutwo::zoo {

// nn.Linear(in, out) with bias: weight [out, in], bias [out]; `in` is x's last dim.
ir::TensorId linear_layer(ir::GraphBuilder& b, ir::TensorId x, const std::string& module,
                          int64_t out_features);

// nn.LayerNorm over x's last dim with affine weight and bias.
ir::TensorId layer_norm_layer(ir::GraphBuilder& b, ir::TensorId x, const std::string& module, double eps);

// nn.Dropout(p).
ir::TensorId dropout_layer(ir::GraphBuilder& b, ir::TensorId x, const std::string& module, double p);

}  // namespace mutwo::zoo
