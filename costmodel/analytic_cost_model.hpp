#pragma once
// The analytic op cost source: a roofline on the catalog's peaks with per-category efficiencies
// that rise with the work per kernel, plus a launch overhead.
//
// Model (one kernel per op; Williams, Waterman, Patterson, "Roofline", CACM 2009):
//
//   duration_ns = launch_overhead_ns + ceil(max(compute_ns, memory_ns))
//   compute_ns  = F / (P(category, dtype) * eff_c(F))       F = op.flops
//   memory_ns   = B / (H * eff_m(B))                        B = op.bytes_read + op.bytes_written
//
// with P the dense peak of the op's math mode, H the HBM bandwidth, and a saturating efficiency
//
//   eff(w) = eff_max * w / (w + w_half),   w_half = sm_count * half_per_sm(category)
//
// so that  w / (R * eff(w)) = (w + w_half) / (R * eff_max),  and a term of 0 work costs 0 ns.
// Why: a kernel with little work cannot fill every SM (wave quantisation, pipeline fill, tail), so
// small kernels reach a small fraction of peak; w_half is the work at which a kernel reaches half
// of eff_max, taken per SM because that is what must be filled. In effect each kernel pays a ramp of
// w_half / (R * eff_max) ns on top of its streaming time, which is what makes horizontal fusion pay
// off: a width-k fused op (k * w of work, one kernel) costs (k w + w_half) / (R eff_max) + launch,
// less than k separate ops, k (w + w_half) / (R eff_max) + k launch, and more than one of them.
//
// Math mode P(category, dtype, precision), dtype = the op's first floating output (else input)
// dtype, precision = the graph's precision mode (ir/precision.hpp):
//   f16:      matmul and conv run on tensor cores (half_flops_per_ns), other categories on CUDA cores
//             (fp32 rate; they are bandwidth-bound, so the exact vector rate hardly matters);
//   bf16:     as f16 on a GPU with bf16 tensor cores; before Ampere (no TF32 either: V100, T4, P100)
//             cuBLAS/cuDNN run bf16 matmul and conv on CUDA cores, priced at the FP32 rate;
//   f32:      conv uses TF32 tensor cores when allow_tf32_conv (PyTorch's
//             torch.backends.cudnn.allow_tf32, default True) and the GPU has them; matmul likewise
//             with allow_tf32_matmul (torch.backends.cuda.matmul.allow_tf32, default False since
//             PyTorch 1.12) or under the tf32 precision mode, which sets both; otherwise FP32 CUDA
//             cores;
//   f64:      FP64 CUDA cores.
// A graph in amp-bf16 on a GPU without bf16 support is refused, as torch.autocast refuses it
// (check_precision_supported).
// Opaque ops carry no FLOPs: they are priced by their bytes, or at the launch overhead alone.
// Per-category parameters and their reasoning: default_category_efficiencies() in the .cpp.
// The calibrated source (later) keeps this form and fits the parameters to measured traces.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "costmodel/op_cost_model.hpp"
#include "ir/op_kind.hpp"
#include "ir/precision.hpp"

namespace mutwo::costmodel {

inline constexpr size_t kKindCategoryCount = static_cast<size_t>(ir::KindCategory::opaque) + 1;

// Efficiency parameters of one KindCategory.
struct CategoryEfficiency {
  double compute_efficiency = 1;         // eff_max of the FLOP term, fraction of peak, in (0, 1]
  double compute_half_flops_per_sm = 0;  // FLOPs per SM at which the FLOP term reaches eff_max / 2
  double memory_efficiency = 1;          // eff_max of the byte term, fraction of HBM bandwidth
  double memory_half_bytes_per_sm = 0;   // bytes per SM at which the byte term reaches eff_max / 2
};

using CategoryEfficiencies = std::array<CategoryEfficiency, kKindCategoryCount>;
// The documented defaults, indexed by KindCategory.
CategoryEfficiencies default_category_efficiencies();

struct AnalyticOptions {
  bool allow_tf32_conv = true;     // torch.backends.cudnn.allow_tf32 (PyTorch default True)
  bool allow_tf32_matmul = false;  // torch.backends.cuda.matmul.allow_tf32 (default False since 1.12)
  CategoryEfficiencies efficiency = default_category_efficiencies();
};

// The terms of one op's price, for tables and tests.
struct OpCostBreakdown {
  double peak_flops_per_ns = 0;  // P of the op's math mode
  double compute_ns = 0;
  double memory_ns = 0;
  int64_t launch_ns = 0;
  int64_t duration_ns = 0;    // launch_ns + ceil(max(compute_ns, memory_ns))
  bool memory_bound = false;  // memory_ns > compute_ns
};

class AnalyticCostModel final : public OpCostModel {
 public:
  // Throws Error on an invalid device (validate_device) or an efficiency outside (0, 1] or a
  // negative half-saturation constant, naming the category and field.
  explicit AnalyticCostModel(DeviceSpec device, AnalyticOptions options = {});

  std::string_view name() const override { return "analytic"; }
  int64_t op_duration_ns(const ir::Graph& graph, const ir::Op& op) const override;
  const DeviceSpec& device() const override { return device_; }

  OpCostBreakdown breakdown(const ir::Graph& graph, const ir::Op& op) const;
  // The same model for one kernel given by its category, the peak of its math mode, its FLOPs and
  // its bytes read + written (a measured kernel's row, say): what breakdown() computes for an op.
  OpCostBreakdown kernel_breakdown(ir::KindCategory category, double peak_flops_per_ns, double flops,
                                   double bytes) const;
  // Dense peak FLOP/ns the model uses for an op of this category computing in this dtype, in a graph
  // of this precision mode (fp32: PyTorch's TF32 defaults as the options say).
  double peak_flops_per_ns(ir::KindCategory category, ir::DType dtype,
                           ir::Precision precision = ir::Precision::fp32) const;
  const AnalyticOptions& options() const { return options_; }

 private:
  DeviceSpec device_;
  AnalyticOptions options_;
};

// The dtype an op computes in: its first floating output, else its first floating input, else f32.
ir::DType op_math_dtype(const ir::Graph& graph, const ir::Op& op);

// Whether the GPU has bf16 tensor cores. NVIDIA added bf16 and TF32 tensor cores together with
// compute capability 8.0 (Ampere), which is what torch.cuda.is_bf16_supported() tests in PyTorch 1.13
// (major >= 8), so: a catalog GPU with a TF32 rate.
bool has_bf16_tensor_cores(const DeviceSpec& device);
// Throws Error for amp-bf16 on a GPU without bf16 support: torch.autocast(device_type="cuda",
// dtype=torch.bfloat16) raises "Current CUDA Device does not support bfloat16. Please switch dtype to
// float16." (torch/amp/autocast_mode.py). The bf16 mode is allowed everywhere: a bf16 model runs on a
// V100, its matmuls on CUDA cores.
void check_precision_supported(const DeviceSpec& device, ir::Precision precision);

}  // namespace mutwo::costmodel
