#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/attention_passes.hpp"
#include "costmodel/calibration_csv.hpp"
#include "costmodel/dropout_mask.hpp"
#include "costmodel/norm_kernels.hpp"
#include "costmodel/pointwise_conv_kernels.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ir/kernel_precision.hpp"
#include "ir/optimizer_kernels.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

using ir::KindCategory;
using ir::OpKind;

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t op_bytes(const ir::Op& op) {
  return op.bytes_read + op.bytes_written;
}

// m x n output, FLOPs and bytes given; k from the FLOPs.
OpKernel gemm_like(std::string kernel, int64_t m, int64_t n, double flops, double bytes) {
  OpKernel k;
  k.category = is_gemm_kernel(kernel) ? KindCategory::matmul : KindCategory::conv;
  k.kernel = std::move(kernel);
  k.sample.m = std::max<int64_t>(1, m);
  k.sample.n = std::max<int64_t>(1, n);
  k.sample.k = std::max<int64_t>(
      1, std::llround(flops / (2.0 * static_cast<double>(k.sample.m) * static_cast<double>(k.sample.n))));
  k.sample.flops = flops;
  k.sample.bytes = bytes;
  return k;
}

// The shape class of a conv2d op (the forward op for a conv2d_backward): its weight [K, C/g, R, S]
// and its attributes, groups per model (fusion multiplies them by the width, not the class).
std::string conv_op_variant(const ir::Graph& graph, const ir::Op& conv) {
  const auto& w = graph.tensor(conv.inputs[1]).shape;
  if (w.size() != 4) return std::string(kGeneralConvVariant);
  const auto stride = ir::attr_ints_or(conv.attrs, "stride", {1, 1}, conv.name);
  const auto dilation = ir::attr_ints_or(conv.attrs, "dilation", {1, 1}, conv.name);
  const int64_t groups = ir::attr_int_or(conv.attrs, "groups", 1, conv.name);
  if (stride.size() != 2 || dilation.size() != 2) return std::string(kGeneralConvVariant);
  return std::string(conv_variant(w[2], w[3], stride[0], stride[1], dilation[0], dilation[1], groups));
}

// How many times a convolution's kernel runs one after another: once per fused model (the op's
// width; the fused op's groups are its models' groups times the width, ir::conv_groups), except a
// depthwise convolution (one input channel per group, weight [K, 1, R, S]), which ATen runs as one
// kernel over every channel. A convolution recorded to run as a batched GEMM never gets here
// (pointwise_conv_kernels.hpp).
int64_t conv_launches(const ir::Graph& graph, const ir::Op& conv) {
  const auto& w = graph.tensor(conv.inputs[1]).shape;
  if (w.size() != 4 || w[1] <= 1) return 1;
  return std::max<int64_t>(1, conv.width);
}

