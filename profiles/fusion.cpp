#include "profiles/fusion.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "profiles/error.hpp"
#include "profiles/graph_builder.hpp"
#include "profiles/kind_rules.hpp"

namespace mutwo::profiles {
namespace {

std::string_view axis_name(FuseAxis axis) {
  switch (axis) {
    case FuseAxis::stack:
      return "stack";
    case FuseAxis::dim0:
      return "dim0";
    case FuseAxis::dim1:
      return "dim1";
  }
  return "?";
}

void check_fusable(const Graph& g, int32_t width) {
  if (width < 1)
    throw GraphError(fmt::format("horizontal_fuse of graph '{}': width {} must be >= 1", g.name, width));
  if (g.width != 1) {
    throw GraphError(
        fmt::format("horizontal_fuse: graph '{}' has field 'width' = {}; only a width-1 graph "
                    "(one model) can be fused",
                    g.name, g.width));
  }
  for (const Tensor& t : g.tensors) {
    if (t.width != 1) {
      throw GraphError(
          fmt::format("horizontal_fuse: tensor {} '{}' of graph '{}' has field 'width' = {}; only "
                      "width-1 tensors can be fused",
                      t.id, t.name, g.name, t.width));
    }
  }
  for (const Op& op : g.ops) {
    if (op.phase != Phase::forward) {
      throw GraphError(
          fmt::format("horizontal_fuse: op {} '{}' of graph '{}' has field 'phase' = {}; fuse the "
                      "forward graph, then build its training step",
                      op.id, op.name, g.name, phase_name(op.phase)));
    }
    if (op.kind == OpKind::opaque || kind_rules(op.kind) == nullptr) {
      throw GraphError(
          fmt::format("horizontal_fuse: op {} '{}' of graph '{}' has field 'kind' = '{}', whose "
                      "semantics are unknown; imported traces cannot be fused",
                      op.id, op.name, g.name, kind_name(op.kind)));
    }
    if (op.width != 1) {
      throw GraphError(fmt::format("horizontal_fuse: op {} '{}' of graph '{}' has field 'width' = {}", op.id,
                                   op.name, g.name, op.width));
    }
  }
}

// One layout per leaf, from every op that reads it; a leaf read in two layouts cannot be fused.
std::vector<std::optional<FuseAxis>> leaf_layouts(const Graph& g) {
  std::vector<std::optional<FuseAxis>> axes(g.tensors.size());
  for (const Op& op : g.ops) {
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const Tensor& t = g.tensor(op.inputs[i]);
      if (t.producer != kNoId) continue;
      const FuseAxis axis = fused_layout_of_use(g, op, i);
      auto& slot = axes[static_cast<size_t>(t.id)];
      if (slot && *slot != axis) {
        throw GraphError(fmt::format(
            "horizontal_fuse: tensor {} '{}' is read in layout '{}' and, as input {} of "
            "op {} '{}' ({}), in layout '{}'",
            t.id, t.name, axis_name(*slot), i, op.id, op.name, kind_name(op.kind), axis_name(axis)));
      }
      slot = axis;
    }
  }
  return axes;
}

}  // namespace

// "Channel" kinds take images and activations concatenated on dim 1 and their weights (conv W and
// bias, batch-norm gamma and beta) concatenated on dim 0; every other operand is stacked.
FuseAxis fused_layout_for_use(OpKind kind, size_t input) {
  switch (kind) {
    case OpKind::conv2d:
    case OpKind::batchnorm2d:
      return input == 0 ? FuseAxis::dim1 : FuseAxis::dim0;
    case OpKind::max_pool2d:
    case OpKind::adaptive_avg_pool2d:
    case OpKind::flatten:
      return FuseAxis::dim1;
    case OpKind::class_token_concat:  // patches in channel layout, class token W stacked
      return input == 0 ? FuseAxis::dim1 : FuseAxis::stack;
    default:
      return FuseAxis::stack;
  }
}

FuseAxis fused_layout_of_use(const Graph& graph, const Op& op, size_t input) {
  const Op* reader = &op;
  size_t position = input;
  while (reader->kind == OpKind::cast) {
    const Tensor& out = graph.tensor(reader->outputs.at(0));
    if (out.consumers.empty()) return FuseAxis::stack;
    const Op& next = graph.op(out.consumers.front());
    position = static_cast<size_t>(std::find(next.inputs.begin(), next.inputs.end(), out.id) - next.inputs.begin());
    reader = &next;
  }
  return fused_layout_for_use(reader->kind, position);
}

Graph horizontal_fuse(const Graph& forward, int32_t width) {
  validate(forward);
  check_fusable(forward, width);
  const std::vector<std::optional<FuseAxis>> axes = leaf_layouts(forward);

  // "<name> x<k>", as graph.hpp names fused graphs; width 1 changes nothing, so keeps the name.
  const std::string name = width == 1 ? forward.name : fmt::format("{} x{}", forward.name, width);
  GraphBuilder b(name, DType::f32, width, forward.batch_size);
  std::vector<TensorId> mapped(forward.tensors.size(), kNoId);
  auto add_leaf = [&](const Tensor& t) {
    // A leaf no op reads (unusual) is stacked.
    const FuseAxis axis = axes[static_cast<size_t>(t.id)].value_or(FuseAxis::stack);
    mapped[static_cast<size_t>(t.id)] = b.add_input(t.name, t.shape, t.role, axis, t.dtype);
  };

  // Leaves are declared in the original's tensor order relative to the ops, so a graph built by
  // GraphBuilder keeps its tensor ids (the same ids as the model's native width-k build).
  size_t next = 0;
  auto add_leaves_before = [&](size_t end) {
    for (; next < end && next < forward.tensors.size(); ++next) {
      const Tensor& t = forward.tensors[next];
      if (t.producer == kNoId && mapped[next] == kNoId) add_leaf(t);
    }
  };
  for (const Op& op : forward.ops) {
    if (!op.outputs.empty()) {
      add_leaves_before(static_cast<size_t>(*std::min_element(op.outputs.begin(), op.outputs.end())));
    }
    std::vector<TensorId> inputs;
    for (TensorId id : op.inputs) {
      if (mapped[static_cast<size_t>(id)] == kNoId) add_leaf(forward.tensor(id));  // leaf declared late
      inputs.push_back(mapped[static_cast<size_t>(id)]);
    }
    const std::vector<TensorId> outputs = b.add_op(op.kind, op.name, inputs, op.attrs);
    if (outputs.size() != op.outputs.size()) {
      throw GraphError(
          fmt::format("horizontal_fuse: op {} '{}' has {} outputs, its kind '{}' gives {} at width {}", op.id,
                      op.name, op.outputs.size(), kind_name(op.kind), outputs.size(), width));
    }
    for (size_t i = 0; i < outputs.size(); ++i) mapped[static_cast<size_t>(op.outputs[i])] = outputs[i];
  }
  add_leaves_before(forward.tensors.size());

  Graph fused = std::move(b).finish();
  fused.precision = forward.precision;
  // Output names come from the builder (op name + suffix); keep the original's.
  for (const Tensor& t : forward.tensors) {
    fused.tensors[static_cast<size_t>(mapped[static_cast<size_t>(t.id)])].name = t.name;
  }
  return fused;
}

}  // namespace mutwo::profiles
