#include "costmodel/waves_cost_model.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "costmodel/calibrated_cost_model.hpp"
#include "costmodel/calibration_csv.hpp"
#include "ir/op_category.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

WaveCostModel::WaveCostModel(DeviceSpec device, std::shared_ptr<const WaveModel> model,
                             AnalyticOptions options)
    : model_(std::move(model)), fallback_(std::move(device), std::move(options)) {
  const DeviceSpec& d = fallback_.device();
  if (d.boost_clock_mhz < 1 || d.l2_bytes < 1) {
    throw Error(fmt::format(
        "cost source 'waves' on device '{}': the wave model needs the boost clock and L2 size", d.name));
  }
  refinement_ = model_->refinement_for(d);
  clock_ratio_ = model_->clock_ratio(d);
}

std::optional<int64_t> WaveCostModel::wave_duration_ns(const ir::Graph& graph, const ir::Op& op) const {
  const DeviceSpec& device = fallback_.device();
  if (graph.precision != ir::Precision::fp32) check_precision_supported(device, graph.precision);
  if (ir::is_view_op(op)) return 0;
  const std::string precision = op_precision(graph, op, device, fallback_.options());
  if (precision.empty()) return std::nullopt;
  const std::vector<OpKernel> kernels = op_kernels(graph, op);
  if (kernels.empty()) return std::nullopt;
  double total = 0;
  for (const OpKernel& k : kernels) {
    const std::optional<double> t = kernel_ns(k, precision);
    if (!t) return std::nullopt;
    total += *t;
  }
  return whole_price_ns(total, name(), &op);
}

std::optional<double> WaveCostModel::kernel_ns(const OpKernel& k, const std::string& precision) const {
  const DeviceSpec& device = fallback_.device();
  const WaveKernel w = wave_kernel(k.kernel, k.category, k.variant, precision, k.sample, device);
  const WaveGroupFit* g = model_->group_for(w.group, refinement_);
  if (g == nullptr) return std::nullopt;
  return static_cast<double>(k.launches) * predict_wave_ns(*g, w, device, clock_ratio_);
}

int64_t WaveCostModel::op_duration_ns(const ir::Graph& graph, const ir::Op& op) const {
  if (const std::optional<int64_t> t = wave_duration_ns(graph, op)) return *t;
  return fallback_.op_duration_ns(graph, op);
}

std::string WaveCostModel::describe(const ir::Graph& graph) const {
  int64_t covered = 0;
  for (const ir::Op& op : graph.ops) {
    if (wave_duration_ns(graph, op)) ++covered;
  }
  std::set<std::string> gpus;
  for (const WaveGroupFit& g : model_->groups) gpus.insert(g.devices.begin(), g.devices.end());
  std::string refined;
  for (const WaveRefinement& r : model_->refinements) {
    for (const WaveGroupFit& g : r.groups) {
      if (model_->group_for(g.key, refinement_) == &g) {
        refined = fmt::format(
            ", refined on {}'s kernels{}", r.device,
            refinement_.compute_only ? " (GEMMs and convolutions: the same chip on other memory)" : "");
      }
    }
  }
  // A GPU no kernel of which was measured (no refinement prices it, none of the cross-GPU groups' rows
  // is its): its prices come from its datasheet alone, as the leave-one-out validates them.
  const std::string& name = fallback_.device().name;
  if (refined.empty() && gpus.count(name) == 0) refined = ", from its datasheet alone";
  const std::string limited = clock_ratio_ < 1
                                  ? fmt::format(", math at {:.2f} of the boost clock on a {:.0f} W board",
                                                clock_ratio_, fallback_.device().board_power_w)
                                  : "";
  const int64_t ops = static_cast<int64_t>(graph.ops.size());
  return fmt::format("waves (kernel model fitted {} across {} GPUs{}{}: {} of {} ops{})", model_->fitted_on,
                     gpus.size(), refined, limited, covered, ops, covered < ops ? "; rest analytic" : "");
}

}  // namespace mutwo::costmodel
