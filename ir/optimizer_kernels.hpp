#pragma once
// The element-wise kernels one optimizer step runs over a weight on a GPU, as torch.optim's
// single-tensor and foreach forms of Adam, AdamW and SGD issue them (torch/optim/adam.py, sgd.py;
// exec/kernels/optimizer.cpp runs the same sequence). The graph's bytes count each tensor once
// (read param, grad and state, write param and state: Adam's 7 passes); the kernels pass over
// weight-sized tensors more often, through temporaries:
//   Adam:  lerp_ m (3), mul_ v (2), addcmul_ v (3), sqrt (2), div (2), add_ eps (2), addcdiv_ p (4)
//          = 7 kernels, 18 passes; L2 weight decay, grad + wd * p first: +1 kernel, +3 passes;
//   AdamW: decoupled decay, p.mul_ first: +1 kernel, +2 passes;
//   SGD:   p.add_(d, -lr): 1 kernel, 3 passes; momentum buf.mul_().add_(d): +2 kernels, +5 passes;
//          L2 weight decay: +1 kernel, +3 passes.
// The H200 lease measured it: 128-element Adam steps took 17.2 us (7 launches), 4.7 M-element ones
// ran at 3.8 TB/s counted as 18 passes (0.80 of HBM), 1.5 TB/s counted as 7 (docs/VALIDATION.md).
// Per-model hyper-parameters (HFTA arrays with a sweep) run the same sequence with broadcast
// operands; the counts are those of the uniform form.
// Fused Adam and AdamW (attr fused, transforms/optimizer_kind.hpp: torch.optim's fused=True, apex's
// FusedAdam): one kernel reads param, grad and both states and writes param and both states, the
// decay inside it: 1 kernel, 7 passes, whatever the decay.
// NVIDIA's BertAdam (attr bert_adam on an AdamW step, transforms/optimizer_kind.hpp; the
// DeepLearningExamples BERT optimization.py that run_squad.py uses outside fp16): AdamW without bias
// correction, one Python statement per tensor op:
//   mul_ m (2), add_ m (3), mul_ v (2), addcmul_ v (3), sqrt (2), + eps (2), m / (3),
//   lr * update (2), neg (2), p.add_ (3) = 10 kernels, 24 passes; decay, update += wd * p:
//   +2 kernels, +5 passes; the global gradient norm before the loop (multi_tensor_l2norm, a few
//   launches for all weights) reads each gradient once: +1 pass. pytorch-pretrained-bert's BertAdam
//   (bert_adam = 2) reads each gradient in its own clip_grad_norm_ instead: norm (1), +1 kernel;
//   the mul_ that clips a gradient whose norm passes max_grad_norm is not counted.
#include <cstdint>
#include <string_view>

#include "ir/op.hpp"

namespace mutwo::ir {

struct OptimizerKernels {
  int64_t kernels = 0;
  int64_t passes = 0;  // weight-sized tensors read or written, summed over the kernels
};

// For sgd_step, adam_step and adamw_step ops (is_optimizer_update); {0, 0} for any other kind.
OptimizerKernels optimizer_kernels(const Op& op);

// Whether an Adam or AdamW step runs as one fused kernel (attr fused = 1). Throws GraphError naming
// the op when the attribute is another value.
bool is_fused_update(const Op& op);

// Whether an AdamW step is a BertAdam, issued from a Python loop, one statement per kernel: attr
// bert_adam = 1 NVIDIA's, 2 pytorch-pretrained-bert's (each gradient clipped to attr max_grad_norm
// by its own norm). Throws GraphError naming the op when the attribute is another value, sits on
// another kind, or comes with fused = 1, and when max_grad_norm is not a finite value > 0.
bool is_bert_adam(const Op& op);
// The attribute's value: 0 (not a BertAdam), 1 or 2; the same checks.
int64_t bert_adam_form(const Op& op);

// Whether every model of a fused optimizer op has the same value of hyper-parameter `key` (an op
// without it: true). Such a value runs as a scalar, as torch.optim's; one that differs runs as a
// per-model tensor (exec/kernels/optimizer.cpp), which holds more temporaries (below).
bool uniform_hyper(const Op& op, std::string_view key);

// Weight-sized temporaries the step holds at once (exec/kernels/optimizer.cpp, whose expressions
// follow torch.optim's single-tensor forms); the op's workspace in the memory rule is this many
// weight-sized blocks. Adam's denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps) holds
// sqrt's result and the quotient together: 2. L2 decay's grad + wd * p lives through the step: +1.
// Per-model hyper-parameters (values that differ between a fused op's models) broadcast tensors
// instead of scalars: Adam's v update holds grad * grad and its scaled copy, and its p update
// m * (lr / bias_correction1) and its quotient by denom beside denom: 3, with L2 decay 4; SGD's
// p.sub_(d * lr) holds one, L2 decay's wd * p and grad + wd * p two. (The per-model scalars
// themselves, a few 512-B blocks, are not counted.) The H100 lease found the uniform Adam's two in
// torch.cuda.max_memory_allocated: dlrm's 4-model step peaked 4,982 MiB above the accounting that
// lacked them, 2 x its largest table (2,473 MiB) plus cuBLAS's 32 MiB workspace. A fused step with
// uniform hyper-parameters holds none (its kernel keeps every intermediate in registers); with
// per-model ones the executor runs the broadcast form above, and holds its temporaries. BertAdam
// holds update, lr * update and its negation at once: 3 (Python keeps each name bound through the
// parameter's iteration).
int64_t optimizer_temporaries(const Op& op);

// An optimizer update's hyper-parameters (lr, momentum, beta1, beta2, eps, weight_decay) as the
// optimizer settings allow them (transforms/autodiff.hpp): one value or one per model, each finite and
// >= 0, the betas < 1. A schedule file's adam_step with lr -1 trained the models uphill.
void check_optimizer_attributes(const Op& op);

}  // namespace mutwo::ir
