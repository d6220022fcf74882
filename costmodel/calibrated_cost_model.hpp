#pragma once
// The calibrated op cost source: each op priced as the kernels it runs, each kernel by its
// device's calibration profile (calibration_profile.hpp: wave quantization and a saturating
// efficiency per kernel and precision, fitted by least squares to measured kernel times); a kernel
// the profile has no group for is priced by the cross-GPU wave model (waves_cost_model.hpp), so the
// profile refines the default source where this GPU's kernels were measured. On the H100 and H200
// leases this took the calibrated step error from 22.6 / 22.3 % to 12.0 / 14.2 % (median; before,
// such an op fell back whole to the analytic roofline, and helper passes were left out).
//
// An op's kernels (op_kernels), with precision from its math dtype (op_precision):
//   matmul category, forward (linear, attention products, interaction): one `gemm` whose output
//     is the op's first output seen as rows x last dim: m = elements / last dim, n = last dim,
//     k = flops / (2 m n) (at least 1);
//   matmul category, backward: one `gemm` per gradient of the forward op's operands (an output of
//     rank >= 2 shaped as the forward's first or second input; without a forward op, every output of
//     rank >= 2), the op's FLOPs and bytes split evenly between them (dX and dW of a linear each cost
//     the forward's FLOPs); a bias gradient is no GEMM, though fusion gives it a second dimension;
//   conv2d: `conv2d_forward` with m = N*P*Q, n = output channels, k = flops / (2 m n);
//     a horizontally fused convolution (HFTA: k models' convolutions as one with k times their
//     groups) runs as its k models' kernels one after another: `launches` = k kernels, each one
//     model's (n, FLOPs and bytes divided by k), as cuDNN's fused kernels took on the H200
//     (docs/VALIDATION.md, "Fused convolutions"); a depthwise one (one input channel per group) is
//     one kernel over every channel;
//     every conv kernel carries its shape class (conv_variant of the op's filter size, stride,
//     dilation and per-model groups: a horizontally fused conv keeps its models' class) and is
//     priced by that variant's group, else the kernel's "general" group;
//   conv2d_backward: `conv2d_backward_data` for the gradient shaped as the forward's input
//     (m = N*H*W, n = C) and `conv2d_backward_filter` for the one shaped as its weight (m = output
//     channels, n = C/g*R*S), FLOPs and bytes split evenly; the 1-D bias gradient is left out;
//     fused as the forward (C and output channels per model, `launches` = k);
//   a fused layer norm and its backward (width > 1): the affine transform and its gradients apart
//     from ATen's norm kernels (norm_kernels.hpp); batch norm adds its statistics pass over the
//     input (norm_kernels.hpp) as a `helper` kernel;
//   an optimizer step (sgd_step, adam_step, adamw_step): the kernels torch.optim runs over the
//     weight (ir/optimizer_kernels.hpp: Adam's 7, passing 18 times over weight-sized tensors where
//     the op's bytes count 7), `launches` = their count, each an equal share of the passes' bytes
//     and the op's FLOPs, m = the weight's elements;
//   the attention products (attn_scores, attn_context, their backward) add the element-wise passes
//     eager attention runs beside its GEMMs (attention_passes.hpp: head split and merge copies,
//     scaling, the causal mask) as `helper` kernels;
//   dropout and attn_dropout_context add their keep masks' draws, one launch per model
//     (dropout_mask.hpp), as `helper` kernels;
//   any other op: one kernel named after its kind (a profile fitted on traces may hold it), with
//     m = output elements, n = k = 1 (a softmax's also with its row length, row_elements).
// A profile group named by the op's kind (batchnorm2d, layernorm, softmax, ...) was fitted on whole-op
// times (bench-ops, profiler traces), the op's helper passes inside: when it prices the op's own
// kernel, the helpers are not priced again (on the H100 lease batch norm came out 1.13 of measured
// with the statistics pass counted twice).
// duration_ns = ceil(sum of the kernels' predictions); the fitted launch floors are the kernels'
// own (DeepBench times back-to-back launches), so no launch overhead is added on top.
// An op is priced by the analytic fallback only when neither the profile nor the wave model prices
// one of its kernels (f64 math); bf16 uses the fp16 group when the profile has no bf16 one (the same
// tensor-core rate on every GPU that has both), said in describe().
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/calibration_profile.hpp"
#include "costmodel/op_cost_model.hpp"
#include "costmodel/waves_cost_model.hpp"

namespace mutwo::costmodel {

// One kernel an op runs, as the profile prices it.
struct OpKernel {
  std::string kernel;   // "gemm", "conv2d_forward", ... or the op's kind
  std::string variant;  // conv kernels: conv_variant(); others: empty
  KernelSample sample;
  ir::KindCategory category = ir::KindCategory::matmul;  // kernel_category(kernel)
  int64_t launches = 1;  // runs one after another, each `sample`: a fused convolution's models,
                         // an optimizer step's kernels
  bool helper = false;   // an element-wise pass beside the op's main kernels (attention_passes.hpp)
};
std::vector<OpKernel> op_kernels(const ir::Graph& graph, const ir::Op& op);
// A bandwidth-bound kernel passing `passes` times over tensors the size of `t`: m = t's elements,
// bytes = passes x t's bytes (the norms' and attention's extra kernels).
OpKernel pass_kernel(std::string kernel, ir::KindCategory category, double passes, const ir::Tensor& t,
                     double flops = 0);

// "fp16" for f16, "bf16" for bf16, "tf32" for f32 when TF32 is on for the op's category (matmul:
// allow_tf32_matmul or the graph's tf32 precision mode; conv: allow_tf32_conv or the tf32 mode, a
// convolution run as a batched GEMM included: the executor runs it under cuDNN's flag) and
// the device has TF32, else "fp32";
// "" for anything else (f64): not calibrated.
std::string op_precision(const ir::Graph& graph, const ir::Op& op, const DeviceSpec& device,
                         const AnalyticOptions& options);

class CalibratedCostModel final : public OpCostModel {
 public:
  // Throws Error when the profile is for a device with another SM count than `device`'s.
  // `waves` prices the kernels the profile has no group for (the shipped wave model when null).
  CalibratedCostModel(DeviceSpec device, CalibrationProfile profile, AnalyticOptions options = {},
                      std::shared_ptr<const WaveModel> waves = nullptr);

  std::string_view name() const override { return "calibrated"; }
  int64_t op_duration_ns(const ir::Graph& graph, const ir::Op& op) const override;
  const DeviceSpec& device() const override { return fallback_.device(); }
  // "calibrated (v100-16gb profile of 2026-11-24, 864 kernels: 42 of 202 ops, 160 with kernels the
  // profile lacks priced by waves)"; "; rest analytic" where some ops are the fallback's.
  std::string describe(const ir::Graph& graph) const override;

  // The op's price: each kernel by the profile, a kernel the profile has no group for by the wave
  // model (setting *by_waves); nullopt when neither prices a kernel of it.
  std::optional<int64_t> calibrated_duration_ns(const ir::Graph& graph, const ir::Op& op,
                                                bool* by_waves = nullptr) const;
  const CalibrationProfile& profile() const { return profile_; }
  const AnalyticCostModel& fallback() const { return fallback_; }

 private:
  const KernelGroupFit* group(const OpKernel& kernel, const std::string& precision) const;

  CalibrationProfile profile_;
  AnalyticCostModel fallback_;
  WaveCostModel waves_;
};

}  // namespace mutwo::costmodel
