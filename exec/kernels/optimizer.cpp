// Optimizer kernels: in-place SGD (momentum, L2), Adam (L2) and AdamW (decoupled decay) steps,
// following torch.optim's single-tensor implementations; fused Adam / AdamW through ATen's
// `_fused_adam_` on CUDA. Hyper-parameters are per model (HFTA):
// when a fused op's models share a value it is a scalar, as in torch.optim; otherwise a tensor
// laid along the weight's model axis, so one set of kernels updates every model. The weight-sized
// temporaries these expressions hold at once are the op's workspace in the memory rule
// (ir/optimizer_kernels.hpp, optimizer_temporaries): change one, change the other.
#include <cmath>

#include <ATen/ATen.h>

#include "exec/kernel.hpp"
#include "ir/attributes.hpp"
#include "ir/optimizer_kernels.hpp"

namespace mutwo::exec {
namespace {

// A hyper-parameter: a scalar when every model shares it, else a broadcastable per-model tensor.
struct Hyper {
  double scalar = 0.0;
  at::Tensor per_model;  // undefined when uniform

  bool uniform() const { return !per_model.defined(); }
  bool any_nonzero() const { return uniform() ? scalar != 0.0 : true; }
};

// Values of attribute `key` as a tensor shaped to broadcast over the weight along its model axis:
// [k,1,...] stacked, [k*C,1,...] for dim-0 chunks.
at::Tensor along_models(const KernelContext& c, at::Tensor t) {
  const at::Tensor& w = c.inputs[0];
  std::vector<int64_t> shape(static_cast<size_t>(w.dim()), 1);
  if (c.axis(c.op.inputs[0]) == ModelAxis::dim0) t = t.repeat_interleave(w.size(0) / t.size(0));
  shape[0] = t.size(0);
  return t.reshape(shape);
}

at::Tensor per_model_tensor(const KernelContext& c, const std::vector<double>& values) {
  return along_models(c,
                      at::tensor(values, at::TensorOptions().dtype(at::kDouble)).to(c.inputs[0].options()));
}

// torch's clip_grad_norm_ over one parameter, as pytorch-pretrained-bert's BertAdam calls it: each
// model's gradient scaled in place by max_norm / (its L2 norm + 1e-6) when that is below 1 (a
// product by min(., 1), so no host read). A weight's models lie along dim 0 (stacked or chunked).
void clip_each_gradient(const KernelContext& c, at::Tensor& grad) {
  const double max_norm = ir::attr_double_or(c.op.attrs, "max_grad_norm", 1.0, c.op.name);
  const bool single = c.axis(c.op.inputs[0]) == ModelAxis::single;
  const at::Tensor norms = grad.reshape({single ? 1 : static_cast<int64_t>(c.op.width), -1}).norm(2, 1);
  const at::Tensor coef = (max_norm / (norms + 1e-6)).clamp_max(1.0);
  grad.mul_(single ? coef.reshape({}) : along_models(c, coef));
}

// Cached per op (runtime.cache), in the order the kernel asks for them.
Hyper hyper(const KernelContext& c, std::string_view key, size_t slot) {
  const auto& values = ir::attr_doubles(c.op.attrs, key, c.op.name);
  if (ir::uniform_hyper(c.op, key)) return {values[0], {}};
  std::vector<at::Tensor>& cache = *c.runtime.cache;
  if (cache.size() <= slot) cache.resize(slot + 1);
  if (!cache[slot].defined()) cache[slot] = per_model_tensor(c, values);
  return {0.0, cache[slot]};
}

// A hyper-parameter as a tensor on `like`'s device: a 0-d tensor when uniform, else its per-model one.
at::Tensor as_tensor(const at::Tensor& like, const Hyper& h) {
  return h.uniform() ? at::full({}, h.scalar, like.options()) : h.per_model;
}

// a * x for a hyper-parameter a.
at::Tensor scaled(const Hyper& a, const at::Tensor& x) {
  return a.uniform() ? x * a.scalar : x * a.per_model;
}

// inputs param, grad, momentum_buffer. torch.optim.SGD (dampening 0, no Nesterov): the first
// step's buffer is a copy of the direction, later ones buf = momentum * buf + d.
std::vector<at::Tensor> sgd_step(const KernelContext& c) {
  at::Tensor p = c.inputs[0];
  const at::Tensor& grad = c.inputs[1];
  at::Tensor buf = c.inputs[2];
  const Hyper lr = hyper(c, "lr", 0), momentum = hyper(c, "momentum", 1), decay = hyper(c, "weight_decay", 2);
  at::Tensor d = grad;
  if (decay.any_nonzero()) d = decay.uniform() ? grad.add(p, decay.scalar) : grad + decay.per_model * p;
  if (momentum.any_nonzero()) {
    if (c.runtime.optimizer_step == 1) {
      buf.copy_(d);
    } else if (momentum.uniform()) {
      buf.mul_(momentum.scalar).add_(d);
    } else {
      buf.mul_(momentum.per_model).add_(d);
    }
    d = buf;
  }
  if (lr.uniform()) {
    p.add_(d, -lr.scalar);
  } else {
    p.sub_(d * lr.per_model);
  }
  return {};
}

// NVIDIA's BertAdam (DeepLearningExamples BERT optimization.py), statement by statement as its loop
// runs them (ir/optimizer_kernels.hpp): no bias correction, decay added to the update. The global
// gradient norm it computes first clips nothing (it rebinds a local name), so it is not computed.
// pytorch-pretrained-bert's (bert_adam = 2) first clips each gradient in place by its own norm.
std::vector<at::Tensor> bert_adam_step(const KernelContext& c, const Hyper& lr, const Hyper& beta1,
                                       const Hyper& beta2, const Hyper& eps, const Hyper& decay,
                                       bool uniform) {
  at::Tensor p = c.inputs[0];
  at::Tensor grad = c.inputs[1];
  at::Tensor m = c.inputs[2];
  at::Tensor v = c.inputs[3];
  if (ir::bert_adam_form(c.op) == 2) clip_each_gradient(c, grad);
  if (uniform) {
    m.mul_(beta1.scalar).add_(grad, 1.0 - beta1.scalar);
    v.mul_(beta2.scalar).addcmul_(grad, grad, 1.0 - beta2.scalar);
    at::Tensor update = m / (v.sqrt() + eps.scalar);
    if (decay.scalar != 0.0) update += decay.scalar * p;
    const at::Tensor update_with_lr = lr.scalar * update;
    p.add_(-update_with_lr);
    return {};
  }
  const at::Tensor b1 = as_tensor(p, beta1), b2 = as_tensor(p, beta2);
  m.mul_(b1).add_(grad * (1.0 - b1));
  v.mul_(b2).add_(grad * grad * (1.0 - b2));
  at::Tensor update = m / (v.sqrt() + as_tensor(p, eps));
  if (decay.any_nonzero()) update = update + as_tensor(p, decay) * p;
  p.sub_(as_tensor(p, lr) * update);
  return {};
}

// inputs param, grad, exp_avg, exp_avg_sq. torch.optim.Adam / AdamW (not amsgrad).
std::vector<at::Tensor> adam_like_step(const KernelContext& c, bool decoupled) {
  at::Tensor p = c.inputs[0];
  at::Tensor grad = c.inputs[1];
  at::Tensor m = c.inputs[2];
  at::Tensor v = c.inputs[3];
  const Hyper lr = hyper(c, "lr", 0), beta1 = hyper(c, "beta1", 1), beta2 = hyper(c, "beta2", 2);
  const Hyper eps = hyper(c, "eps", 3), decay = hyper(c, "weight_decay", 4);
  const auto step = static_cast<double>(c.runtime.optimizer_step);
  const bool uniform = lr.uniform() && beta1.uniform() && beta2.uniform() && eps.uniform() && decay.uniform();
  if (ir::is_bert_adam(c.op)) return bert_adam_step(c, lr, beta1, beta2, eps, decay, uniform);
  if (uniform && ir::is_fused_update(c.op) && p.is_cuda()) {
    // torch.optim's fused=True: ATen's multi-tensor kernel (CUDA only), L2 decay inside it; AdamW's
    // decoupled decay first, as an in-place scale. Its step count is a device tensor.
    if (decoupled && decay.scalar != 0.0) p.mul_(1.0 - lr.scalar * decay.scalar);
    const at::Tensor steps = at::full({}, step, p.options().dtype(at::kFloat));
    at::_fused_adam_({p}, {grad}, {m}, {v}, {}, {steps}, lr.scalar, beta1.scalar, beta2.scalar,
                     decoupled ? 0.0 : decay.scalar, eps.scalar, /*amsgrad=*/false, /*maximize=*/false);
    return {};
  }
  // Elsewhere (the CPU, per-model hyper-parameters) a fused step runs the single-tensor form: the
  // same update up to rounding.
  if (uniform) {
    if (decay.scalar != 0.0) {
      if (decoupled) {
        p.mul_(1.0 - lr.scalar * decay.scalar);
      } else {
        grad = grad.add(p, decay.scalar);
      }
    }
    m.lerp_(grad, 1.0 - beta1.scalar);
    v.mul_(beta2.scalar).addcmul_(grad, grad, 1.0 - beta2.scalar);
    const double bias_correction1 = 1.0 - std::pow(beta1.scalar, step);
    const double bias_correction2 = 1.0 - std::pow(beta2.scalar, step);
    const double step_size = lr.scalar / bias_correction1;
    const at::Tensor denom = (v.sqrt() / std::sqrt(bias_correction2)).add_(eps.scalar);
    p.addcdiv_(m, denom, -step_size);
    return {};
  }
  // Per-model hyper-parameters: the same update with broadcast tensors.
  const at::Tensor lr_t = as_tensor(p, lr), b1 = as_tensor(p, beta1), b2 = as_tensor(p, beta2),
                   eps_t = as_tensor(p, eps);
  if (decay.any_nonzero()) {
    const at::Tensor wd = as_tensor(p, decay);
    if (decoupled) {
      p.mul_(1.0 - lr_t * wd);
    } else {
      grad = grad + wd * p;
    }
  }
  m.lerp_(grad, 1.0 - b1);
  v.mul_(b2).add_(grad * grad * (1.0 - b2));
  const at::Tensor bias_correction1 = 1.0 - b1.pow(step);
  const at::Tensor bias_correction2 = 1.0 - b2.pow(step);
  const at::Tensor denom = (v.sqrt() / bias_correction2.sqrt()).add_(eps_t);
  p.sub_(scaled({0.0, lr_t / bias_correction1}, m) / denom);
  return {};
}

std::vector<at::Tensor> adam_step(const KernelContext& c) {
  return adam_like_step(c, false);
}
std::vector<at::Tensor> adamw_step(const KernelContext& c) {
  return adam_like_step(c, true);
}

}  // namespace

void register_optimizer_kernels(KernelTable& table) {
  using ir::OpKind;
  table[static_cast<size_t>(OpKind::sgd_step)] = sgd_step;
  table[static_cast<size_t>(OpKind::adam_step)] = adam_step;
  table[static_cast<size_t>(OpKind::adamw_step)] = adamw_step;
}

}  // namespace mutwo::exec
