#pragma once
// NVIDIA's BertAdam as a torch::optim optimizer, written from its update rule
// (DeepLearningExamples, PyTorch/LanguageModeling/BERT/optimization.py): for each parameter,
//   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2,
//   p = p - lr (m / (sqrt(v) + eps) + weight_decay p)
// with no bias correction; pytorch-pretrained-bert's form first clips each parameter's gradient in
// place to `clip_each` by its own norm (torch's clip_grad_norm_ on one parameter: g *= clip /
// (|g| + 1e-6) when that is below 1). The reference the executor's bert-adam steps are checked against.
#include <map>
#include <memory>
#include <vector>

#include <torch/optim/adamw.h>
#include <torch/optim/optimizer.h>

namespace mutwo::test {

class BertAdamReference : public torch::optim::Optimizer {
 public:
  // clip_each 0: NVIDIA's form, no clipping.
  BertAdamReference(std::vector<at::Tensor> params, torch::optim::AdamWOptions options,
                    double clip_each = 0.0);
  at::Tensor step(LossClosure closure = nullptr) override;

 private:
  struct Moments {
    at::Tensor m, v;
  };
  torch::optim::AdamWOptions options_;
  double clip_each_ = 0.0;
  std::map<const void*, Moments> moments_;  // by the parameter's TensorImpl
};

}  // namespace mutwo::test
