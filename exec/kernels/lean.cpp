// Kernels of Tempo's lean layers (ir/kinds/lean.cpp; Andoorveedu et al., NeurIPS 2022): the
// plain kinds' forward results and gradients, from what the lean kinds keep. The forwards reuse the
// plain kernels (registered before this family); the backwards rebuild what was not kept.
#include <ATen/ATen.h>

#include <cmath>

#include "exec/kernel.hpp"

namespace mutwo::exec {
namespace {

KernelFn g_gelu = nullptr;
KernelFn g_dropout = nullptr;
KernelFn g_dropout_backward = nullptr;
KernelFn g_context = nullptr;
KernelFn g_context_backward = nullptr;
KernelFn g_layernorm_backward = nullptr;

bool gelu_tanh(const KernelContext& c) { return c.attr_int("approximate", 0) != 0; }

// gelu'(x) in double: erf form Phi(x) + x phi(x); tanh form (GPT-2's gelu_new) differentiated.
double gelu_slope(double x, bool tanh_form) {
  if (!tanh_form) return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  const double k = std::sqrt(2.0 / M_PI);
  const double t = std::tanh(k * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
}

// argmin gelu, where gelu' changes sign (-0.7517916 for erf, Tempo's MIN): bisection to the last bit.
double gelu_argmin(bool tanh_form) {
  double lo = -2.0, hi = 0.0;  // gelu' < 0 at -2, > 0 at 0
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid == lo || mid == hi) break;
    (gelu_slope(mid, tanh_form) < 0 ? lo : hi) = mid;
  }
  return hi;
}

double argmin_of(bool tanh_form) {
  static const double erf_min = gelu_argmin(false);
  static const double tanh_min = gelu_argmin(true);
  return tanh_form ? tanh_min : erf_min;
}

// inputs x; outputs y, mask (x >= argmin: the increasing branch).
std::vector<at::Tensor> gelu_lean(const KernelContext& c) {
  std::vector<at::Tensor> out = g_gelu(c);
  out.push_back(c.inputs[0].ge(argmin_of(gelu_tanh(c))));
  return out;
}

// inputs [dY, y, mask]: x = gelu^-1(y) on the mask's branch, then PyTorch's gelu_backward at x.
// Tempo's CUDA kernel fits gelu' as a polynomial of y per branch; mutwo inverts exactly instead, by
// bisection on each element's bracket (64 halvings of at most 40: past the last bit of a double),
// so the gradient is the plain op's up to the conditioning of gelu^-1 next to its minimum.
std::vector<at::Tensor> gelu_lean_backward(const KernelContext& c) {
  const at::Tensor& y = c.inputs[1];
  const at::Tensor& mask = c.inputs[2];
  const bool tanh_form = gelu_tanh(c);
  const c10::string_view approximate = tanh_form ? "tanh" : "none";
  const double x_min = argmin_of(tanh_form);
  // Increasing branch: x in [argmin, max(y, 0) + 1] (gelu(y + 1) >= y); decreasing: x in [-40, argmin]
  // (gelu(-40) is 0 in double: y = 0 there, where gelu' is 0 too).
  at::Tensor lo = at::where(mask, at::full_like(y, x_min), at::full_like(y, -40.0));
  at::Tensor hi = at::where(mask, at::clamp_min(y, 0.0) + 1.0, at::full_like(y, x_min));
  for (int i = 0; i < 64; ++i) {
    const at::Tensor mid = (lo + hi) * 0.5;
    // Below y on the increasing branch, or above y on the decreasing one: x lies above mid.
    const at::Tensor below = at::gelu(mid, approximate).lt(y);
    const at::Tensor up = at::where(mask, below, below.logical_not());
    lo = at::where(up, mid, lo);
    hi = at::where(up, hi, mid);
  }
  const at::Tensor x = (lo + hi) * 0.5;
  return {at::gelu_backward(c.inputs[0], x, approximate)};
}

// inputs [dY, y, gamma, beta, rstd]: xhat = (y - beta) / gamma, then layer norm's own backward on
// xhat with mean 0 and rstd 1, whose input gradient is linear in rstd: times rstd.
std::vector<at::Tensor> layernorm_lean_backward(const KernelContext& c) {
  const at::Tensor& y = c.inputs[1];
  const at::Tensor& gamma = c.inputs[2];
  const at::Tensor& beta = c.inputs[3];
  const at::Tensor& rstd = c.inputs[4];
  const at::Tensor xhat = c.fused() ? (y - per_model_affine(beta, y.dim())) / per_model_affine(gamma, y.dim())
                                    : (y - beta) / gamma;
  const std::array<at::Tensor, 6> inputs{c.inputs[0], xhat, gamma, beta, at::zeros_like(rstd), at::ones_like(rstd)};
  std::vector<at::Tensor> grads = g_layernorm_backward(KernelContext{c.graph, c.op, inputs, c.runtime});
  if (c.needs_grad(0)) grads[0] = grads[0] * rstd;
  return grads;
}

// inputs p (softmax output), v; outputs context, mask: dropout's kernel (the same mask, drawn by the
// op's name, which is the dropout's) then the context product's.
std::vector<at::Tensor> attn_dropout_context(const KernelContext& c) {
  const std::vector<at::Tensor> dropped = g_dropout(c);
  const std::array<at::Tensor, 2> inputs{dropped[0], c.inputs[1]};
  std::vector<at::Tensor> out = g_context(KernelContext{c.graph, c.op, inputs, c.runtime});
  out.push_back(dropped[1]);
  return out;
}

// inputs [dO, p, v, mask]: dropout(p) rebuilt from p and the mask (§3.3), the context product's
// backward on it, and dropout's backward for dp.
std::vector<at::Tensor> attn_dropout_context_backward(const KernelContext& c) {
  const at::Tensor& mask = c.inputs[3];
  const double p = c.attr_double("p", ir::kDefaultDropoutP);
  const at::Tensor dropped = at::native_dropout_backward(c.inputs[1], mask, 1.0 / (1.0 - p));
  const std::array<at::Tensor, 3> inputs{c.inputs[0], dropped, c.inputs[2]};
  std::vector<at::Tensor> grads = g_context_backward(KernelContext{c.graph, c.op, inputs, c.runtime});
  if (c.needs_grad(0)) {
    const std::array<at::Tensor, 2> back{grads[0], mask};
    grads[0] = g_dropout_backward(KernelContext{c.graph, c.op, back, c.runtime})[0];
  }
  return grads;
}

}  // namespace

void register_lean_kernels(KernelTable& table) {
  using ir::OpKind;
  auto at = [&](OpKind k) { return table[static_cast<size_t>(k)]; };
  g_gelu = at(OpKind::gelu);
  g_dropout = at(OpKind::dropout);
  g_dropout_backward = at(OpKind::dropout_backward);
  g_context = at(OpKind::attn_context);
  g_context_backward = at(OpKind::attn_context_backward);
  g_layernorm_backward = at(OpKind::layernorm_backward);
  table[static_cast<size_t>(OpKind::gelu_lean)] = gelu_lean;
  table[static_cast<size_t>(OpKind::gelu_lean_backward)] = gelu_lean_backward;
  table[static_cast<size_t>(OpKind::layernorm_lean)] = at(OpKind::layernorm);  // its forward is layer norm's
  table[static_cast<size_t>(OpKind::layernorm_lean_backward)] = layernorm_lean_backward;
  table[static_cast<size_t>(OpKind::attn_dropout_context)] = attn_dropout_context;
  table[static_cast<size_t>(OpKind::attn_dropout_context_backward)] = attn_dropout_context_backward;
}

}  // namespace mutwo::exec
