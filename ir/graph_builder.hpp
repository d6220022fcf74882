#pragma once
// Builds a Graph op by op: leaves are declared per model and laid out for the builder's width,
// op outputs come from the kind's shape inference (kind_rules.hpp), so a model written once
// builds at any fusion width.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/kind_rules.hpp"

namespace mutwo::ir {

// How k models' copies of a per-model leaf tensor are laid out in the fused graph.
enum class FuseAxis : uint8_t {
  stack,  // prepend a model dim: [V,H] -> [k,V,H]   (linear, embedding, layernorm weights; tokens)
  dim0,   // multiply dim 0 by k: [Co,Ci,kh,kw] -> [k*Co,Ci,kh,kw]   (conv and batchnorm weights)
  dim1,   // multiply dim 1 by k: [B,3,H,W] -> [B,3k,H,W]   (images)
};

std::vector<int64_t> fused_shape(const std::vector<int64_t>& per_model_shape, FuseAxis axis, int32_t width);

class GraphBuilder {
 public:
  GraphBuilder(std::string graph_name, DType dtype, int32_t width = 1, int64_t batch_size = 0);

  DType dtype() const { return dtype_; }
  int32_t width() const { return graph_.width; }

  // A leaf tensor given by its per-model shape; dtype defaults to the builder's.
  TensorId add_input(const std::string& name, const std::vector<int64_t>& per_model_shape, TensorRole role,
                     FuseAxis axis, std::optional<DType> dtype = std::nullopt);
  TensorId add_weight(const std::string& name, const std::vector<int64_t>& per_model_shape, FuseAxis axis);
  // A leaf tensor given by its shape as laid out at the builder's width (a graph being rewritten).
  TensorId add_laid_out_input(const std::string& name, std::vector<int64_t> shape, TensorRole role,
                              DType dtype);

  // Appends an op of a kind with shape inference; returns its outputs, output 0 first.
  std::vector<TensorId> add_op(OpKind kind, const std::string& name, const std::vector<TensorId>& inputs,
                               Attributes attrs = {});
  // add_op returning output 0 only (most kinds have one output).
  TensorId op(OpKind kind, const std::string& name, const std::vector<TensorId>& inputs,
              Attributes attrs = {});

  const Tensor& tensor(TensorId id) const { return graph_.tensor(id); }
  const Graph& graph() const { return graph_; }

  // Links producers/consumers, validates and hands the Graph over.
  Graph finish() &&;

 private:
  TensorId new_tensor(const std::string& name, std::vector<int64_t> shape, DType dtype, TensorRole role);

  Graph graph_;
  DType dtype_;
};

}  // namespace mutwo::ir
