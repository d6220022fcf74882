// Convolution-family kinds: conv2d, pooling, flatten.
#include <fmt/format.h>

#include "ir/conv_groups.hpp"
#include "ir/conv_lowering.hpp"
#include "ir/dtype.hpp"
#include "ir/kind_rules.hpp"
#include "support/checked_int.hpp"

namespace mutwo::ir {
namespace {

struct ConvGeometry {
  int64_t out_h = 0, out_w = 0;
  int64_t macs_per_output = 0;  // (C_in / groups) * kh * kw
};

// nn.Conv2d. attrs: stride, padding, dilation ([2], defaults 1,0,1), groups (per model, default 1).
// Width k ("channel"): x [B,k*C,H,W], W [k*Co,C/g,kh,kw], effective groups = groups * k. Derives
// "lowering" = "batched-gemm" for a grouped 1x1 convolution (ir/conv_lowering.hpp).
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
  const int64_t groups = conv_groups(ctx.attrs, ctx.width, where);
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
  const std::string what = "op '" + std::string(ctx.op_name) + "': FLOPs";
  g.macs_per_output = support::checked_product({w.shape[1], w.shape[2], w.shape[3]}, what);
  const int64_t outputs = support::checked_product({x.shape[0], w.shape[0], g.out_h, g.out_w}, what);
  InferResult r;
  r.flops = support::checked_sum(support::checked_product({2, outputs, g.macs_per_output}, what),
                                 ctx.inputs.size() == 3 ? outputs : 0, what);
  r.outputs.push_back({"", {x.shape[0], w.shape[0], g.out_h, g.out_w}, x.dtype, TensorRole::activation});
  const bool fits_gemm =
      conv_fits_batched_gemm(x.shape, w.shape, r.outputs.front().shape, padding, dilation, groups);
  if (conv_runs_as_batched_gemm(ctx.attrs, where) && !fits_gemm) {
    infer_error(ctx,
                fmt::format("attribute '{}' = '{}' needs a 1x1 kernel, padding 0, dilation 1, more "
                            "than one group and a weight no larger than its activations over the images; "
                            "weight {} with {} groups",
                            kConvLoweringAttr, kBatchedGemmLowering, shape_string(w.shape), groups));
  }
  if (fits_gemm) {
    r.derived_attrs.emplace(kConvLoweringAttr, std::string(kBatchedGemmLowering));
    r.workspace_bytes = batched_gemm_workspace_bytes(
        pointwise_gemm(x.shape, w.shape, r.outputs.front().shape, groups), dtype_size_bytes(x.dtype),
        "op '" + std::string(ctx.op_name) + "': workspace");
  }
  return r;
}

// dX and dW each cost the forward's MACs; db sums the output gradient.
int64_t conv2d_backward_flops(const BackwardContext& ctx) {
  const Tensor& w = *ctx.inputs[1];
  const Tensor& y = *ctx.outputs[0];
  const int64_t outputs = element_count(y.shape);
  const int64_t macs = support::checked_product({outputs, w.shape[1], w.shape[2], w.shape[3]},
                                                ctx.forward.name + " backward FLOPs");
  int64_t flops = 0;
  if (ctx.needs_grad[0]) flops += 2 * macs;
  if (ctx.needs_grad[1]) flops += 2 * macs;
  if (ctx.needs_grad.size() > 2 && ctx.needs_grad[2]) flops += outputs;
  return flops;
}

struct PoolWindow {
  std::vector<int64_t> kernel, stride, padding;
  bool ceil_mode = false;
  int64_t out_h = 0, out_w = 0;
};

// One output dim of a pooling window, as ATen's pooling_output_shape (dilation 1): with ceil_mode the
// last window may start past the end of the input, but not past its padding. `padded` is
// in + 2 * padding, at least kernel, summed checked by the caller; nothing here can overflow.
int64_t pooled_size(int64_t in, int64_t padded, int64_t kernel, int64_t stride, int64_t padding,
                    bool ceil_mode) {
  const int64_t span = padded - kernel;
  if (!ceil_mode) return span / stride + 1;
  const auto ceil_div = [](int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); };
  const int64_t out = ceil_div(span, stride) + 1;
  return out - 1 >= ceil_div(in + padding, stride) ? out - 1 : out;  // (out-1)*stride >= in + padding
}

