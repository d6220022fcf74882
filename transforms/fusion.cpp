#include "transforms/fusion.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/graph_builder.hpp"
#include "ir/kind_rules.hpp"
#include "support/error.hpp"

namespace mutwo::transforms {
namespace {

std::string_view axis_name(ir::FuseAxis axis) {
  switch (axis) {
    case ir::FuseAxis::stack:
      return "stack";
    case ir::FuseAxis::dim0:
      return "dim0";
    case ir::FuseAxis::dim1:
      return "dim1";
  }
  return "?";
}

void check_fusable(const ir::Graph& g, int32_t width) {
  if (width < 1)
    throw GraphError(fmt::format("horizontal_fuse of graph '{}': width {} must be >= 1", g.name, width));
  if (g.width != 1) {
    throw GraphError(
        fmt::format("horizontal_fuse: graph '{}' has field 'width' = {}; only a width-1 graph "
                    "(one model) can be fused",
                    g.name, g.width));
  }
  for (const ir::Tensor& t : g.tensors) {
    if (t.width != 1) {
      throw GraphError(
          fmt::format("horizontal_fuse: tensor {} '{}' of graph '{}' has field 'width' = {}; only "
                      "width-1 tensors can be fused",
                      t.id, t.name, g.name, t.width));
    }
  }
  for (const ir::Op& op : g.ops) {
    if (op.phase != ir::Phase::forward) {
      throw GraphError(
          fmt::format("horizontal_fuse: op {} '{}' of graph '{}' has field 'phase' = {}; fuse the "
                      "forward graph, then build its training step",
                      op.id, op.name, g.name, ir::phase_name(op.phase)));
    }
    if (op.kind == ir::OpKind::opaque || ir::kind_rules(op.kind) == nullptr) {
      throw GraphError(
          fmt::format("horizontal_fuse: op {} '{}' of graph '{}' has field 'kind' = '{}', whose "
                      "semantics are unknown; imported traces cannot be fused",
                      op.id, op.name, g.name, ir::kind_name(op.kind)));
    }
    if (op.width != 1) {
      throw GraphError(fmt::format("horizontal_fuse: op {} '{}' of graph '{}' has field 'width' = {}", op.id,
                                   op.name, g.name, op.width));
    }
  }
}

// One layout per leaf, from every op that reads it; a leaf read in two layouts cannot be fused.
std::vector<std::optional<ir::FuseAxis>> leaf_layouts(const ir::Graph& g) {
  std::vector<std::optional<ir::FuseAxis>> axes(g.tensors.size());
  for (const ir::Op& op : g.ops) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const ir::Tensor& t = g.tensor(op.inputs[i]);
      if (t.producer != ir::kNoId) continue;
      const ir::FuseAxis axis = fused_layout_of_use(g, op, i);
      auto& slot = axes[static_cast<size_t>(t.id)];
      if (slot && *slot != axis) {
        throw GraphError(fmt::format(
            "horizontal_fuse: tensor {} '{}' is read in layout '{}' and, as input {} of "
            "op {} '{}' ({}), in layout '{}'",
            t.id, t.name, axis_name(*slot), i, op.id, op.name, ir::kind_name(op.kind), axis_name(axis)));
      }
      slot = axis;
    }
  }
  return axes;
}

}  // namespace

// "Channel" kinds take images and activations concatenated on dim 1 and their weights (conv W and
// bias, batch-norm gamma and beta) concatenated on dim 0; every other operand is stacked.
ir::FuseAxis fused_layout_for_use(ir::OpKind kind, size_t input) {
  switch (kind) {
    case ir::OpKind::conv2d:
    case ir::OpKind::batchnorm2d:
      return input == 0 ? ir::FuseAxis::dim1 : ir::FuseAxis::dim0;
    case ir::OpKind::max_pool2d:
    case ir::OpKind::avg_pool2d:
    case ir::OpKind::adaptive_avg_pool2d:
    case ir::OpKind::flatten:
    case ir::OpKind::concat_channels:
    case ir::OpKind::slice_channels:
    case ir::OpKind::channel_shuffle:
    case ir::OpKind::permute:  // a leaf permuted is an image (NCHW to NHWC)
      return ir::FuseAxis::dim1;
    case ir::OpKind::class_token_concat:  // patches in channel layout, class token W stacked
      return input == 0 ? ir::FuseAxis::dim1 : ir::FuseAxis::stack;
    default:
      return ir::FuseAxis::stack;
  }
}

bool keeps_input_layout(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::relu:
    case ir::OpKind::relu6:
    case ir::OpKind::gelu:
    case ir::OpKind::gelu_lean:
    case ir::OpKind::tanh:
    case ir::OpKind::sigmoid:
    case ir::OpKind::hardswish:
    case ir::OpKind::hardsigmoid:
    case ir::OpKind::silu:
    case ir::OpKind::dropout:
    case ir::OpKind::add:
    case ir::OpKind::mul:
    case ir::OpKind::softmax:
    case ir::OpKind::cast:
      return true;
    default:
      return false;
  }
}

