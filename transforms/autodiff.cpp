// Autodiff: appends to a forward Graph the backward ops (reverse program order, PyTorch's saved-tensor
// rules from kind_rules.hpp) and one optimizer step per weight.
//
// Three linear passes over the forward ops:
//   1. forward: which tensors need a gradient (floating, and a weight or produced by a differentiable
//      op reading one);
//   2. reverse, counting only: which ops run a backward and how many gradient contributions each
//      tensor will receive (so tensors are named and given roles once, when created);
//   3. reverse, emitting: backward ops, sum_to_shape for broadcast operands, accumulate_grad as each
//      extra contribution to a tensor read by several ops arrives (as PyTorch's autograd engine does).
// Then one optimizer op per weight with a gradient, link() and validate().
#include "transforms/autodiff.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/kind_rules.hpp"
#include "ir/memory_rule.hpp"
#include "ir/optimizer_kernels.hpp"
#include "support/error.hpp"

namespace mutwo::transforms {
namespace {

// FLOPs per parameter element of one optimizer step, counting a fused multiply-add as 2 (as the
// linear and conv FLOPs do), following torch.optim's single-tensor loops:
//   SGD: p -= lr * buf (2); momentum buf = mu * buf + g (2); L2 weight decay g += wd * p (2).
//   Adam: exp_avg.lerp_(g, 1 - b1) (3), exp_avg_sq = b2 * v + (1 - b2) g^2 (4),
//         denom = sqrt(v) / bc2 + eps (3), p.addcdiv_(m, denom, -step) (2) = 12;
//         Adam's L2 weight decay g += wd * p (2); AdamW's decoupled p *= 1 - lr * wd (1).
constexpr int64_t kSgdUpdateFlops = 2;
constexpr int64_t kSgdMomentumFlops = 2;
constexpr int64_t kSgdWeightDecayFlops = 2;
constexpr int64_t kAdamFlops = 12;
constexpr int64_t kAdamWeightDecayFlops = 2;
constexpr int64_t kAdamWDecoupledDecayFlops = 1;

bool any_nonzero(const std::vector<double>& values) {
  for (double v : values) {
    if (v != 0.0) return true;
  }
  return false;
}

// One hyper-parameter list laid out for the graph's width (size 1 broadcast).
std::vector<double> per_model(const std::vector<double>& values, std::string_view field, int32_t width) {
  if (values.size() == 1) return std::vector<double>(static_cast<size_t>(width), values[0]);
  if (values.size() != static_cast<size_t>(width)) {
    throw Error(fmt::format("optimizer field '{}' has {} values; expected 1 or the graph's width {}", field,
                            values.size(), width));
  }
  return values;
}

// Every value finite, >= 0 and (when `below` > 0) < below.
void expect_range(const std::vector<double>& values, std::string_view field, double below = 0.0) {
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!std::isfinite(v) || v < 0.0 || (below > 0.0 && v >= below)) {
      throw Error(
          fmt::format("optimizer field '{}' has value {} for model {}; expected a finite value >= 0{}", field,
                      v, i, below > 0.0 ? fmt::format(" and < {}", below) : std::string()));
    }
  }
}

// Per-tensor gradient bookkeeping of pass 2 and 3.
struct GradState {
  int32_t expected = 0;  // contributions this tensor receives (0: no gradient)
  int32_t created = 0;   // contribution tensors created for it so far
  int32_t received = 0;  // contributions delivered so far
  ir::TensorId current = ir::kNoId;
  bool owned = false;  // `current` was created for this tensor (not shared with another's gradient)
};

class TrainingStepBuilder {
 public:
  TrainingStepBuilder(const ir::Graph& forward, const OptimizerConfig& optimizer)
      : fwd_(forward), config_(optimizer), grads_(forward.tensors.size()) {}