// The op's kernels but for the attention products' element-wise passes.
std::vector<OpKernel> main_kernels(const ir::Graph& graph, const ir::Op& op) {
  std::vector<OpKernel> out;
  const KindCategory category = ir::kind_category(op.kind);
  const double flops = static_cast<double>(op.flops);
  const double bytes = static_cast<double>(op_bytes(op));
  if (category == KindCategory::matmul) {
    if (op.phase == ir::Phase::forward) {
      if (op.outputs.empty()) return out;
      const auto& shape = graph.tensor(op.outputs.front()).shape;
      if (shape.empty()) return out;
      out.push_back(gemm_like("gemm", elements(shape) / shape.back(), shape.back(), flops, bytes));
      return out;
    }
    // The GEMMs are the gradients of the forward's operands (its first two inputs); a bias gradient
    // is a reduction, even when fusion gives it a second dimension ([k, out] for k models).
    const ir::Op* forward =
        op.forward_of == ir::kNoId ? nullptr : &graph.ops[static_cast<size_t>(op.forward_of)];
    const auto operand_gradient = [&](const std::vector<int64_t>& shape) {
      if (forward == nullptr) return true;
      for (size_t i = 0; i < std::min<size_t>(2, forward->inputs.size()); ++i) {
        if (graph.tensor(forward->inputs[i]).shape == shape) return true;
      }
      return false;
    };
    std::vector<const std::vector<int64_t>*> grads;
    for (ir::TensorId id : op.outputs) {
      const auto& shape = graph.tensor(id).shape;
      if (shape.size() >= 2 && operand_gradient(shape)) grads.push_back(&shape);
    }
    const double share = grads.empty() ? 0 : 1.0 / static_cast<double>(grads.size());
    for (const auto* shape : grads) {
      out.push_back(
          gemm_like("gemm", elements(*shape) / shape->back(), shape->back(), flops * share, bytes * share));
    }
    return out;
  }
  if (std::vector<OpKernel> gemm = pointwise_conv_kernels(graph, op); !gemm.empty()) return gemm;
  if (op.kind == OpKind::conv2d) {
    if (op.outputs.empty()) return out;
    const auto& y = graph.tensor(op.outputs.front()).shape;  // [N, K, P, Q]
    if (y.size() != 4 || op.inputs.size() < 2) return out;
    const int64_t launches = conv_launches(graph, op);
    const double per_launch = 1.0 / static_cast<double>(launches);
    out.push_back(gemm_like("conv2d_forward", y[0] * y[2] * y[3], y[1] / launches, flops * per_launch,
                            bytes * per_launch));
    out.back().variant = conv_op_variant(graph, op);
    out.back().launches = launches;
    if (out.back().variant == kConv3x3s1Variant)
      out.back().sample.winograd_tiles = winograd_tiles(y[0], y[2], y[3]);
    return out;
  }
  if (op.kind == OpKind::conv2d_backward) {
    if (op.forward_of == ir::kNoId) return out;
    const ir::Op& forward = graph.ops[static_cast<size_t>(op.forward_of)];
    if (forward.inputs.size() < 2) return out;
    const auto& x = graph.tensor(forward.inputs[0]).shape;  // [N, C, H, W]
    const auto& w = graph.tensor(forward.inputs[1]).shape;  // [K, C/g, R, S]
    const int64_t launches = conv_launches(graph, forward);
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> kernels;
    for (ir::TensorId id : op.outputs) {
      const auto& shape = graph.tensor(id).shape;
      if (shape.size() != 4) continue;
      if (shape == x) {
        kernels.push_back({"conv2d_backward_data", {x[0] * x[2] * x[3], x[1] / launches}});
      } else if (shape == w) {
        kernels.push_back({"conv2d_backward_filter", {w[0] / launches, w[1] * w[2] * w[3]}});
      }
    }
    const double share =
        kernels.empty() ? 0 : 1.0 / static_cast<double>(kernels.size()) / static_cast<double>(launches);
    const std::string variant = conv_op_variant(graph, forward);
    const std::vector<int64_t>* y =
        forward.outputs.empty() ? nullptr : &graph.tensor(forward.outputs.front()).shape;  // [N, K, P, Q]
    for (const auto& [name, mn] : kernels) {
      out.push_back(gemm_like(name, mn.first, mn.second, flops * share, bytes * share));
      out.back().variant = variant;
      out.back().launches = launches;
      // Winograd's tiles cover the image the pass computes: the input's for the data gradient.
      if (variant != kConv3x3s1Variant) continue;
      if (name == "conv2d_backward_data") {
        out.back().sample.winograd_tiles = winograd_tiles(x[0], x[2], x[3]);
      } else if (y != nullptr && y->size() == 4) {
        out.back().sample.winograd_tiles = winograd_tiles((*y)[0], (*y)[2], (*y)[3]);
      }
    }
    return out;
  }
  if (std::vector<OpKernel> fused = norm_kernels(graph, op); !fused.empty()) return fused;
  if (ir::is_optimizer_update(op.kind) && !op.inputs.empty()) {
    // torch.optim's kernels over the weight (ir/optimizer_kernels.hpp), each an equal share.
    const ir::OptimizerKernels o = ir::optimizer_kernels(op);
    const ir::Tensor& weight = graph.tensor(op.inputs.front());
    OpKernel k;
    k.category = category;
    k.kernel = std::string(ir::kind_name(op.kind));
    k.sample.m = std::max<int64_t>(1, elements(weight.shape));
    k.sample.flops = flops / static_cast<double>(o.kernels);
    k.sample.bytes =
        static_cast<double>(o.passes) * static_cast<double>(weight.bytes) / static_cast<double>(o.kernels);
    k.launches = o.kernels;
    out.push_back(std::move(k));
    return out;
  }
  int64_t outputs = 0;
  for (ir::TensorId id : op.outputs) outputs += elements(graph.tensor(id).shape);
  OpKernel k;
  k.category = category;
  k.kernel = std::string(ir::kind_name(op.kind));
  k.sample.m = std::max<int64_t>(1, outputs);
  k.sample.flops = flops;
  k.sample.bytes = bytes;
  // A softmax's row, its last dim: the row length picks PyTorch's kernel (wave_kernel.hpp).
  if ((op.kind == OpKind::softmax || op.kind == OpKind::softmax_backward) && !op.inputs.empty()) {
    const auto& shape = graph.tensor(op.inputs.front()).shape;
    if (!shape.empty()) k.sample.row_elements = shape.back();
  }
  out.push_back(std::move(k));
  return out;
}

}  // namespace

std::vector<OpKernel> op_kernels(const ir::Graph& graph, const ir::Op& op) {
  std::vector<OpKernel> out = main_kernels(graph, op);
  if (out.empty()) return out;
  for (OpKernel& k : attention_passes(graph, op)) out.push_back(std::move(k));
  for (OpKernel& k : batchnorm_statistics(graph, op)) out.push_back(std::move(k));
  for (OpKernel& k : dropout_mask_draws(graph, op)) out.push_back(std::move(k));
  return out;
}

OpKernel pass_kernel(std::string kernel, KindCategory category, double passes, const ir::Tensor& t,
                     double flops) {
  OpKernel k;
  k.kernel = std::move(kernel);
  k.category = category;
  k.sample.m = std::max<int64_t>(1, elements(t.shape));
  k.sample.bytes = passes * static_cast<double>(t.bytes);
  k.sample.flops = flops;
  return k;
}

