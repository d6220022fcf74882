#include "exec/model_layout.hpp"

#include <fmt/format.h>

#include "support/error.hpp"
#include "transforms/fusion.hpp"

namespace mutwo::exec {
namespace {

using ir::OpKind;

ModelAxis from_fuse_axis(ir::FuseAxis axis) {
  switch (axis) {
    case ir::FuseAxis::stack:
      return ModelAxis::stack;
    case ir::FuseAxis::dim0:
      return ModelAxis::dim0;
    case ir::FuseAxis::dim1:
      return ModelAxis::dim1;
  }
  return ModelAxis::stack;
}

// Axis of forward output `index` of `op`, given its inputs' axes (the rule is transforms/fusion's).
ModelAxis forward_output_axis(const ir::Op& op, size_t index, const std::vector<ModelAxis>& axes) {
  if (transforms::keeps_input_layout(op.kind)) return axes[static_cast<size_t>(op.inputs[0])];
  return from_fuse_axis(transforms::fused_layout_of_output(op, index));
}

}  // namespace

std::vector<ModelAxis> model_axes(const ir::Graph& graph) {
  std::vector<ModelAxis> axes(graph.tensors.size(), ModelAxis::stack);
  std::vector<bool> known(graph.tensors.size(), false);
  for (const ir::Op& op : graph.ops) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const auto id = static_cast<size_t>(op.inputs[i]);
      if (known[id] || graph.tensors[id].producer != ir::kNoId) continue;
      // A leaf read by a backward or optimizer op first (a weight only the optimizer reads) keeps
      // the stacked default unless a forward reader says otherwise.
      if (op.phase == ir::Phase::forward) {
        axes[id] = from_fuse_axis(transforms::fused_layout_of_use(graph, op, i));
        known[id] = true;
      }
    }
    if (op.phase == ir::Phase::optimizer) {
      // Gradient and state are laid out as the parameter they update (input 0).
      for (size_t i = 1; i < op.inputs.size(); ++i) {
        axes[static_cast<size_t>(op.inputs[i])] = axes[static_cast<size_t>(op.inputs[0])];
      }
    } else if (op.phase == ir::Phase::forward) {
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        axes[static_cast<size_t>(op.outputs[i])] = forward_output_axis(op, i, axes);
      }
    } else if (op.kind == OpKind::accumulate_grad || op.kind == OpKind::sum_to_shape ||
               op.kind == OpKind::cast_backward) {
      axes[static_cast<size_t>(op.outputs[0])] = axes[static_cast<size_t>(op.inputs[0])];
    } else if (op.phase == ir::Phase::backward && op.forward_of != ir::kNoId) {
      // Outputs are the gradients of the forward inputs that need one, in input order.
      const ir::Op& fwd = graph.op(op.forward_of);
      const auto flags = ir::attr_ints_or(op.attrs, "needs_grad", {}, op.name);
      size_t next = 0;
      for (size_t i = 0; i < fwd.inputs.size() && next < op.outputs.size(); ++i) {
        if (i < flags.size() && flags[i] == 0) continue;
        axes[static_cast<size_t>(op.outputs[next++])] = axes[static_cast<size_t>(fwd.inputs[i])];
      }
    }
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (graph.tensors[i].width <= 1) axes[i] = ModelAxis::single;
  }
  return axes;
}

std::vector<int64_t> per_model_shape(const std::vector<int64_t>& shape, ModelAxis axis, int32_t width) {
  std::vector<int64_t> out = shape;
  switch (axis) {
    case ModelAxis::single:
      return out;
    case ModelAxis::stack:
      if (out.empty() || out[0] != width) break;
      out.erase(out.begin());
      return out;
    case ModelAxis::dim0:
      if (out.empty() || out[0] % width != 0) break;
      out[0] /= width;
      return out;
    case ModelAxis::dim1:
      if (out.size() < 2 || out[1] % width != 0) break;
      out[1] /= width;
      return out;
  }
  throw Error(fmt::format("shape {} has no model axis of width {}", ir::shape_string(shape), width));
}

}  // namespace mutwo::exec
