#include "ir/graph_builder.hpp"

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::ir {

std::vector<int64_t> fused_shape(const std::vector<int64_t>& per_model_shape, FuseAxis axis, int32_t width) {
  std::vector<int64_t> shape = per_model_shape;
  if (width == 1) return shape;
  switch (axis) {
    case FuseAxis::stack:
      shape.insert(shape.begin(), width);
      break;
    case FuseAxis::dim0:
    case FuseAxis::dim1: {
      const size_t dim = axis == FuseAxis::dim0 ? 0 : 1;
      if (shape.size() <= dim)
        throw GraphError("fused_shape: shape " + shape_string(shape) + " has no dim " + std::to_string(dim));
      shape[dim] *= width;
      break;
    }
  }
  return shape;
}

GraphBuilder::GraphBuilder(std::string graph_name, DType dtype, int32_t width, int64_t batch_size)
    : dtype_(dtype) {
  if (width < 1) throw GraphError(fmt::format("graph '{}': width {} must be >= 1", graph_name, width));
  graph_.name = std::move(graph_name);
  graph_.width = width;
  graph_.batch_size = batch_size;
}

TensorId GraphBuilder::new_tensor(const std::string& name, std::vector<int64_t> shape, DType dtype,
                                  TensorRole role) {
  Tensor t;
  t.id = static_cast<TensorId>(graph_.tensors.size());
  t.name = name;
  t.bytes = element_count(shape) * dtype_size_bytes(dtype);
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.role = role;
  t.width = graph_.width;
  graph_.tensors.push_back(std::move(t));
  return graph_.tensors.back().id;
}

TensorId GraphBuilder::add_input(const std::string& name, const std::vector<int64_t>& per_model_shape,
                                 TensorRole role, FuseAxis axis, std::optional<DType> dtype) {
  return new_tensor(name, fused_shape(per_model_shape, axis, graph_.width), dtype.value_or(dtype_), role);
}

TensorId GraphBuilder::add_weight(const std::string& name, const std::vector<int64_t>& per_model_shape,
                                  FuseAxis axis) {
  return add_input(name, per_model_shape, TensorRole::weight, axis);
}

TensorId GraphBuilder::add_laid_out_input(const std::string& name, std::vector<int64_t> shape,
                                          TensorRole role, DType dtype) {
  return new_tensor(name, std::move(shape), dtype, role);
}

std::vector<TensorId> GraphBuilder::add_op(OpKind kind, const std::string& name,
                                           const std::vector<TensorId>& inputs, Attributes attrs) {
  const KindRules* rules = kind_rules(kind);
  if (!rules) {
    throw GraphError(
        fmt::format("op '{}': kind '{}' has no shape inference; build it explicitly", name, kind_name(kind)));
  }
  std::vector<const Tensor*> in;
  for (TensorId id : inputs) {
    if (id < 0 || static_cast<size_t>(id) >= graph_.tensors.size()) {
      throw GraphError(fmt::format("op '{}': input tensor {} does not exist", name, id));
    }
    in.push_back(&graph_.tensors[static_cast<size_t>(id)]);
  }
  InferContext ctx{name, in, attrs, graph_.width};
  InferResult inferred = rules->infer(ctx);

  Op op;
  op.id = static_cast<OpId>(graph_.ops.size());
  op.name = name;
  op.kind = kind;
  op.phase = kind_phase(kind);
  op.inputs = inputs;
  op.flops = inferred.flops;
  op.workspace_bytes = inferred.workspace_bytes;
  op.recomputable = rules->recomputable;
  op.width = graph_.width;
  for (const Tensor* t : in) op.bytes_read += t->bytes;
  for (OutputSpec& out : inferred.outputs) {
    TensorId id = new_tensor(name + out.suffix, std::move(out.shape), out.dtype, out.role);
    op.outputs.push_back(id);
    op.bytes_written += graph_.tensors.back().bytes;
  }
  op.attrs = std::move(attrs);
  for (auto& [key, value] : inferred.derived_attrs) op.attrs.try_emplace(key, std::move(value));
  graph_.ops.push_back(std::move(op));
  return graph_.ops.back().outputs;
}

TensorId GraphBuilder::op(OpKind kind, const std::string& name, const std::vector<TensorId>& inputs,
                          Attributes attrs) {
  return add_op(kind, name, inputs, std::move(attrs)).at(0);
}

Graph GraphBuilder::finish() && {
  link(graph_);
  validate(graph_);
  return std::move(graph_);
}

}  // namespace mutwo::ir
