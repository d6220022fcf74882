// Cross entropy: log_softmax + mean NLL per model (outputs the loss and the log-probabilities its
// backward reads, as derivatives.yaml's log_softmax and nll_loss save them).
#include <ATen/ATen.h>

#include "exec/kernel.hpp"
#include "exec/torch_types.hpp"

namespace mutwo::exec {
namespace {

// inputs logits [...,C], labels [...]; outputs loss ([] or [k]) and log_probs.
std::vector<at::Tensor> cross_entropy(const KernelContext& c) {
  const at::Tensor& logits = c.inputs[0];
  const at::Tensor& labels = c.inputs[1];
  // Half logits into float log-probabilities (autocast's log_softmax(x, dim, dtype=float)): one kernel
  // on CUDA, a copy up elsewhere, as ATen's log_softmax with a dtype runs.
  const at::ScalarType to = scalar_type(c.output_ir(1).dtype);
  const at::Tensor log_probs = to == logits.scalar_type() ? at::_log_softmax(logits, -1, false)
                               : logits.is_cuda()         ? at::_log_softmax(logits, -1, true)
                                                          : at::_log_softmax(logits.to(to), -1, false);
  const at::Tensor picked = log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1);
  const at::Tensor loss =
      c.fused() ? picked.reshape({picked.size(0), -1}).mean(1).neg() : picked.mean().neg();
  return {loss, log_probs};
}

// inputs [log_probs, labels]: d logits = (softmax - onehot) / positions per model.
std::vector<at::Tensor> cross_entropy_backward(const KernelContext& c) {
  const at::Tensor& log_probs = c.inputs[0];
  const at::Tensor& labels = c.inputs[1];
  const int64_t positions = c.fused() ? labels.numel() / labels.size(0) : labels.numel();
  at::Tensor grad = log_probs.exp();
  grad.scatter_add_(-1, labels.unsqueeze(-1), at::full(labels.unsqueeze(-1).sizes(), -1.0, grad.options()));
  // The logits' dtype (half when the forward read half logits into float).
  return {grad.div_(static_cast<double>(positions)).to(scalar_type(c.output_ir(0).dtype))};
}

}  // namespace

void register_loss_kernels(KernelTable& table) {
  using ir::OpKind;
  table[static_cast<size_t>(OpKind::cross_entropy)] = cross_entropy;
  table[static_cast<size_t>(OpKind::cross_entropy_backward)] = cross_entropy_backward;
}

}  // namespace mutwo::exec
