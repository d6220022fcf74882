#pragma once
// Autodiff: forward Graph -> training-step Graph (forward, backward, optimizer), following the
// saved-tensor rules of PyTorch's tools/autograd/derivatives.yaml (kind_rules.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.hpp"
#include "transforms/optimizer_kind.hpp"

namespace mutwo::transforms {

// Hyper-parameters; the lists hold one value per fused model (size 1 or the graph's width;
// size 1 is broadcast to every model).
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adam;
  std::vector<double> lr{1e-3};
  std::vector<double> momentum{0.9};      // sgd
  std::vector<double> beta1{0.9};         // adam, adamw
  std::vector<double> beta2{0.999};       // adam, adamw
  std::vector<double> eps{1e-8};          // adam, adamw
  std::vector<double> weight_decay{0.0};  // sgd and adam: L2 added to the gradient; adamw: decoupled
};

// Appends the backward ops (gradients of every weight w.r.t. the sum of the graph's losses) and one
// optimizer step per weight. The result validates. Throws GraphError if the graph has no loss.
ir::Graph build_training_step(const ir::Graph& forward, const OptimizerConfig& optimizer);

}  // namespace mutwo::transforms
