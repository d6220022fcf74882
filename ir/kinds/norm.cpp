// Normalisation kinds: layer norm, batch norm.
#include <fmt/format.h>

#include "ir/kind_rules.hpp"

namespace mutwo::ir {
namespace {

// Statistics are kept in the accumulation type, as ATen does (fp32 for half inputs).
DType stats_dtype(DType x) {
  return x == DType::f64 ? DType::f64 : DType::f32;
}

// mean, variance (3), normalise (2), affine (2) per element.
constexpr int64_t kLayerNormFlopsPerElement = 8;
// d(normalised) reductions and the three-term input gradient, plus dgamma, dbeta.
constexpr int64_t kLayerNormBackwardFlopsPerElement = 14;
// Batch norm does the same work per element, reduced over (B,H,W) instead of the last dim.
constexpr int64_t kBatchNormFlopsPerElement = kLayerNormFlopsPerElement;
constexpr int64_t kBatchNormBackwardFlopsPerElement = kLayerNormBackwardFlopsPerElement;

// nn.LayerNorm over the last dim; attr eps. Outputs y, mean and rstd of shape [..., 1].
// Width k ("stack"): x [k,...,H], gamma and beta [k,H].
InferResult infer_layernorm(const InferContext& ctx) {
  expect_inputs(ctx, 3, 3);
  if (attr_double_or(ctx.attrs, "eps", 1e-5, "op '" + std::string(ctx.op_name) + "'") <= 0.0)
    infer_error(ctx, "attribute 'eps' must be > 0");
  const Tensor& x = *ctx.inputs[0];
  if (x.shape.empty()) infer_error(ctx, "input 0 '" + x.name + "' is a scalar");
  std::vector<int64_t> affine{x.shape.back()};
  if (ctx.width > 1) affine.insert(affine.begin(), ctx.width);
  for (size_t i = 1; i < 3; ++i) {
    if (ctx.inputs[i]->shape != affine) {
      infer_error(ctx, fmt::format("input {} '{}' has shape {}, expected {}", i, ctx.inputs[i]->name,
                                   shape_string(ctx.inputs[i]->shape), shape_string(affine)));
    }
  }
  std::vector<int64_t> stats = x.shape;
  stats.back() = 1;
  InferResult r = same_as_input(ctx, kLayerNormFlopsPerElement);
  r.outputs.push_back({".mean", stats, stats_dtype(x.dtype), TensorRole::activation});
  r.outputs.push_back({".rstd", stats, stats_dtype(x.dtype), TensorRole::activation});
  return r;
}

int64_t layernorm_backward_flops(const BackwardContext& ctx) {
  return kLayerNormBackwardFlopsPerElement * element_count(ctx.inputs[0]->shape);
}

// Training-mode nn.BatchNorm2d: statistics over (B,H,W) per channel; attr eps (default 1e-5).
// Outputs y, save_mean [C] and save_invstd [C] (native_batch_norm's result1, result2).
// Running statistics (running_mean / running_var, updated in place with momentum) are not
// modelled: they are C-sized buffers outside autograd and do not change a training step's result.
// Width k ("channel"): x [B,k*C,H,W], gamma and beta [k*C]; channels are independent, so the
// fused op is k batch norms.
InferResult infer_batchnorm2d(const InferContext& ctx) {
  expect_inputs(ctx, 3, 3);
  expect_rank(ctx, 0, 4);
  const Tensor& x = *ctx.inputs[0];
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  if (attr_double_or(ctx.attrs, "eps", 1e-5, where) <= 0.0) infer_error(ctx, "attribute 'eps' must be > 0");
  const std::vector<int64_t> channels{x.shape[1]};
  for (size_t i = 1; i < 3; ++i) {
    if (ctx.inputs[i]->shape != channels) {
      infer_error(ctx, fmt::format("input {} '{}' has shape {}, expected {}", i, ctx.inputs[i]->name,
                                   shape_string(ctx.inputs[i]->shape), shape_string(channels)));
    }
  }
  InferResult r = same_as_input(ctx, kBatchNormFlopsPerElement);
  r.outputs.push_back({".mean", channels, stats_dtype(x.dtype), TensorRole::activation});
  r.outputs.push_back({".invstd", channels, stats_dtype(x.dtype), TensorRole::activation});
  return r;
}

int64_t batchnorm2d_backward_flops(const BackwardContext& ctx) {
  return kBatchNormBackwardFlopsPerElement * element_count(ctx.inputs[0]->shape);
}

}  // namespace

void register_norm_kinds(KindRulesTable& table) {
  // derivatives.yaml (native_layer_norm): saves input, weight, bias, result1 (mean), result2 (rstd).
  table[static_cast<size_t>(OpKind::layernorm)] = {
      .infer = infer_layernorm,
      .backward_kind = OpKind::layernorm_backward,
      .saved = {{SavedRef::From::input, 0},
                {SavedRef::From::input, 1},
                {SavedRef::From::input, 2},
                {SavedRef::From::output, 1},
                {SavedRef::From::output, 2}},
      .backward_flops = layernorm_backward_flops,
  };
  // derivatives.yaml (native_batch_norm): saves input, weight, save_mean (result1), save_invstd (result2).
  KindRules bn;
  bn.infer = infer_batchnorm2d;
  bn.backward_kind = OpKind::batchnorm2d_backward;
  bn.saved = {{SavedRef::From::input, 0},
              {SavedRef::From::input, 1},
              {SavedRef::From::output, 1},
              {SavedRef::From::output, 2}};
  bn.backward_flops = batchnorm2d_backward_flops;
  table[static_cast<size_t>(OpKind::batchnorm2d)] = bn;
}

}  // namespace mutwo::ir
