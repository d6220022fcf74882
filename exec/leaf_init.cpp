#include "exec/leaf_init.hpp"

#include <cmath>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "exec/kernel.hpp"
#include "exec/model_tensors.hpp"
#include "exec/torch_types.hpp"
#include "support/error.hpp"

namespace mutwo::exec {
namespace {

using ir::OpKind;
using ir::TensorRole;

// Exclusive upper bound of the values an int64 leaf may hold, from its first reader that states one.
int64_t index_bound(const ir::Graph& graph, const ir::Tensor& t, int32_t width) {
  for (ir::OpId id : t.consumers) {
    const ir::Op& op = graph.op(id);
    if (op.phase != ir::Phase::forward) continue;
    const bool first = !op.inputs.empty() && op.inputs[0] == t.id;
    const bool second = op.inputs.size() > 1 && op.inputs[1] == t.id;
    if ((op.kind == OpKind::embedding || op.kind == OpKind::embedding_bag) && first) {
      const auto& w = graph.tensor(op.inputs[1]).shape;  // [V,H] or [k,V,H]
      return w[w.size() - 2];
    }
    if (op.kind == OpKind::cross_entropy && second) return graph.tensor(op.inputs[0]).shape.back();
  }
  throw Error(
      fmt::format("cannot synthesise tensor {} '{}' (int64, width {}): none of its readers is an "
                  "embedding or a cross-entropy, so the range of its values is unknown",
                  t.id, t.name, width));
}

bool is_norm_scale(const ir::Graph& graph, const ir::Tensor& t) {
  for (ir::OpId id : t.consumers) {
    const ir::Op& op = graph.op(id);
    if ((op.kind == OpKind::layernorm || op.kind == OpKind::layernorm_lean || op.kind == OpKind::batchnorm2d) &&
        op.inputs.size() > 1 &&
        op.inputs[1] == t.id) {
      return true;
    }
  }
  return false;
}

bool read_as_bce_label(const ir::Graph& graph, const ir::Tensor& t) {
  for (ir::OpId id : t.consumers) {
    const ir::Op& op = graph.op(id);
    if (op.kind == OpKind::bce_with_logits && op.inputs.size() > 1 && op.inputs[1] == t.id) return true;
  }
  return false;
}

// One model's copy of leaf t.
at::Tensor one_model_value(const ir::Graph& graph, const ir::Tensor& t, const std::vector<int64_t>& shape,
                           at::Generator& gen, const at::Device& device) {
  const at::TensorOptions options = at::TensorOptions().dtype(scalar_type(t.dtype)).device(device);
  switch (t.role) {
    case TensorRole::gradient:
    case TensorRole::optimizer_state:
      return at::zeros(shape, options);
    case TensorRole::weight: {
      if (shape.size() >= 2) {
        int64_t fan_in = 1;
        for (size_t i = 1; i < shape.size(); ++i) fan_in *= shape[i];
        const double bound = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(fan_in, 1)));
        return at::empty(shape, options).uniform_(-bound, bound, gen);
      }
      at::Tensor v = at::empty(shape, options).uniform_(-0.1, 0.1, gen);
      return is_norm_scale(graph, t) ? v.add_(1.0) : v;
    }
    default:
      break;
  }
  // Inputs and labels (and any other leaf role).
  if (t.dtype == ir::DType::i64 || t.dtype == ir::DType::i32) {
    const int64_t bound = index_bound(graph, t, t.width);
    return at::randint(0, bound, shape, gen, options);
  }
  if (!ir::is_floating(t.dtype)) return at::zeros(shape, options);
  if (read_as_bce_label(graph, t)) return at::empty(shape, options).bernoulli_(0.5, gen);
  return at::empty(shape, options).normal_(0.0, 1.0, gen);
}

}  // namespace

std::string_view base_name(std::string_view name) {
  if (name.size() > 2 && name[0] == 's') {
    size_t i = 1;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
    if (i > 1 && i < name.size() && name[i] == '/') return name.substr(i + 1);
  }
  return name;
}

at::Tensor initial_leaf_value(const ir::Graph& graph, ir::TensorId id, const std::vector<ModelAxis>& axes,
                              int32_t first_model, uint64_t seed, const at::Device& device) {
  const ir::Tensor& t = graph.tensor(id);
  const ModelAxis axis = axes.at(static_cast<size_t>(id));
  const int32_t width = axis == ModelAxis::single ? 1 : t.width;
  const std::vector<int64_t> shape = per_model_shape(t.shape, axis, width);
  const uint64_t name_seed = fnv1a(base_name(t.name));
  std::vector<at::Tensor> models;
  models.reserve(static_cast<size_t>(width));
  for (int32_t m = 0; m < width; ++m) {
    at::Generator gen = seeded_generator(
        device,
        mix_seed(mix_seed(seed, static_cast<uint64_t>(first_model + m)), mix_seed(name_seed, 0x1eafull)));
    models.push_back(one_model_value(graph, t, shape, gen, device));
  }
  return join_models(models, axis);
}

}  // namespace mutwo::exec
