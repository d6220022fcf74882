// Normalisation kinds: layer norm, batch norm.
#include <fmt/format.h>

#include "profiles/kind_rules.hpp"

namespace mutwo::profiles {
namespace {

// Statistics are kept in the accumulation type, as ATen does (fp32 for half inputs).
DType stats_dtype(DType x) { return x == DType::f64 ? DType::f64 : DType::f32; }

// mean, variance (3), normalise (2), affine (2) per element.
constexpr int64_t kLayerNormFlopsPerElement = 8;
// d(normalised) reductions and the three-term input gradient, plus dgamma, dbeta.
constexpr int64_t kLayerNormBackwardFlopsPerElement = 14;

// nn.LayerNorm over the last dim; attr eps. Outputs y, mean and rstd of shape [..., 1].
// Width k ("stack"): x [k,...,H], gamma and beta [k,H].
InferResult infer_layernorm(const InferContext& ctx) {
  expect_inputs(ctx, 3, 3);
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
}

}  // namespace mutwo::profiles
