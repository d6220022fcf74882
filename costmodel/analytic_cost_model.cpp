#include "costmodel/analytic_cost_model.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "ir/op_category.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

using ir::DType;
using ir::KindCategory;

namespace {

constexpr double kKi = 1024.0;
constexpr double kMi = 1024.0 * 1024.0;

CategoryEfficiency efficiency(double compute, double compute_half_flops_per_sm, double memory,
                              double memory_half_bytes_per_sm) {
  CategoryEfficiency e;
  e.compute_efficiency = compute;
  e.compute_half_flops_per_sm = compute_half_flops_per_sm;
  e.memory_efficiency = memory;
  e.memory_half_bytes_per_sm = memory_half_bytes_per_sm;
  return e;
}

// (work + half) / (rate * eff_max) == work / (rate * eff(work)); 0 work costs nothing.
double saturating_term_ns(double work, double rate, double eff_max, double half) {
  if (work <= 0) return 0;
  return (work + half) / (rate * eff_max);
}

}  // namespace

CategoryEfficiencies default_category_efficiencies() {
  CategoryEfficiencies e{};
  // The FLOP term of bandwidth-bound categories runs on CUDA cores and rarely binds: 50% of peak and
  // a small ramp (64 KiFLOP per SM) keep it from ever dominating a kernel that streams its bytes.
  const double small_flops = 64 * kKi;
  // matmul: cuBLAS reaches 80-90% of dense tensor peak on large square GEMMs (A100 bf16 4096^3
  // ~250-280 of 312 TFLOPS); 0.80 allows for training's thinner shapes (attention products with
  // head_dim 64, small batch dims). Half saturation at one 128x128 output tile with K = 128 per SM
  // (2*128^3 = 4 MiFLOP): with fewer tiles than SMs, SMs idle. A100 bf16: 108 * 4 MiFLOP = 453 MFLOP,
  // a 1.8 µs ramp; a 1024^3 GEMM (2.15 GFLOP) gets 0.8 * 2.15 / 2.6 = 66% of peak.
  e[static_cast<size_t>(KindCategory::matmul)] = efficiency(0.80, 4 * kMi, 0.80, 16 * kKi);
  // conv: cuDNN implicit-GEMM convolutions trail GEMMs (gathered operands, few channels in early
  // layers, weight-gradient reductions): 0.70, and twice the GEMM tile of work to saturate.
  e[static_cast<size_t>(KindCategory::conv)] = efficiency(0.70, 8 * kMi, 0.75, 16 * kKi);
  // norm: training-mode batch/layer norm reads its input twice (statistics, then normalise) while
  // bytes_read counts it once, plus a reduction per row/channel: ~70% of bandwidth effective.
  e[static_cast<size_t>(KindCategory::norm)] = efficiency(0.50, small_flops, 0.70, 32 * kKi);
  // elementwise: vectorised pointwise kernels stream at 85-90% of HBM peak (STREAM-like copy on an
  // A100 runs at ~1.3-1.4 of 1.555 TB/s). Half saturation at 16 KiB per SM (A100: 1.7 MiB, a 1.3 µs
  // ramp), matching the ~1-2 µs that the smallest kernels take on the GPU.
  e[static_cast<size_t>(KindCategory::elementwise)] = efficiency(0.50, small_flops, 0.85, 16 * kKi);
  // reduction (softmax, pooling, losses): several passes over a row and cross-thread reductions.
  e[static_cast<size_t>(KindCategory::reduction)] = efficiency(0.50, small_flops, 0.65, 32 * kKi);
  // data movement (embedding gathers, concat, token select): irregular or strided accesses use part
  // of each 32-byte sector.
  e[static_cast<size_t>(KindCategory::data_movement)] = efficiency(0.50, small_flops, 0.60, 16 * kKi);
  // optimizer: PyTorch's foreach/fused Adam and SGD stream param, grad and states contiguously.
  e[static_cast<size_t>(KindCategory::optimizer)] = efficiency(0.50, small_flops, 0.80, 16 * kKi);
  // opaque: unknown semantics; mid-range figures (opaque ops normally carry bytes only).
  e[static_cast<size_t>(KindCategory::opaque)] = efficiency(0.50, small_flops, 0.60, 16 * kKi);
  return e;
}

