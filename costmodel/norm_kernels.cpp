#include "costmodel/norm_kernels.hpp"

#include <algorithm>
#include <string>

#include "ir/attributes.hpp"

namespace mutwo::costmodel {
namespace {

using ir::KindCategory;

// A bandwidth-bound kernel over `passes` x-sized tensors; m = x's elements.
OpKernel pass_kernel(std::string name, KindCategory category, double passes, const ir::Tensor& x,
                     double flops) {
  OpKernel k;
  k.kernel = std::move(name);
  k.category = category;
  int64_t elements = 1;
  for (int64_t d : x.shape) elements *= d;
  k.sample.m = std::max<int64_t>(1, elements);
  k.sample.bytes = passes * static_cast<double>(x.bytes);
  k.sample.flops = flops;
  return k;
}

}  // namespace

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
  const auto flags = ir::attr_ints_or(op.attrs, "needs_grad", {}, op.name);
  const auto needs = [&](size_t i) { return i < flags.size() && flags[i] != 0; };
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
