#include "tests/support/bert_adam_reference.hpp"

#include <ATen/ATen.h>
#include <torch/autograd.h>

namespace mutwo::test {

BertAdamReference::BertAdamReference(std::vector<at::Tensor> params, torch::optim::AdamWOptions options,
                                     double clip_each)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(params))},
                              std::make_unique<torch::optim::AdamWOptions>(options)),
      options_(options),
      clip_each_(clip_each) {}

at::Tensor BertAdamReference::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  at::Tensor loss = closure ? closure() : at::Tensor();
  const auto [beta1, beta2] = options_.betas();
  for (const at::Tensor& p : param_groups().at(0).params()) {
    if (!p.grad().defined()) continue;
    at::Tensor g = p.grad();
    if (clip_each_ > 0.0) {
      const double coef = clip_each_ / (g.norm().item<double>() + 1e-6);
      if (coef < 1.0) g.mul_(coef);
    }
    Moments& s = moments_[p.unsafeGetTensorImpl()];
    if (!s.m.defined()) {
      s.m = at::zeros_like(p);
      s.v = at::zeros_like(p);
    }
    s.m = beta1 * s.m + (1.0 - beta1) * g;
    s.v = beta2 * s.v + (1.0 - beta2) * g * g;
    const at::Tensor update = s.m / (at::sqrt(s.v) + options_.eps()) + options_.weight_decay() * p;
    p.copy_(p - options_.lr() * update);
  }
  return loss;
}

}  // namespace mutwo::test
