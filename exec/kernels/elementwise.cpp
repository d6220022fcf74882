// Elementwise kernels: activations (backward from what derivatives.yaml saves: relu, tanh and
// sigmoid their result, the others their input), dropout with per-model seeded masks, add, mul,
// softmax, the autocast cast and its backward, the gradient plumbing autodiff emits (sum_to_shape,
// accumulate_grad) and GradScaler's unscale.
#include <ATen/ATen.h>
#include <ATen/ExpandUtils.h>

#include "exec/kernel.hpp"
#include "exec/model_tensors.hpp"
#include "exec/torch_types.hpp"

namespace mutwo::exec {
namespace {

std::vector<at::Tensor> relu(const KernelContext& c) {
  return {at::relu(c.inputs[0])};
}
std::vector<at::Tensor> relu6(const KernelContext& c) {
  return {at::hardtanh(c.inputs[0], 0.0, 6.0)};
}
std::vector<at::Tensor> tanh(const KernelContext& c) {
  return {at::tanh(c.inputs[0])};
}
std::vector<at::Tensor> sigmoid(const KernelContext& c) {
  return {at::sigmoid(c.inputs[0])};
}
std::vector<at::Tensor> hardswish(const KernelContext& c) {
  return {at::hardswish(c.inputs[0])};
}
std::vector<at::Tensor> hardsigmoid(const KernelContext& c) {
  return {at::hardsigmoid(c.inputs[0])};
}
std::vector<at::Tensor> silu(const KernelContext& c) {
  return {at::silu(c.inputs[0])};
}

// attr approximate: 0 = erf, 1 = tanh (gelu_new).
c10::string_view gelu_approximation(const KernelContext& c) {
  return c.attr_int("approximate", 0) ? "tanh" : "none";
}
std::vector<at::Tensor> gelu(const KernelContext& c) {
  return {at::gelu(c.inputs[0], gelu_approximation(c))};
}

// Backward inputs are [dY, saved].
std::vector<at::Tensor> relu_backward(const KernelContext& c) {
  return {at::threshold_backward(c.inputs[0], c.inputs[1], 0)};
}
std::vector<at::Tensor> relu6_backward(const KernelContext& c) {
  return {at::hardtanh_backward(c.inputs[0], c.inputs[1], 0.0, 6.0)};
}
std::vector<at::Tensor> gelu_backward(const KernelContext& c) {
  return {at::gelu_backward(c.inputs[0], c.inputs[1], gelu_approximation(c))};
}
std::vector<at::Tensor> tanh_backward(const KernelContext& c) {
  return {at::tanh_backward(c.inputs[0], c.inputs[1])};
}
std::vector<at::Tensor> sigmoid_backward(const KernelContext& c) {
  return {at::sigmoid_backward(c.inputs[0], c.inputs[1])};
}
std::vector<at::Tensor> hardswish_backward(const KernelContext& c) {
  return {at::hardswish_backward(c.inputs[0], c.inputs[1])};
}
std::vector<at::Tensor> hardsigmoid_backward(const KernelContext& c) {
  return {at::hardsigmoid_backward(c.inputs[0], c.inputs[1])};
}
std::vector<at::Tensor> silu_backward(const KernelContext& c) {
  return {at::silu_backward(c.inputs[0], c.inputs[1])};
}

// native_dropout's scale: 1 / (1 - p), 0 when everything is dropped.
double dropout_scale(double p) {
  return p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
}

// The keep mask, one Bernoulli(1 - p) draw per model from that model's generator, laid out along
// the model axis, so a fused op and the k unfused ops draw the same masks. Each model's part of
// one buffer is drawn in place where it is contiguous (the stacked and dim-0 layouts: the same
// draws as a tensor of its own), else drawn apart and copied in. Drawn straight into bool (ATen's
// bernoulli_ takes every dtype and draws the same uniform per element: on the CPU the masks are
// those of float draws cast to bool), 1 byte per element written: drawing floats and casting them
// wrote 4, read 4 and wrote 1 more in a kernel of its own.
at::Tensor dropout_mask(const KernelContext& c, double p) {
  const at::Tensor& x = c.inputs[0];
  const ModelAxis axis = c.axis(c.op.inputs[0]);
  const int32_t k = c.width();
  at::Tensor keep = at::empty(x.sizes(), x.options().dtype(at::kBool));
  const std::vector<int64_t> shape = per_model_shape(x.sizes().vec(), axis, k);
  for (int32_t m = 0; m < k; ++m) {
    // A new mask every training step, the same for a recompute within the step.
    at::Generator gen = c.generator(m, static_cast<uint64_t>(c.runtime.optimizer_step));
    at::Tensor part = model_part(keep, axis, k, m);
    if (part.is_contiguous()) {
      part.bernoulli_(1.0 - p, gen);
    } else {
      part.copy_(at::empty(shape, keep.options()).bernoulli_(1.0 - p, gen));
    }
  }
  return keep;
}

// native_dropout: outputs y = x * mask * scale (one kernel: ATen's masked scale) and the mask.
std::vector<at::Tensor> dropout(const KernelContext& c) {
  const double p = c.attr_double("p", ir::kDefaultDropoutP);
  const at::Tensor mask = dropout_mask(c, p);
  return {at::native_dropout_backward(c.inputs[0], mask, dropout_scale(p)), mask};
}

// inputs [dY, mask].
std::vector<at::Tensor> dropout_backward(const KernelContext& c) {
  return {at::native_dropout_backward(c.inputs[0], c.inputs[1],
                                      dropout_scale(c.attr_double("p", ir::kDefaultDropoutP)))};
}

std::vector<at::Tensor> add(const KernelContext& c) {
  return {at::add(c.inputs[0], c.inputs[1])};
}
std::vector<at::Tensor> mul(const KernelContext& c) {
  return {at::mul(c.inputs[0], c.inputs[1])};
}

// inputs [dY, a, b]: da = dY b, db = sum_to(dY a, b's shape).
std::vector<at::Tensor> mul_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const at::Tensor& a = c.inputs[1];
  const at::Tensor& b = c.inputs[2];
  std::vector<at::Tensor> out;
  // Mixed operands (autocast) promote; each gradient takes its operand's dtype, as autograd's engine
  // casts it (validate_outputs). A no-op for operands of one dtype.
  if (c.needs_grad(0)) out.push_back(at::sum_to(gy * b, a.sizes()).to(a.scalar_type()));
  if (c.needs_grad(1)) out.push_back(at::sum_to(gy * a, b.sizes()).to(b.scalar_type()));
  return out;
}

// An output dtype other than the input's (attr dtype f32 on an f16 input, autocast's
// softmax(x, dim, dtype=float)) runs as ATen's softmax with that dtype does: on CUDA one kernel
// reading half and writing float; elsewhere a copy up, then the softmax.
std::vector<at::Tensor> softmax(const KernelContext& c) {
  const at::Tensor& x = c.inputs[0];
  const at::ScalarType out = scalar_type(c.output_ir(0).dtype);
  if (out == x.scalar_type()) return {at::_softmax(x, -1, false)};
  if (x.is_cuda()) return {at::_softmax(x, -1, true)};
  return {at::_softmax(x.to(out), -1, false)};
}

// inputs [dY, y]; the gradient takes the forward input's dtype (half under half_to_float), as
// derivatives.yaml's _softmax_backward_data(grad, result, dim, self.scalar_type()) asks. The CPU
// kernel has no half_to_float form: it computes in y's dtype and copies down.
std::vector<at::Tensor> softmax_backward(const KernelContext& c) {
  const at::Tensor& gy = c.inputs[0];
  const at::Tensor& y = c.inputs[1];
  const at::ScalarType in = scalar_type(c.output_ir(0).dtype);
  if (in == y.scalar_type() || gy.is_cuda()) return {at::_softmax_backward_data(gy, y, -1, in)};
  return {at::_softmax_backward_data(gy, y, -1, y.scalar_type()).to(in)};
}

// The gradient of a broadcast operand: the output gradient summed down to the operand's shape (a
// copy when the shapes agree).
std::vector<at::Tensor> sum_to_shape(const KernelContext& c) {
  // Cast to the operand's dtype too (a mixed-dtype add under autocast); .to is a no-op otherwise.
  return {at::sum_to(c.inputs[0], c.output_ir(0).shape).to(scalar_type(c.output_ir(0).dtype))};
}

// aten::_to_copy: always a new tensor of the target dtype (attr dtype, the output's dtype).
std::vector<at::Tensor> cast(const KernelContext& c) {
  return {c.inputs[0].to(scalar_type(c.output_ir(0).dtype), /*non_blocking=*/false, /*copy=*/true)};
}

// _to_copy_backward: the gradient cast back to the forward input's dtype (the output's dtype).
std::vector<at::Tensor> cast_backward(const KernelContext& c) {
  return {c.inputs[0].to(scalar_type(c.output_ir(0).dtype), /*non_blocking=*/false, /*copy=*/true)};
}

// GradScaler.unscale_ of one gradient, in place: grad *= inv_scale. mutwo seeds backward with 1
// rather than the scale S = 2^16, so inv_scale is 1 and the gradient is what PyTorch's unscaled one
// is (S and 1/S are powers of two); the pass over the gradient is what a measurement times. The
// non-finite check that skips a step is not modelled (no step is skipped).
std::vector<at::Tensor> amp_unscale(const KernelContext& c) {
  at::Tensor grad = c.inputs[0];
  grad.mul_(c.attr_double("inv_scale", 1.0));
  return {};
}

std::vector<at::Tensor> accumulate_grad(const KernelContext& c) {
  return {at::add(c.inputs[0], c.inputs[1])};
}

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  using ir::OpKind;
  auto set = [&table](OpKind kind, KernelFn fn) { table[static_cast<size_t>(kind)] = fn; };
  set(OpKind::relu, relu);
  set(OpKind::relu_backward, relu_backward);
  set(OpKind::relu6, relu6);
  set(OpKind::relu6_backward, relu6_backward);
  set(OpKind::gelu, gelu);
  set(OpKind::gelu_backward, gelu_backward);
  set(OpKind::tanh, tanh);
  set(OpKind::tanh_backward, tanh_backward);
  set(OpKind::sigmoid, sigmoid);
  set(OpKind::sigmoid_backward, sigmoid_backward);
  set(OpKind::hardswish, hardswish);
  set(OpKind::hardswish_backward, hardswish_backward);
  set(OpKind::silu, silu);
  set(OpKind::silu_backward, silu_backward);
  set(OpKind::hardsigmoid, hardsigmoid);
  set(OpKind::hardsigmoid_backward, hardsigmoid_backward);
  set(OpKind::dropout, dropout);
  set(OpKind::dropout_backward, dropout_backward);
  set(OpKind::add, add);
  set(OpKind::mul, mul);
  set(OpKind::mul_backward, mul_backward);
  set(OpKind::softmax, softmax);
  set(OpKind::softmax_backward, softmax_backward);
  set(OpKind::sum_to_shape, sum_to_shape);
  set(OpKind::accumulate_grad, accumulate_grad);
  set(OpKind::cast, cast);
  set(OpKind::cast_backward, cast_backward);
  set(OpKind::amp_unscale, amp_unscale);
}

}  // namespace mutwo::exec
