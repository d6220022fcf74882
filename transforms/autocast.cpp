#include "transforms/autocast.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/graph_builder.hpp"
#include "ir/kind_rules.hpp"
#include "support/error.hpp"

namespace mutwo::transforms {
namespace {

// Autocast's cast policy for the ATen op behind each kind (autocast.hpp lists the sources).
enum class CastPolicy : uint8_t { lower_precision, fp32, promote_by_cast, none };

CastPolicy policy_of(ir::OpKind kind) {
  switch (kind) {
    case ir::OpKind::linear:
    case ir::OpKind::conv2d:
    case ir::OpKind::attn_scores:
    case ir::OpKind::attn_context:
    case ir::OpKind::attn_dropout_context:
    case ir::OpKind::dot_interaction:
      return CastPolicy::lower_precision;
    case ir::OpKind::layernorm:
    case ir::OpKind::layernorm_lean:
    case ir::OpKind::softmax:
    case ir::OpKind::cross_entropy:
    case ir::OpKind::bce_with_logits:
      return CastPolicy::fp32;
    case ir::OpKind::concat:
    case ir::OpKind::concat_channels:
    case ir::OpKind::class_token_concat:
      return CastPolicy::promote_by_cast;
    default:
      return CastPolicy::none;
  }
}

ir::DType widest_floating(const std::vector<const ir::Tensor*>& inputs) {
  ir::DType widest = ir::DType::boolean;
  for (const ir::Tensor* t : inputs) {
    if (!ir::is_floating(t->dtype)) continue;
    if (widest == ir::DType::boolean || t->dtype == widest) {
      widest = t->dtype;
    } else {
      widest = (widest == ir::DType::f64 || t->dtype == ir::DType::f64) ? ir::DType::f64 : ir::DType::f32;
    }
  }
  return widest;
}

void check_rewritable(const ir::Graph& g, ir::Precision precision) {
  if (g.precision != ir::Precision::fp32) {
    throw GraphError(fmt::format("precision {}: graph '{}' already has field 'precision' = {}",
                                 ir::precision_name(precision), g.name, ir::precision_name(g.precision)));
  }
  for (const ir::Tensor& t : g.tensors) {
    if (t.role == ir::TensorRole::weight && t.dtype != ir::DType::f32) {
      throw GraphError(fmt::format(
          "precision {}: weight {} '{}' of graph '{}' has dtype {}; the precision modes start from an fp32 "
          "model (build it with dtype fp32)",
          ir::precision_name(precision), t.id, t.name, g.name, ir::dtype_name(t.dtype)));
    }
  }
  for (const ir::Op& op : g.ops) {
    if (op.phase != ir::Phase::forward) {
      throw GraphError(fmt::format(
          "precision {}: op {} '{}' of graph '{}' has field 'phase' = {}; rewrite the forward graph, then "
          "build its training step",
          ir::precision_name(precision), op.id, op.name, g.name, ir::phase_name(op.phase)));
    }
    if (ir::kind_rules(op.kind) == nullptr) {
      throw GraphError(fmt::format(
          "precision {}: op {} '{}' of graph '{}' has field 'kind' = '{}', whose semantics are unknown; "
          "imported traces keep the precision they were recorded in",
          ir::precision_name(precision), op.id, op.name, g.name, ir::kind_name(op.kind)));
    }
  }
}

class Rewriter {
 public:
  Rewriter(const ir::Graph& g, ir::Precision precision)
      : g_(g),
        precision_(precision),
        half_(ir::autocast_dtype(precision)),
        b_(g.name, ir::DType::f32, g.width, g.batch_size),
        mapped_(g.tensors.size(), ir::kNoId) {}

  ir::Graph run() {
    size_t next = 0;  // leaves are declared in the original's tensor order relative to the ops
    auto leaves_before = [&](size_t end) {
      for (; next < end && next < g_.tensors.size(); ++next) {
        if (g_.tensors[next].producer == ir::kNoId && mapped_[next] == ir::kNoId) add_leaf(g_.tensors[next]);
      }
    };
    for (const ir::Op& op : g_.ops) {
      if (!op.outputs.empty())
        leaves_before(static_cast<size_t>(*std::min_element(op.outputs.begin(), op.outputs.end())));
      std::vector<ir::TensorId> inputs;
      for (ir::TensorId id : op.inputs) {
        if (mapped_[static_cast<size_t>(id)] == ir::kNoId) add_leaf(g_.tensor(id));
        inputs.push_back(mapped_[static_cast<size_t>(id)]);
      }
      ir::Attributes attrs = op.attrs;
      if (ir::is_autocast(precision_)) insert_casts(op, inputs, attrs);
      const std::vector<ir::TensorId> outputs = b_.add_op(op.kind, op.name, inputs, attrs);
      for (size_t i = 0; i < outputs.size() && i < op.outputs.size(); ++i) {
        mapped_[static_cast<size_t>(op.outputs[i])] = outputs[i];
      }
    }
    leaves_before(g_.tensors.size());
    ir::Graph out = std::move(b_).finish();
    for (const ir::Tensor& t : g_.tensors)
      out.tensors[static_cast<size_t>(mapped_[static_cast<size_t>(t.id)])].name = t.name;
    out.precision = precision_;
    return out;
  }