ir::FuseAxis fused_layout_of_output(const ir::Op& op, size_t index) {
  switch (op.kind) {
    case ir::OpKind::conv2d:
    case ir::OpKind::max_pool2d:
    case ir::OpKind::avg_pool2d:
    case ir::OpKind::adaptive_avg_pool2d:
    case ir::OpKind::concat_channels:
    case ir::OpKind::slice_channels:
    case ir::OpKind::channel_shuffle:
      return ir::FuseAxis::dim1;
    case ir::OpKind::batchnorm2d:
      return index == 0 ? ir::FuseAxis::dim1 : ir::FuseAxis::dim0;  // y, then per-channel statistics
    case ir::OpKind::permute:
      return ir::attr_ints(op.attrs, "dims", op.name).at(1) == 3 ? ir::FuseAxis::dim1 : ir::FuseAxis::stack;
    default:
      return ir::FuseAxis::stack;
  }
}

ir::FuseAxis fused_layout_of_activation(const ir::Graph& graph, ir::TensorId id) {
  while (true) {
    const ir::Tensor& t = graph.tensor(id);
    if (t.producer == ir::kNoId) return ir::FuseAxis::stack;
    const ir::Op& producer = graph.op(t.producer);
    if (!keeps_input_layout(producer.kind) || producer.inputs.empty()) {
      const auto at = std::find(producer.outputs.begin(), producer.outputs.end(), id);
      return fused_layout_of_output(producer, static_cast<size_t>(at - producer.outputs.begin()));
    }
    id = producer.inputs[0];
  }
}

ir::FuseAxis fused_layout_of_use(const ir::Graph& graph, const ir::Op& op, size_t input) {
  const ir::Op* reader = &op;
  size_t position = input;
  const ir::Tensor& leaf = graph.tensor(op.inputs.at(input));
  while (reader->kind == ir::OpKind::cast) {
    const ir::Tensor& out = graph.tensor(reader->outputs.at(0));
    if (out.consumers.empty()) return ir::FuseAxis::stack;
    const ir::Op& next = graph.op(out.consumers.front());
    position =
        static_cast<size_t>(std::find(next.inputs.begin(), next.inputs.end(), out.id) - next.inputs.begin());
    reader = &next;
  }
  if ((reader->kind == ir::OpKind::add || reader->kind == ir::OpKind::mul) && position == 1) {
    const ir::Tensor& a = graph.tensor(reader->inputs[0]);
    if (a.shape.size() == 4 && fused_layout_of_activation(graph, a.id) == ir::FuseAxis::dim1) {
      if (leaf.shape.size() == 3) return ir::FuseAxis::dim0;
      if (leaf.shape.size() == 4) return ir::FuseAxis::dim1;
    }
  }
  return fused_layout_for_use(reader->kind, position);
}

ir::Graph horizontal_fuse(const ir::Graph& forward, int32_t width) {
  ir::validate(forward);
  check_fusable(forward, width);
  const std::vector<std::optional<ir::FuseAxis>> axes = leaf_layouts(forward);

  // "<name> x<k>", as graph.hpp names fused graphs; width 1 changes nothing, so keeps the name.
  const std::string name = width == 1 ? forward.name : fmt::format("{} x{}", forward.name, width);
  ir::GraphBuilder b(name, ir::DType::f32, width, forward.batch_size);
  std::vector<ir::TensorId> mapped(forward.tensors.size(), ir::kNoId);
  auto add_leaf = [&](const ir::Tensor& t) {
    // A leaf no op reads (unusual) is stacked.
    const ir::FuseAxis axis = axes[static_cast<size_t>(t.id)].value_or(ir::FuseAxis::stack);
    mapped[static_cast<size_t>(t.id)] = b.add_input(t.name, t.shape, t.role, axis, t.dtype);
  };

  // Leaves are declared in the original's tensor order relative to the ops, so a graph built by
  // GraphBuilder keeps its tensor ids (the same ids as the model's native width-k build).
  size_t next = 0;
  auto add_leaves_before = [&](size_t end) {
    for (; next < end && next < forward.tensors.size(); ++next) {
      const ir::Tensor& t = forward.tensors[next];
      if (t.producer == ir::kNoId && mapped[next] == ir::kNoId) add_leaf(t);
    }
  };
  for (const ir::Op& op : forward.ops) {
    if (!op.outputs.empty()) {
      add_leaves_before(static_cast<size_t>(*std::min_element(op.outputs.begin(), op.outputs.end())));
    }
    std::vector<ir::TensorId> inputs;
    for (ir::TensorId id : op.inputs) {
      if (mapped[static_cast<size_t>(id)] == ir::kNoId) add_leaf(forward.tensor(id));  // leaf declared late
      inputs.push_back(mapped[static_cast<size_t>(id)]);
    }
    const std::vector<ir::TensorId> outputs = b.add_op(op.kind, op.name, inputs, op.attrs);
    if (outputs.size() != op.outputs.size()) {
      throw GraphError(
          fmt::format("horizontal_fuse: op {} '{}' has {} outputs, its kind '{}' gives {} at width {}", op.id,
                      op.name, op.outputs.size(), ir::kind_name(op.kind), outputs.size(), width));
    }
    for (size_t i = 0; i < outputs.size(); ++i) mapped[static_cast<size_t>(op.outputs[i])] = outputs[i];
  }
  add_leaves_before(forward.tensors.size());

  ir::Graph fused = std::move(b).finish();
  fused.precision = forward.precision;
  // Output names come from the builder (op name + suffix); keep the original's.
  for (const ir::Tensor& t : forward.tensors) {
    fused.tensors[static_cast<size_t>(mapped[static_cast<size_t>(t.id)])].name = t.name;
  }
  return fused;
}

}  // namespace mutwo::transforms
