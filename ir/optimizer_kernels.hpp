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
#include <cstdint>

#include "ir/op.hpp"

namespace mutwo::ir {

struct OptimizerKernels {
  int64_t kernels = 0;
  int64_t passes = 0;  // weight-sized tensors read or written, summed over the kernels
};

// For sgd_step, adam_step and adamw_step ops (is_optimizer_update); {0, 0} for any other kind.
OptimizerKernels optimizer_kernels(const Op& op);

}  // namespace mutwo::ir
