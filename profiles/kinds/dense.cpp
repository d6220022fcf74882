// Dense (GEMM-like) kinds: linear, attention products.
#include <fmt/format.h>

#include "profiles/kind_rules.hpp"

namespace mutwo::profiles {
namespace {

// y = x W^T + b. Width k ("stack"): x [k,...,in], W [k,out,in], b [k,out].
InferResult infer_linear(const InferContext& ctx) {
  expect_inputs(ctx, 2, 3);
  const Tensor& x = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[1];
  const size_t w_rank = ctx.width > 1 ? 3 : 2;
  expect_rank(ctx, 1, w_rank);
  if (x.shape.empty() || x.shape.back() != w.shape.back()) {
    infer_error(ctx, fmt::format("input 0 '{}' shape {} does not end in the weight's in_features {}", x.name,
                                 shape_string(x.shape), w.shape.back()));
  }
  if (ctx.width > 1 && (x.shape.size() < 2 || x.shape[0] != ctx.width || w.shape[0] != ctx.width)) {
    infer_error(ctx, fmt::format("at width {} input {} and weight {} must lead with the model dim", ctx.width,
                                 shape_string(x.shape), shape_string(w.shape)));
  }
  const int64_t out_features = w.shape[w_rank - 2];
  if (ctx.inputs.size() == 3) {
    std::vector<int64_t> bias_shape{out_features};
    if (ctx.width > 1) bias_shape.insert(bias_shape.begin(), ctx.width);
    if (ctx.inputs[2]->shape != bias_shape) {
      infer_error(ctx, fmt::format("input 2 '{}' (bias) has shape {}, expected {}", ctx.inputs[2]->name,
                                   shape_string(ctx.inputs[2]->shape), shape_string(bias_shape)));
    }
  }
  InferResult r;
  std::vector<int64_t> out = x.shape;
  out.back() = out_features;
  const int64_t rows = element_count(x.shape) / x.shape.back();
  r.flops = 2 * rows * x.shape.back() * out_features + (ctx.inputs.size() == 3 ? rows * out_features : 0);
  r.outputs.push_back({"", std::move(out), x.dtype, TensorRole::activation});
  return r;
}

// dX = dY W (2 r i o), dW = dY^T X (2 r i o), db = sum dY (r o).
int64_t linear_backward_flops(const BackwardContext& ctx) {
  const Tensor& x = *ctx.inputs[0];
  const int64_t in = x.shape.back();
  const int64_t rows = element_count(x.shape) / in;
  const int64_t out = ctx.outputs[0]->shape.back();
  int64_t flops = 0;
  if (ctx.needs_grad[0]) flops += 2 * rows * in * out;
  if (ctx.needs_grad[1]) flops += 2 * rows * in * out;
  if (ctx.needs_grad.size() > 2 && ctx.needs_grad[2]) flops += rows * out;
  return flops;
}

}  // namespace

void register_dense_kinds(KindRulesTable& table) {
  // derivatives.yaml (addmm): saves mat1 (x) and mat2 (W).
  table[static_cast<size_t>(OpKind::linear)] = {
      .infer = infer_linear,
      .backward_kind = OpKind::linear_backward,
      .saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}},
      .backward_flops = linear_backward_flops,
  };
}

}  // namespace mutwo::profiles
