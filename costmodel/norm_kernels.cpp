#include "costmodel/norm_kernels.hpp"

#include "ir/needs_grad.hpp"

namespace mutwo::costmodel {

using ir::KindCategory;

std::vector<OpKernel> norm_kernels(const ir::Graph& graph, const ir::Op& op) {
  std::vector<OpKernel> out;
  if (op.width <= 1) return out;
  const double flops = static_cast<double>(op.flops);
  if (op.kind == ir::OpKind::layernorm && !op.inputs.empty()) {
    const ir::Tensor& x = graph.tensor(op.inputs[0]);
    out.push_back(pass_kernel("layernorm", KindCategory::norm, 2, x, flops / 2));
    out.push_back(pass_kernel("add", KindCategory::elementwise, 2, x, flops / 2));
    return out;
  }
  if (op.kind != ir::OpKind::layernorm_backward || op.inputs.size() < 2) return out;
  const ir::Tensor& x = graph.tensor(op.inputs[1]);  // inputs [dY, x, gamma, beta, mean, rstd]
  const auto needs = [&](size_t i) { return ir::needs_grad(op, i); };
  std::vector<OpKernel> kernels;
  if (needs(0)) {
    kernels.push_back(pass_kernel("mul", KindCategory::elementwise, 2, x, 0));
    kernels.push_back(pass_kernel("layernorm_backward", KindCategory::norm, 3, x, 0));
  }
  if (needs(1)) {
    kernels.push_back(pass_kernel("sub", KindCategory::elementwise, 2, x, 0));
    kernels.push_back(pass_kernel("mul", KindCategory::elementwise, 2, x, 0));
    kernels.push_back(pass_kernel("mul", KindCategory::elementwise, 3, x, 0));
    kernels.push_back(pass_kernel("sum", KindCategory::reduction, 1, x, 0));
  }
  if (needs(2)) kernels.push_back(pass_kernel("sum", KindCategory::reduction, 1, x, 0));
  const double share = kernels.empty() ? 0 : flops / static_cast<double>(kernels.size());
  for (OpKernel& k : kernels) k.sample.flops = share;
  return kernels;
}

std::vector<OpKernel> batchnorm_statistics(const ir::Graph& graph, const ir::Op& op) {
  std::vector<OpKernel> out;
  if (op.inputs.empty()) return out;
  // batchnorm2d reads x; its backward dY and x (input 0 is dY, x's size).
  const double passes = op.kind == ir::OpKind::batchnorm2d            ? 1
                        : op.kind == ir::OpKind::batchnorm2d_backward ? 2
                                                                      : 0;
  if (passes == 0) return out;
  out.push_back(
      pass_kernel("batchnorm_statistics", KindCategory::reduction, passes, graph.tensor(op.inputs[0]), 0));
  out.back().helper = true;
  return out;
}

}  // namespace mutwo::costmodel
