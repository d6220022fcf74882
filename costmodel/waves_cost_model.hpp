#pragma once
// The `waves` op cost source, mutwo's default: each op priced as the kernels it runs (op_kernels,
// calibrated_cost_model.hpp), each kernel by the wave model (wave_model.hpp) on the device's
// datasheet, refined by the device's own measured kernels where the model holds them.
//
//   duration_ns = ceil(sum over the op's kernels of predict_wave_ns(group, kernel, device))
//
// The kernels' fixed costs are the model's own (fitted on kernels timed back to back), so no
// launch overhead is added; the host's dispatch is the host timeline's (sim/). Math mode as
// op_precision gives it (PyTorch's TF32 defaults, AnalyticOptions); a graph in amp-bf16 on a GPU
// without bf16 is refused as torch.autocast refuses it. View ops cost nothing. Ops the model cannot
// price (f64 math, an op without kernels) fall back to the analytic source, and describe() counts
// them.
#include <memory>
#include <optional>
#include <string>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/op_cost_model.hpp"
#include "costmodel/wave_model.hpp"

namespace mutwo::costmodel {

struct OpKernel;  // calibrated_cost_model.hpp

class WaveCostModel final : public OpCostModel {
 public:
  // Throws Error for an invalid device or a device without SMs, clock or L2.
  WaveCostModel(DeviceSpec device, std::shared_ptr<const WaveModel> model, AnalyticOptions options = {});

  std::string_view name() const override { return "waves"; }
  int64_t op_duration_ns(const ir::Graph& graph, const ir::Op& op) const override;
  const DeviceSpec& device() const override { return fallback_.device(); }
  // "waves (kernel model fitted 2026-11-26 across 8 GPUs, refined on a100-pcie-40gb's kernels: 198 of
  // 202 ops; rest analytic)"; a power-limited board adds ", math at 0.49 of the boost clock on a 72 W
  // board".
  std::string describe(const ir::Graph& graph) const override;

  // The model's price of the op; nullopt when it prices no kernel of it.
  std::optional<int64_t> wave_duration_ns(const ir::Graph& graph, const ir::Op& op) const;
  // One kernel of an op (op_kernels) at a precision (op_precision), all its launches; nullopt when
  // the model has no group for it.
  std::optional<double> kernel_ns(const OpKernel& kernel, const std::string& precision) const;
  const WaveModel& model() const { return *model_; }

 private:
  std::shared_ptr<const WaveModel> model_;
  AnalyticCostModel fallback_;
  RefinementMatch refinement_;  // the device's, looked up once
  double clock_ratio_ = 1;      // the device's sustained clock ratio, once
};

}  // namespace mutwo::costmodel