std::string op_precision(const ir::Graph& graph, const ir::Op& op, const DeviceSpec& device,
                         const AnalyticOptions& options) {
  const KindCategory category = ir::kind_category(op.kind);
  switch (op_math_dtype(graph, op)) {
    case ir::DType::f16:
      return "fp16";
    case ir::DType::bf16:
      return "bf16";
    case ir::DType::f32: {
      // The tf32 precision mode sets both of PyTorch's flags (ir/precision.hpp).
      const bool tf32_mode = ir::allows_tf32_matmul(graph.precision);
      const bool tf32 = (category == KindCategory::matmul && (options.allow_tf32_matmul || tf32_mode)) ||
                        (category == KindCategory::conv && (options.allow_tf32_conv || tf32_mode));
      return tf32 && device.tf32_flops_per_ns > 0 ? "tf32" : "fp32";
    }
    default:
      return "";
  }
}

namespace {
std::shared_ptr<const WaveModel> or_shipped(std::shared_ptr<const WaveModel> waves) {
  if (waves) return waves;
  return std::shared_ptr<const WaveModel>(&shipped_wave_model(), [](const WaveModel*) {});
}
}  // namespace

CalibratedCostModel::CalibratedCostModel(DeviceSpec device, CalibrationProfile profile,
                                         AnalyticOptions options, std::shared_ptr<const WaveModel> waves)
    : profile_(std::move(profile)),
      fallback_(device, options),
      waves_(std::move(device), or_shipped(std::move(waves)), std::move(options)) {
  if (profile_.sm_count != fallback_.device().sm_count) {
    throw Error(fmt::format("calibration profile of '{}' ({} SMs) cannot price device '{}' ({} SMs)",
                            profile_.device, profile_.sm_count, fallback_.device().name,
                            fallback_.device().sm_count));
  }
}

const KernelGroupFit* CalibratedCostModel::group(const OpKernel& kernel, const std::string& precision) const {
  if (const KernelGroupFit* g = profile_.pricing(kernel.kernel, kernel.variant, precision)) return g;
  // No bf16 fit: bf16 is priced as fp16, at the same half-precision peak.
  if (ir::kernel_precision(precision).id == ir::KernelPrecision::bf16)
    return profile_.pricing(kernel.kernel, kernel.variant,
                            ir::kernel_precision(ir::KernelPrecision::fp16).name);
  return nullptr;
}

std::optional<int64_t> CalibratedCostModel::calibrated_duration_ns(const ir::Graph& graph, const ir::Op& op,
                                                                   bool* by_waves) const {
  const std::string precision = op_precision(graph, op, fallback_.device(), fallback_.options());
  if (precision.empty()) return std::nullopt;
  const std::vector<OpKernel> kernels = op_kernels(graph, op);
  if (kernels.empty()) return std::nullopt;
  // A group named by the op's kind was fitted on whole-op times (bench-ops, profiler traces:
  // bench_rows.hpp, kineto_calibration.hpp), its helper passes (batch norm's statistics) inside.
  const bool whole_op = std::ranges::any_of(kernels, [&](const OpKernel& k) {
    return !k.helper && k.kernel == ir::kind_name(op.kind) && group(k, precision) != nullptr;
  });
  double total = 0;
  for (const OpKernel& k : kernels) {
    if (whole_op && k.helper) continue;
    if (const KernelGroupFit* g = group(k, precision)) {
      total += static_cast<double>(k.launches) * predict_kernel_ns(g->model, k.sample, profile_.sm_count);
    } else if (const std::optional<double> t = waves_.kernel_ns(k, precision)) {
      total += *t;  // a kernel this GPU's profile has not timed: the cross-GPU wave model's price
      if (by_waves) *by_waves = true;
    } else {
      return std::nullopt;
    }
  }
  return whole_price_ns(total, name(), &op);
}

int64_t CalibratedCostModel::op_duration_ns(const ir::Graph& graph, const ir::Op& op) const {
  if (const std::optional<int64_t> t = calibrated_duration_ns(graph, op)) return *t;
  return fallback_.op_duration_ns(graph, op);
}

std::string CalibratedCostModel::describe(const ir::Graph& graph) const {
  int64_t covered = 0, by_waves = 0;
  for (const ir::Op& op : graph.ops) {
    bool waves = false;
    if (calibrated_duration_ns(graph, op, &waves)) ++(waves ? by_waves : covered);
  }
  int64_t kernels = 0;
  for (const KernelGroupFit& g : profile_.groups) kernels += g.rows;
  const int64_t ops = static_cast<int64_t>(graph.ops.size());
  return fmt::format(
      "calibrated ({} profile of {}, {} kernels: {} of {} ops{}{})", profile_.device, profile_.fitted_on,
      kernels, covered, ops,
      by_waves > 0 ? fmt::format(", {} with kernels the profile lacks priced by waves", by_waves) : "",
      covered + by_waves < ops ? "; rest analytic" : "");
}

}  // namespace mutwo::costmodel