AnalyticCostModel::AnalyticCostModel(DeviceSpec device, AnalyticOptions options)
    : device_(std::move(device)), options_(std::move(options)) {
  validate_device(device_);
  for (size_t i = 0; i < kKindCategoryCount; ++i) {
    const CategoryEfficiency& e = options_.efficiency[i];
    const std::string_view category = ir::category_name(static_cast<KindCategory>(i));
    auto check_fraction = [&](std::string_view field, double v) {
      if (!(v > 0 && v <= 1)) {
        throw Error(
            fmt::format("analytic cost model: category '{}': {} = {} must be in (0, 1]", category, field, v));
      }
    };
    auto check_half = [&](std::string_view field, double v) {
      if (!(std::isfinite(v) && v >= 0)) {
        throw Error(
            fmt::format("analytic cost model: category '{}': {} = {} must be >= 0", category, field, v));
      }
    };
    check_fraction("compute_efficiency", e.compute_efficiency);
    check_fraction("memory_efficiency", e.memory_efficiency);
    check_half("compute_half_flops_per_sm", e.compute_half_flops_per_sm);
    check_half("memory_half_bytes_per_sm", e.memory_half_bytes_per_sm);
  }
}

double AnalyticCostModel::peak_flops_per_ns(KindCategory category, DType dtype,
                                            ir::Precision precision) const {
  const bool tensor_category = category == KindCategory::matmul || category == KindCategory::conv;
  const bool tf32_mode = ir::allows_tf32_matmul(precision);
  switch (dtype) {
    case DType::f16:  // no slower than FP32: fp16 GEMMs accumulate in FP32 (costmodel/wave_kernel.hpp)
      return tensor_category ? std::max(device_.half_flops_per_ns, device_.fp32_flops_per_ns)
                             : device_.fp32_flops_per_ns;
    case DType::bf16:
      return tensor_category && has_bf16_tensor_cores(device_) ? device_.half_flops_per_ns
                                                               : device_.fp32_flops_per_ns;
    case DType::f64:
      return device_.fp64_flops_per_ns;
    default: {
      const bool tf32 = (category == KindCategory::conv && (options_.allow_tf32_conv || tf32_mode)) ||
                        (category == KindCategory::matmul && (options_.allow_tf32_matmul || tf32_mode));
      return tf32 && device_.tf32_flops_per_ns > 0 ? device_.tf32_flops_per_ns : device_.fp32_flops_per_ns;
    }
  }
}

OpCostBreakdown AnalyticCostModel::breakdown(const ir::Graph& graph, const ir::Op& op) const {
  const KindCategory category = ir::op_category(op);
  if (graph.precision != ir::Precision::fp32) check_precision_supported(device_, graph.precision);
  if (ir::is_view_op(op)) return OpCostBreakdown{};  // no kernel
  return kernel_breakdown(category, peak_flops_per_ns(category, op_math_dtype(graph, op), graph.precision),
                          static_cast<double>(op.flops),
                          static_cast<double>(op.bytes_read) + static_cast<double>(op.bytes_written));
}

OpCostBreakdown AnalyticCostModel::kernel_breakdown(KindCategory category, double peak_flops_per_ns,
                                                    double flops, double bytes) const {
  const CategoryEfficiency& e = options_.efficiency[static_cast<size_t>(category)];
  const double sms = static_cast<double>(device_.sm_count);
  OpCostBreakdown b;
  b.peak_flops_per_ns = peak_flops_per_ns;
  b.compute_ns =
      saturating_term_ns(flops, peak_flops_per_ns, e.compute_efficiency, sms * e.compute_half_flops_per_sm);
  b.memory_ns = saturating_term_ns(bytes, device_.hbm_bytes_per_ns, e.memory_efficiency,
                                   sms * e.memory_half_bytes_per_sm);
  b.memory_bound = b.memory_ns > b.compute_ns;
  b.launch_ns = device_.launch_overhead_ns;
  b.duration_ns = b.launch_ns + whole_price_ns(std::max(b.compute_ns, b.memory_ns), "analytic");
  return b;
}

int64_t AnalyticCostModel::op_duration_ns(const ir::Graph& graph, const ir::Op& op) const {
  return breakdown(graph, op).duration_ns;
}

bool has_bf16_tensor_cores(const DeviceSpec& device) {
  return device.tf32_flops_per_ns > 0;
}

void check_precision_supported(const DeviceSpec& device, ir::Precision precision) {
  if (precision == ir::Precision::amp_bf16 && !has_bf16_tensor_cores(device)) {
    throw Error(fmt::format(
        "precision amp-bf16 on GPU '{}': torch.autocast refuses bfloat16 on a GPU without bf16 support "
        "(compute capability < 8.0: \"Current CUDA Device does not support bfloat16. Please switch dtype "
        "to float16.\"); use amp-fp16, or bf16 (a bf16 model runs there, its matmuls on CUDA cores)",
        device.name));
  }
}

DType op_math_dtype(const ir::Graph& graph, const ir::Op& op) {
  for (ir::TensorId id : op.outputs) {
    const DType d = graph.tensor(id).dtype;
    if (ir::is_floating(d)) return d;
  }
  for (ir::TensorId id : op.inputs) {
    const DType d = graph.tensor(id).dtype;
    if (ir::is_floating(d)) return d;
  }
  return DType::f32;
}

}  // namespace mutwo::costmodel