  ir::Graph build() {
    check_forward();
    const Hyper hyper = resolve_hyper();  // config errors before any work
    g_ = fwd_;
    size_t weights = 0;
    for (const ir::Tensor& t : fwd_.tensors) weights += t.role == ir::TensorRole::weight ? 1 : 0;
    g_.tensors.reserve(fwd_.tensors.size() * 3 + weights * 4);
    g_.ops.reserve(fwd_.ops.size() * 3 + weights);
    mark_needs_grad();
    count_contributions();
    emit_backward();
    emit_grad_unscale();
    emit_optimizer(hyper);
    ir::link(g_);
    ir::validate(g_);
    return std::move(g_);
  }

 private:
  struct Hyper {
    std::vector<double> lr, momentum, beta1, beta2, eps, weight_decay;
  };

  const ir::Tensor& ftensor(ir::TensorId id) const { return fwd_.tensors[static_cast<size_t>(id)]; }

  // Ids index their vectors (every later pass relies on it); backward starts at loss ops: every
  // role-loss tensor must be output 0 of a loss kind.
  void check_forward() const {
    for (size_t i = 0; i < fwd_.tensors.size(); ++i) {
      if (fwd_.tensors[i].id != static_cast<ir::TensorId>(i)) {
        throw GraphError(fmt::format("graph '{}': tensor at position {} has field 'id' = {}", fwd_.name, i,
                                     fwd_.tensors[i].id));
      }
    }
    size_t losses = 0;
    for (size_t k = 0; k < fwd_.ops.size(); ++k) {
      const ir::Op& op = fwd_.ops[k];
      if (op.id != static_cast<ir::OpId>(k)) {
        throw GraphError(
            fmt::format("graph '{}': op at position {} has field 'id' = {}", fwd_.name, k, op.id));
      }
      if (op.phase != ir::Phase::forward) {
        throw GraphError(
            fmt::format("graph '{}': op {} '{}' has phase {}; autodiff takes a forward-only graph", fwd_.name,
                        op.id, op.name, ir::phase_name(op.phase)));
      }
      for (const auto* ids : {&op.inputs, &op.outputs}) {
        for (ir::TensorId id : *ids) {
          if (id < 0 || static_cast<size_t>(id) >= fwd_.tensors.size()) {
            throw GraphError(
                fmt::format("graph '{}': op {} '{}' refers to tensor {} which does not exist ({} "
                            "tensors)",
                            fwd_.name, op.id, op.name, id, fwd_.tensors.size()));
          }
        }
      }
      const ir::KindRules* rules = ir::kind_rules(op.kind);
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        const ir::TensorId id = op.outputs[i];
        if (ftensor(id).role != ir::TensorRole::loss) continue;
        if (!rules || !rules->is_loss || i != 0) {
          throw GraphError(
              fmt::format("graph '{}': tensor {} '{}' has role loss but is not output 0 of a loss op "
                          "(op {} '{}' is kind '{}'); autodiff cannot start its backward there",
                          fwd_.name, id, ftensor(id).name, op.id, op.name, ir::kind_name(op.kind)));
        }
        ++losses;
      }
    }
    if (losses == 0) {
      throw GraphError(fmt::format(
          "graph '{}' has no loss tensor (role loss); autodiff needs one to differentiate", fwd_.name));
    }
  }

  Hyper resolve_hyper() const {
    const int32_t w = fwd_.width;
    Hyper h;
    h.lr = per_model(config_.lr, "lr", w);
    h.momentum = per_model(config_.momentum, "momentum", w);
    h.beta1 = per_model(config_.beta1, "beta1", w);
    h.beta2 = per_model(config_.beta2, "beta2", w);
    h.eps = per_model(config_.eps, "eps", w);
    h.weight_decay = per_model(config_.weight_decay, "weight_decay", w);
    expect_range(h.lr, "lr");
    expect_range(h.momentum, "momentum");
    expect_range(h.beta1, "beta1", 1.0);
    expect_range(h.beta2, "beta2", 1.0);
    expect_range(h.eps, "eps");
    expect_range(h.weight_decay, "weight_decay");
    return h;
  }

  // Pass 1. Ops without rules (opaque) and non-differentiable kinds pass no gradient, so their outputs
  // need none; only output 0 of an op is differentiable.
  void mark_needs_grad() {
    needs_grad_.assign(fwd_.tensors.size(), 0);
    for (size_t i = 0; i < fwd_.tensors.size(); ++i) {
      const ir::Tensor& t = fwd_.tensors[i];
      if (t.role == ir::TensorRole::weight && ir::is_floating(t.dtype)) needs_grad_[i] = 1;
    }
    for (const ir::Op& op : fwd_.ops) {
      const ir::KindRules* rules = ir::kind_rules(op.kind);
      if (!rules || !rules->differentiable || op.outputs.empty()) continue;
      bool any = false;
      for (ir::TensorId id : op.inputs) any = any || needs_grad_[static_cast<size_t>(id)];
      const ir::Tensor& out = ftensor(op.outputs[0]);
      if (any && ir::is_floating(out.dtype)) needs_grad_[static_cast<size_t>(op.outputs[0])] = 1;
    }
  }

  // Whether forward op `op` runs a backward (or, for passthrough kinds, forwards its gradient).
  bool runs_backward(const ir::Op& op) const {
    const ir::KindRules* rules = ir::kind_rules(op.kind);
    if (!rules || !rules->differentiable || op.outputs.empty()) return false;
    if (!rules->is_loss && grads_[static_cast<size_t>(op.outputs[0])].expected == 0) return false;
    for (ir::TensorId id : op.inputs) {
      if (needs_grad_[static_cast<size_t>(id)]) return true;
    }
    return false;
  }

  // Pass 2: every consumer op that runs a backward contributes one gradient per input position.
  void count_contributions() {
    active_.assign(fwd_.ops.size(), 0);
    for (auto it = fwd_.ops.rbegin(); it != fwd_.ops.rend(); ++it) {
      if (!runs_backward(*it)) continue;
      active_[static_cast<size_t>(it->id)] = 1;
      for (ir::TensorId id : it->inputs) {
        if (needs_grad_[static_cast<size_t>(id)]) ++grads_[static_cast<size_t>(id)].expected;
      }
    }
  }

  bool is_weight(ir::TensorId id) const { return ftensor(id).role == ir::TensorRole::weight; }

  ir::TensorId new_tensor(std::string name, const ir::Tensor& like, ir::TensorRole role) {
    ir::Tensor t;
    t.id = static_cast<ir::TensorId>(g_.tensors.size());
    t.name = std::move(name);
    t.shape = like.shape;
    t.dtype = like.dtype;
    t.bytes = like.bytes;
    t.role = role;
    t.width = like.width;
    g_.tensors.push_back(std::move(t));
    return g_.tensors.back().id;
  }

  // A fresh tensor holding one contribution to the gradient of forward tensor `of`. With a single
  // contribution it is the final gradient ("<name>.grad"; role gradient for a weight).
  ir::TensorId new_contribution(ir::TensorId of) {
    GradState& s = grads_[static_cast<size_t>(of)];
    const ir::Tensor& t = ftensor(of);
    ++s.created;
    if (s.expected == 1) {
      return new_tensor(t.name + ".grad", t,
                        is_weight(of) ? ir::TensorRole::gradient : ir::TensorRole::temporary);
    }
    return new_tensor(fmt::format("{}.grad.part{}", t.name, s.created), t, ir::TensorRole::temporary);
  }

  ir::Op& new_backward_op(std::string name, ir::OpKind kind, ir::OpId forward_of) {
    ir::Op op;
    op.id = static_cast<ir::OpId>(g_.ops.size());
    op.name = std::move(name);
    op.kind = kind;
    op.phase = ir::Phase::backward;
    op.forward_of = forward_of;
    op.width = fwd_.ops[static_cast<size_t>(forward_of)].width;
    op.recomputable = false;
    g_.ops.push_back(std::move(op));
    return g_.ops.back();
  }

  void set_bytes(ir::Op& op) const {
    op.bytes_read = 0;
    op.bytes_written = 0;
    for (ir::TensorId id : op.inputs) op.bytes_read += g_.tensors[static_cast<size_t>(id)].bytes;
    for (ir::TensorId id : op.outputs) op.bytes_written += g_.tensors[static_cast<size_t>(id)].bytes;
  }

  // Records gradient `grad` of forward tensor `of`, produced by the backward of forward op `from`.
  // `owned`: `grad` was created for `of` alone (false when it aliases another tensor's gradient).
  void deliver(ir::TensorId of, ir::TensorId grad, bool owned, ir::OpId from) {
    GradState& s = grads_[static_cast<size_t>(of)];
    ++s.received;
    const bool final = s.received == s.expected;
    const ir::Tensor& t = ftensor(of);
    if (s.current == ir::kNoId) {
      s.current = grad;
      s.owned = owned;
    } else {
      const ir::TensorRole role =
          final && is_weight(of) ? ir::TensorRole::gradient : ir::TensorRole::temporary;
      const ir::TensorId sum =
          new_tensor(final ? t.name + ".grad" : fmt::format("{}.grad.sum{}", t.name, s.received), t, role);
      ir::Op& op = new_backward_op(fmt::format("{}.grad.accumulate{}", t.name, s.received),
                                   ir::OpKind::accumulate_grad, from);
      op.inputs = {s.current, grad};
      op.outputs = {sum};
      op.flops = t.bytes / ir::dtype_size_bytes(t.dtype);
      set_bytes(op);
      s.current = sum;
      s.owned = true;
    }
    // A weight's gradient is persistent and updated by its own optimizer op: it may not share a tensor
    // with an activation's gradient (an add whose operand is a weight of the output's shape). Copy it.
    if (final && is_weight(of) && !s.owned) {
      const ir::TensorId copy = new_tensor(t.name + ".grad", t, ir::TensorRole::gradient);
      ir::Op& op = new_backward_op(t.name + ".grad.copy", ir::OpKind::sum_to_shape, from);
      op.inputs = {s.current};
      op.outputs = {copy};
      op.flops = 0;
      set_bytes(op);
      s.current = copy;
      s.owned = true;
    }
  }

  // add: each operand needing a gradient receives the output gradient itself, or its sum down to the
  // operand's shape when the operand was broadcast.
  void emit_passthrough(const ir::Op& fwd, ir::TensorId out_grad) {
    const ir::Tensor& out = ftensor(fwd.outputs[0]);
    for (size_t i = 0; i < fwd.inputs.size(); ++i) {
      const ir::TensorId in = fwd.inputs[i];
      if (!needs_grad_[static_cast<size_t>(in)]) continue;
      const ir::Tensor& x = ftensor(in);
      // An operand of another dtype (autocast's mixed add) gets the gradient cast to its own dtype,
      // as the autograd engine's validate_outputs does; sum_to_shape sums and casts.
      if (x.shape == out.shape && x.dtype == out.dtype) {
        deliver(in, out_grad, false, fwd.id);
        continue;
      }
      const ir::TensorId grad = new_contribution(in);
      ir::Op& op =
          new_backward_op(fmt::format("{}.sum_to_shape{}", fwd.name, i), ir::OpKind::sum_to_shape, fwd.id);
      op.inputs = {out_grad};
      op.outputs = {grad};
      op.flops = out.bytes / ir::dtype_size_bytes(out.dtype);  // one add per output-gradient element
      set_bytes(op);
      deliver(in, grad, true, fwd.id);
    }
  }

  void emit_backward_op(const ir::Op& fwd, const ir::KindRules& rules, ir::TensorId out_grad) {
    in_ptrs_.clear();
    out_ptrs_.clear();
    flags_.clear();
    std::vector<int64_t> flags_attr;
    flags_attr.reserve(fwd.inputs.size());
    for (ir::TensorId id : fwd.inputs) {
      in_ptrs_.push_back(&ftensor(id));
      flags_.push_back(needs_grad_[static_cast<size_t>(id)] != 0);
      flags_attr.push_back(needs_grad_[static_cast<size_t>(id)]);
    }
    for (ir::TensorId id : fwd.outputs) out_ptrs_.push_back(&ftensor(id));

    std::vector<ir::TensorId> inputs;
    inputs.reserve(1 + rules.saved.size());
    if (!rules.is_loss) inputs.push_back(out_grad);
    for (const ir::SavedRef& ref : rules.saved) {
      // Variadic kinds (dot_interaction) list more positions than an op may have: keep those that exist.
      const auto& from = ref.from == ir::SavedRef::From::input ? fwd.inputs : fwd.outputs;
      if (ref.index >= 0 && static_cast<size_t>(ref.index) < from.size()) {
        inputs.push_back(from[static_cast<size_t>(ref.index)]);
      }
    }
    std::vector<ir::TensorId> outputs;
    outputs.reserve(fwd.inputs.size());
    for (ir::TensorId id : fwd.inputs) {
      if (needs_grad_[static_cast<size_t>(id)]) outputs.push_back(new_contribution(id));
    }

    const ir::BackwardContext ctx{fwd, in_ptrs_, out_ptrs_, flags_};
    ir::Op& op = new_backward_op(fwd.name + ".backward", rules.backward_kind, fwd.id);
    op.inputs = std::move(inputs);
    op.outputs = outputs;
    op.attrs = fwd.attrs;
    op.attrs.insert_or_assign("needs_grad", std::move(flags_attr));
    op.flops = rules.backward_flops ? rules.backward_flops(ctx) : 0;
    op.workspace_bytes = rules.backward_workspace ? rules.backward_workspace(ctx) : 0;
    set_bytes(op);

    size_t next = 0;
    for (ir::TensorId id : fwd.inputs) {
      if (needs_grad_[static_cast<size_t>(id)]) deliver(id, outputs[next++], true, fwd.id);
    }
  }

  // Pass 3.
  void emit_backward() {
    for (auto it = fwd_.ops.rbegin(); it != fwd_.ops.rend(); ++it) {
      const ir::Op& fwd = *it;
      if (!active_[static_cast<size_t>(fwd.id)]) continue;
      const ir::KindRules& rules = *ir::kind_rules(fwd.kind);
      const ir::TensorId out_grad =
          rules.is_loss ? ir::kNoId : grads_[static_cast<size_t>(fwd.outputs[0])].current;
      if (rules.passthrough) {
        emit_passthrough(fwd, out_grad);
      } else {
        emit_backward_op(fwd, rules, out_grad);
      }
    }
  }

  // fp16 autocast trains with torch.cuda.amp.GradScaler: scaler.step() first unscales every gradient
  // in place (unscale_ -> _amp_foreach_non_finite_check_and_unscale_, one pass over each gradient),
  // then steps the optimizer (torch/cuda/amp/grad_scaler.py). The loss is multiplied by the scale
  // S = 2^16 (init_scale) before backward; S and 1/S are powers of two, so the gradients equal
  // unscaled ones, and mutwo seeds backward with 1 and unscales by 1 (attr inv_scale): the same
  // kernels, the same results barring fp16 underflow. The one-element loss multiply is not an op.
  // A fused optimizer unscales inside its kernel (optimizer_kind.hpp): no unscale ops.
  void emit_grad_unscale() {
    if (fwd_.precision != ir::Precision::amp_fp16 || is_fused(config_.kind)) return;
    for (const ir::Tensor& w : fwd_.tensors) {
      if (w.role != ir::TensorRole::weight) continue;
      const GradState& s = grads_[static_cast<size_t>(w.id)];
      if (s.current == ir::kNoId) continue;
      const ir::Tensor& grad = g_.tensors[static_cast<size_t>(s.current)];
      ir::Op op;
      op.id = static_cast<ir::OpId>(g_.ops.size());
      op.name = grad.name + ".unscale";
      op.kind = ir::OpKind::amp_unscale;
      op.phase = ir::Phase::optimizer;
      op.width = w.width;
      op.recomputable = false;
      op.inputs = {s.current};
      op.attrs.emplace("scale", 65536.0);
      op.attrs.emplace("inv_scale", 1.0);
      op.flops = 2 * (grad.bytes / ir::dtype_size_bytes(grad.dtype));  // isfinite check and multiply
      op.bytes_read = grad.bytes;
      op.bytes_written = grad.bytes;
      g_.ops.push_back(std::move(op));
    }
  }

  // One in-place step per weight with a gradient, in weight order. A weight no loss depends on gets
  // no gradient and no step (as PyTorch skips parameters whose .grad is None); the zoo has none.
  void emit_optimizer(const Hyper& h) {
    const OptimizerKind update = unfused(config_.kind);
    const ir::OpKind kind = update == OptimizerKind::sgd    ? ir::OpKind::sgd_step
                            : update == OptimizerKind::adam ? ir::OpKind::adam_step
                                                            : ir::OpKind::adamw_step;
    std::vector<std::string_view> state_suffixes;
    int64_t flops_per_element = 0;
    const bool decay = any_nonzero(h.weight_decay);
    ir::Attributes attrs;
    attrs.emplace("lr", h.lr);
    attrs.emplace("weight_decay", h.weight_decay);
    if (update == OptimizerKind::sgd) {
      state_suffixes = {".momentum_buffer"};
      attrs.emplace("momentum", h.momentum);
      flops_per_element = kSgdUpdateFlops + (any_nonzero(h.momentum) ? kSgdMomentumFlops : 0) +
                          (decay ? kSgdWeightDecayFlops : 0);
    } else {
      state_suffixes = {".exp_avg", ".exp_avg_sq"};
      attrs.emplace("beta1", h.beta1);
      attrs.emplace("beta2", h.beta2);
      attrs.emplace("eps", h.eps);
      const int64_t decay_flops =
          update == OptimizerKind::adam ? kAdamWeightDecayFlops : kAdamWDecoupledDecayFlops;
      flops_per_element = kAdamFlops + (decay ? decay_flops : 0);
    }

    bool first_update = true;
    for (const ir::Tensor& w : fwd_.tensors) {
      if (w.role != ir::TensorRole::weight) continue;
      const GradState& s = grads_[static_cast<size_t>(w.id)];
      if (s.current == ir::kNoId) continue;
      ir::Op op;
      op.id = static_cast<ir::OpId>(g_.ops.size());
      op.name = w.name + "." + std::string(ir::kind_name(kind));
      op.kind = kind;
      op.phase = ir::Phase::optimizer;
      op.width = w.width;
      op.recomputable = false;
      op.inputs = {w.id, s.current};
      for (std::string_view suffix : state_suffixes) {
        op.inputs.push_back(new_tensor(w.name + std::string(suffix), w, ir::TensorRole::optimizer_state));
      }
      op.attrs = attrs;
      add_kind_attributes(config_.kind, first_update, op.attrs);  // fused, BertAdam's and its waits
      first_update = false;
      op.flops = flops_per_element * (w.bytes / ir::dtype_size_bytes(w.dtype));
      set_bytes(op);
      op.bytes_written = op.bytes_read - g_.tensors[static_cast<size_t>(s.current)].bytes;  // param + states
      // The update's weight-sized temporaries, each its own block (ir/optimizer_kernels.hpp).
      op.workspace_bytes = ir::optimizer_temporaries(op) * ir::allocation_bytes(w.bytes);
      g_.ops.push_back(std::move(op));
    }
  }

  const ir::Graph& fwd_;
  const OptimizerConfig& config_;
  ir::Graph g_;
  std::vector<uint8_t> needs_grad_;  // per forward tensor
  std::vector<uint8_t> active_;      // per forward op: runs a backward
  std::vector<GradState> grads_;     // per forward tensor
  // Scratch reused by every backward op.
  std::vector<const ir::Tensor*> in_ptrs_;
  std::vector<const ir::Tensor*> out_ptrs_;
  std::vector<bool> flags_;
};

}  // namespace

ir::Graph build_training_step(const ir::Graph& forward, const OptimizerConfig& optimizer) {
  return TrainingStepBuilder(forward, optimizer).build();
}

}  // namespace mutwo::transforms