// attrs kernel, stride, padding ([2] each; stride defaults to kernel, padding to 0, as nn.MaxPool2d
// and nn.AvgPool2d), ceil_mode (0 or 1, default 0).
PoolWindow pool_window(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  expect_rank(ctx, 0, 4);
  const Tensor& x = *ctx.inputs[0];
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  PoolWindow p;
  p.kernel = attr_ints(ctx.attrs, "kernel", where);
  p.stride = attr_ints_or(ctx.attrs, "stride", p.kernel, where);
  p.padding = attr_ints_or(ctx.attrs, "padding", {0, 0}, where);
  const int64_t ceil_mode = attr_int_or(ctx.attrs, "ceil_mode", 0, where);
  if (p.kernel.size() != 2 || p.stride.size() != 2 || p.padding.size() != 2 || p.kernel[0] < 1 ||
      p.kernel[1] < 1 || p.stride[0] < 1 || p.stride[1] < 1 || p.padding[0] < 0 || p.padding[1] < 0 ||
      2 * p.padding[0] > p.kernel[0] || 2 * p.padding[1] > p.kernel[1]) {
    infer_error(ctx,
                "attributes 'kernel', 'stride', 'padding' need 2 values each, kernel and stride >= 1 and "
                "0 <= padding <= kernel / 2");
  }
  if (ceil_mode != 0 && ceil_mode != 1) {
    infer_error(ctx, fmt::format("attribute 'ceil_mode' = {}, expected 0 or 1", ceil_mode));
  }
  p.ceil_mode = ceil_mode == 1;
  const int64_t padded_h =
      support::checked_sum(x.shape[2], support::checked_product({2, p.padding[0]}, where), where);
  const int64_t padded_w =
      support::checked_sum(x.shape[3], support::checked_product({2, p.padding[1]}, where), where);
  if (padded_h < p.kernel[0] || padded_w < p.kernel[1]) {
    infer_error(ctx, fmt::format("input 0 '{}' of shape {} is too small for kernel {}", x.name,
                                 shape_string(x.shape), shape_string(p.kernel)));
  }
  p.out_h = pooled_size(x.shape[2], padded_h, p.kernel[0], p.stride[0], p.padding[0], p.ceil_mode);
  p.out_w = pooled_size(x.shape[3], padded_w, p.kernel[1], p.stride[1], p.padding[1], p.ceil_mode);
  return p;
}

// max_pool2d_with_indices (dilation 1). Outputs y and the argmax indices (int64, same shape). Width k
// ("channel"): pooling is per channel, so [B,k*C,H,W] needs nothing more.
InferResult infer_max_pool2d(const InferContext& ctx) {
  const PoolWindow p = pool_window(ctx);
  const Tensor& x = *ctx.inputs[0];
  std::vector<int64_t> out{x.shape[0], x.shape[1], p.out_h, p.out_w};
  InferResult r;
  // one comparison per window element
  r.flops = support::checked_product({element_count(out), p.kernel[0], p.kernel[1]},
                                     "op '" + std::string(ctx.op_name) + "': FLOPs");
  r.outputs.push_back({"", out, x.dtype, TensorRole::activation});
  r.outputs.push_back({".indices", out, DType::i64, TensorRole::activation});
  return r;
}

// avg_pool2d. attr count_include_pad (0 or 1, default 1 as nn.AvgPool2d) changes only the divisor.
// Width k ("channel"): per channel, as max pooling.
InferResult infer_avg_pool2d(const InferContext& ctx) {
  const PoolWindow p = pool_window(ctx);
  const std::string where = "op '" + std::string(ctx.op_name) + "'";
  const int64_t include_pad = attr_int_or(ctx.attrs, "count_include_pad", 1, where);
  if (include_pad != 0 && include_pad != 1) {
    infer_error(ctx, fmt::format("attribute 'count_include_pad' = {}, expected 0 or 1", include_pad));
  }
  const Tensor& x = *ctx.inputs[0];
  std::vector<int64_t> out{x.shape[0], x.shape[1], p.out_h, p.out_w};
  InferResult r;
  // one add per window element, one divide per output
  const int64_t outputs = element_count(out);
  r.flops = support::checked_sum(support::checked_product({outputs, p.kernel[0], p.kernel[1]}, where),
                                 outputs, where + ": FLOPs");
  r.outputs.push_back({"", std::move(out), x.dtype, TensorRole::activation});
  return r;
}

// Each output gradient, divided, is added to every input of its window.
int64_t avg_pool2d_backward_flops(const BackwardContext& ctx) {
  const auto& kernel = attr_ints(ctx.forward.attrs, "kernel", "op '" + ctx.forward.name + "'");
  return support::checked_product({element_count(ctx.outputs[0]->shape), kernel.at(0), kernel.at(1)},
                                  ctx.forward.name + " backward FLOPs");
}

// The output gradient is scattered back through the indices: one add per output element.
int64_t max_pool2d_backward_flops(const BackwardContext& ctx) {
  return element_count(ctx.outputs[0]->shape);
}