 private:
  void add_leaf(const ir::Tensor& t) {
    const ir::DType dtype =
        precision_ == ir::Precision::bf16 && t.dtype == ir::DType::f32 ? ir::DType::bf16 : t.dtype;
    mapped_[static_cast<size_t>(t.id)] = b_.add_laid_out_input(t.name, t.shape, t.role, dtype);
  }

  // The dtype input `i` of `op` must have under autocast; its own dtype when it needs no cast.
  ir::DType target_dtype(const ir::Op& op, const std::vector<const ir::Tensor*>& inputs, size_t i) const {
    const ir::Tensor& x = *inputs[i];
    if (!ir::is_floating(x.dtype)) return x.dtype;
    switch (policy_of(op.kind)) {
      case CastPolicy::lower_precision:
        return x.dtype == ir::DType::f32 ? half_ : x.dtype;  // autocast casts f32 only (is_eligible)
      case CastPolicy::fp32:
        return ir::DType::f32;
      case CastPolicy::promote_by_cast:
        return widest_floating(inputs);
      case CastPolicy::none:
        return x.dtype;
    }
    return x.dtype;
  }

  void insert_casts(const ir::Op& op, std::vector<ir::TensorId>& inputs, ir::Attributes& op_attrs) {
    std::vector<const ir::Tensor*> in;
    for (ir::TensorId id : inputs) in.push_back(&b_.tensor(id));
    std::vector<ir::DType> targets;
    for (size_t i = 0; i < inputs.size(); ++i) targets.push_back(target_dtype(op, in, i));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ir::Tensor& x = b_.tensor(inputs[i]);
      if (targets[i] == x.dtype) continue;
      // softmax(half x, dtype=float) on CUDA converts inside its kernel (ir/kinds/elementwise.cpp):
      // no copy. ATen's fused path takes f16 only; a bf16 input is copied up first.
      // So does log_softmax inside cross_entropy_loss, which autocast's CUDA lists leave to decompose.
      const bool fused_upcast =
          op.kind == ir::OpKind::softmax || (op.kind == ir::OpKind::cross_entropy && i == 0);
      if (fused_upcast && x.dtype == ir::DType::f16 && targets[i] == ir::DType::f32) {
        op_attrs.insert_or_assign("dtype", std::string(ir::dtype_name(ir::DType::f32)));
        continue;
      }
      const ir::Attributes attrs{{"dtype", std::string(ir::dtype_name(targets[i]))}};
      // cached_cast: one half copy per f32 weight per forward, made at its first use.
      if (x.role == ir::TensorRole::weight && targets[i] == half_) {
        auto [it, fresh] = weight_casts_.try_emplace(inputs[i], ir::kNoId);
        if (fresh)
          it->second = b_.op(ir::OpKind::cast, fmt::format("{}.to_{}", x.name, ir::dtype_name(half_)),
                             {inputs[i]}, attrs);
        inputs[i] = it->second;
        continue;
      }
      inputs[i] = b_.op(ir::OpKind::cast, fmt::format("{}.cast{}_{}", op.name, i, ir::dtype_name(targets[i])),
                        {inputs[i]}, attrs);
    }
  }

  const ir::Graph& g_;
  ir::Precision precision_;
  ir::DType half_;
  ir::GraphBuilder b_;
  std::vector<ir::TensorId> mapped_;                   // original tensor -> rewritten tensor
  std::map<ir::TensorId, ir::TensorId> weight_casts_;  // rewritten weight -> its cached half copy
};

}  // namespace

ir::Graph apply_precision(const ir::Graph& forward, ir::Precision precision) {
  ir::validate(forward);
  if (precision == ir::Precision::fp32 && forward.precision == ir::Precision::fp32) return forward;
  check_rewritable(forward, precision);
  if (precision == ir::Precision::tf32) {
    ir::Graph g = forward;
    g.precision = precision;
    return g;
  }
  return Rewriter(forward, precision).run();
}

int64_t cast_op_count(const ir::Graph& graph) {
  int64_t n = 0;
  for (const ir::Op& op : graph.ops) n += op.kind == ir::OpKind::cast ? 1 : 0;
  return n;
}

}  // namespace mutwo::transforms
