// Convolution-family kinds: conv2d, pooling, flatten.
#include <fmt/format.h>

#include "profiles/kind_rules.hpp"

namespace mutwo::profiles {
namespace {

struct ConvGeometry {
  int64_t out_h = 0, out_w = 0;
  int64_t macs_per_output = 0;  // (C_in / groups) * kh * kw
};

// nn.Conv2d. attrs: stride, padding, dilation ([2], defaults 1,0,1), groups (per model, default 1).
// Width k ("channel"): x [B,k*C,H,W], W [k*Co,C/g,kh,kw], effective groups = groups * k.
InferResult infer_conv2d(const InferContext& ctx) {
  expect_inputs(ctx, 2, 3);
  expect_rank(ctx, 0, 4);
  expect_rank(ctx, 1, 4);
  const Tensor& x = *ctx.inputs[0];
  const Tensor& w = *ctx.inputs[1];
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const auto stride = attr_ints_or(ctx.attrs, "stride", {1, 1}, where);
  const auto padding = attr_ints_or(ctx.attrs, "padding", {0, 0}, where);
  const auto dilation = attr_ints_or(ctx.attrs, "dilation", {1, 1}, where);
  const int64_t groups = attr_int_or(ctx.attrs, "groups", 1, where) * ctx.width;
  if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2 || stride[0] < 1 || stride[1] < 1 ||
      groups < 1) {
    infer_error(ctx, "attributes 'stride', 'padding', 'dilation' need 2 values and stride, groups >= 1");
  }
  if (x.shape[1] != w.shape[1] * groups || w.shape[0] % groups != 0) {
    infer_error(ctx, fmt::format("input 0 '{}' has {} channels, weight {} with {} groups expects {}", x.name,
                                 x.shape[1], shape_string(w.shape), groups, w.shape[1] * groups));
  }
  if (ctx.inputs.size() == 3 && ctx.inputs[2]->shape != std::vector<int64_t>{w.shape[0]}) {
    infer_error(ctx, fmt::format("input 2 '{}' (bias) has shape {}, expected [{}]", ctx.inputs[2]->name,
                                 shape_string(ctx.inputs[2]->shape), w.shape[0]));
  }
  ConvGeometry g;
  g.out_h = (x.shape[2] + 2 * padding[0] - dilation[0] * (w.shape[2] - 1) - 1) / stride[0] + 1;
  g.out_w = (x.shape[3] + 2 * padding[1] - dilation[1] * (w.shape[3] - 1) - 1) / stride[1] + 1;
  if (g.out_h < 1 || g.out_w < 1) {
    infer_error(ctx, fmt::format("input 0 '{}' of shape {} is too small for kernel {}", x.name,
                                 shape_string(x.shape), shape_string(w.shape)));
  }
  g.macs_per_output = w.shape[1] * w.shape[2] * w.shape[3];
  const int64_t outputs = x.shape[0] * w.shape[0] * g.out_h * g.out_w;
  InferResult r;
  r.flops = 2 * outputs * g.macs_per_output + (ctx.inputs.size() == 3 ? outputs : 0);
  r.outputs.push_back({"", {x.shape[0], w.shape[0], g.out_h, g.out_w}, x.dtype, TensorRole::activation});
  return r;
}

// dX and dW each cost the forward's MACs; db sums the output gradient.
int64_t conv2d_backward_flops(const BackwardContext& ctx) {
  const Tensor& w = *ctx.inputs[1];
  const Tensor& y = *ctx.outputs[0];
  const int64_t outputs = element_count(y.shape);
  const int64_t macs = outputs * w.shape[1] * w.shape[2] * w.shape[3];
  int64_t flops = 0;
  if (ctx.needs_grad[0]) flops += 2 * macs;
  if (ctx.needs_grad[1]) flops += 2 * macs;
  if (ctx.needs_grad.size() > 2 && ctx.needs_grad[2]) flops += outputs;
  return flops;
}

}  // namespace

void register_conv_kinds(KindRulesTable& table) {
  // derivatives.yaml (convolution): saves input and weight.
  table[static_cast<size_t>(OpKind::conv2d)] = {
      .infer = infer_conv2d,
      .backward_kind = OpKind::conv2d_backward,
      .saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}},
      .backward_flops = conv2d_backward_flops,
  };
}

}  // namespace mutwo::profiles