// adaptive_avg_pool2d to 1x1: [B,C,H,W] -> [B,C,1,1]. Width k ("channel"): per channel as well.
InferResult infer_adaptive_avg_pool2d(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  expect_rank(ctx, 0, 4);
  const Tensor& x = *ctx.inputs[0];
  const std::vector<int64_t> out{x.shape[0], x.shape[1], 1, 1};
  InferResult r;
  r.flops = element_count(x.shape) + element_count(out);  // sum every element, divide each mean
  r.outputs.push_back({"", out, x.dtype, TensorRole::activation});
  return r;
}

// Each input element receives its channel's gradient divided by H*W.
int64_t adaptive_avg_pool2d_backward_flops(const BackwardContext& ctx) {
  return element_count(ctx.inputs[0]->shape);
}

// flatten(1) of [B,C,H,W] -> [B,C*H*W] (a pooled [B,C,1,1] in most models; VGG and AlexNet flatten
// their 7x7 and 6x6 maps). Width k: [B,k*C,H,W] -> [k,B,C*H*W], the channel layout of the
// convolutional trunk turned into the stack layout of the classifier (a transposing copy), so the
// linear after it is one batched matmul.
InferResult infer_flatten(const InferContext& ctx) {
  expect_inputs(ctx, 1, 1);
  expect_rank(ctx, 0, 4);
  const Tensor& x = *ctx.inputs[0];
  if (x.shape[1] % ctx.width != 0) {
    infer_error(ctx, fmt::format("input 0 '{}' has shape {}, expected [B,{}*C,H,W]", x.name,
                                 shape_string(x.shape), ctx.width));
  }
  std::vector<int64_t> out{x.shape[0],
                           support::checked_product({x.shape[1] / ctx.width, x.shape[2], x.shape[3]},
                                                    "op '" + std::string(ctx.op_name) + "': output shape")};
  if (ctx.width > 1) out.insert(out.begin(), ctx.width);
  InferResult r;
  r.outputs.push_back({"", std::move(out), x.dtype, TensorRole::activation});
  return r;
}

// The batched GEMMs' temporaries (ir/conv_lowering.hpp) where the forward runs as one; dX's and dW's
// are the same size and held one after the other.
int64_t conv2d_backward_workspace(const BackwardContext& ctx) {
  if (!conv_runs_as_batched_gemm(ctx.forward)) return 0;
  if (!ctx.needs_grad[0] && !ctx.needs_grad[1]) return 0;
  const Tensor& x = *ctx.inputs[0];
  return batched_gemm_workspace_bytes(
      pointwise_gemm(x.shape, ctx.inputs[1]->shape, ctx.outputs[0]->shape, conv_groups(ctx.forward)),
      dtype_size_bytes(x.dtype), "op '" + ctx.forward.name + "': its backward's workspace");
}

}  // namespace

void register_conv_kinds(KindRulesTable& table) {
  // derivatives.yaml (convolution): saves input and weight.
  table[static_cast<size_t>(OpKind::conv2d)] = {
      .infer = infer_conv2d,
      .backward_kind = OpKind::conv2d_backward,
      .saved = {{SavedRef::From::input, 0}, {SavedRef::From::input, 1}},
      .backward_flops = conv2d_backward_flops,
      .backward_workspace = conv2d_backward_workspace,
  };

  // derivatives.yaml (max_pool2d_with_indices): saves self and result1 (indices).
  KindRules max_pool;
  max_pool.infer = infer_max_pool2d;
  max_pool.backward_kind = OpKind::max_pool2d_backward;
  max_pool.saved = {{SavedRef::From::input, 0}, {SavedRef::From::output, 1}};
  max_pool.backward_flops = max_pool2d_backward_flops;
  table[static_cast<size_t>(OpKind::max_pool2d)] = max_pool;

  // derivatives.yaml (_adaptive_avg_pool2d): saves self.
  KindRules avg_pool;
  avg_pool.infer = infer_adaptive_avg_pool2d;
  avg_pool.backward_kind = OpKind::adaptive_avg_pool2d_backward;
  avg_pool.saved = {{SavedRef::From::input, 0}};
  avg_pool.backward_flops = adaptive_avg_pool2d_backward_flops;
  table[static_cast<size_t>(OpKind::adaptive_avg_pool2d)] = avg_pool;

  // derivatives.yaml (avg_pool2d): saves self.
  KindRules avg;
  avg.infer = infer_avg_pool2d;
  avg.backward_kind = OpKind::avg_pool2d_backward;
  avg.saved = {{SavedRef::From::input, 0}};
  avg.backward_flops = avg_pool2d_backward_flops;
  table[static_cast<size_t>(OpKind::avg_pool2d)] = avg;

  // flatten is a view (a reshape of the gradient back); it saves nothing.
  KindRules flatten;
  flatten.infer = infer_flatten;
  flatten.backward_kind = OpKind::flatten_backward;
  flatten.saved = {};
  flatten.backward_flops = no_backward_flops;
  table[static_cast<size_t>(OpKind::flatten)] = flatten;
}

}  // namespace mutwo::ir
