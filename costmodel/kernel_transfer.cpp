#include "costmodel/kernel_transfer.hpp"

#include <fmt/format.h>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/calibration_profile.hpp"
#include "costmodel/wave_kernel.hpp"
#include "costmodel/wave_model.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {

std::string_view transfer_rule_name(TransferRule rule) {
  switch (rule) {
    case TransferRule::priced:
      return "priced";
    case TransferRule::under_one_wave:
      return "under one wave";
    case TransferRule::wave_scaled:
      return "wave scaled";
    case TransferRule::copy:
      return "copy";
  }
  return "?";
}

namespace {

double wave_price_ns(const CalibrationRow& row, const DeviceSpec& device) {
  const WaveModel& model = shipped_wave_model();
  const WaveKernel k =
      wave_kernel(row.kernel, row.category, row.variant, row.precision, to_sample(row), device);
  const WaveGroupFit* group = model.group_for(k.group, device);
  if (group == nullptr)
    throw Error(fmt::format("cost source 'waves': no group prices {} ({}) on {}", row.shape,
                            wave_group_text(k.group), device.name));
  return predict_wave_ns(*group, k, device, model.clock_ratio(device));
}

double analytic_price_ns(const CalibrationRow& row, const DeviceSpec& device) {
  const AnalyticCostModel model(device);
  const double peak = catalog_roofline(device, row.category, row.precision).peak_flops_per_ns;
  return static_cast<double>(model
                                 .kernel_breakdown(row.category, peak, static_cast<double>(row.flops),
                                                   static_cast<double>(row.bytes))
                                 .duration_ns);
}

}  // namespace

const Registry<KernelPricer>& kernel_pricers() {
  static const Registry<KernelPricer> registry = [] {
    Registry<KernelPricer> r("kernel pricing source");
    r.add({"waves", "the wave model, with a GPU's refinement where it has one", wave_price_ns});
    r.add({"analytic", "the roofline", analytic_price_ns});
    return r;
  }();
  return registry;
}

double kernel_price_ns(const CalibrationRow& row, const DeviceSpec& device, std::string_view source) {
  const double ns = kernel_pricers().find(source).price(row, device);
  if (!(ns > 0))
    throw Error(fmt::format("cost source '{}' priced {} at {} ns on {}", source, row.shape, ns, device.name));
  return ns;
}

KernelTransfer priced_transfer(const CalibrationRow& row, const DeviceSpec& origin,
                               const DeviceSpec& destination, std::string_view source) {
  return {TransferRule::priced,
          kernel_price_ns(row, destination, source) / kernel_price_ns(row, origin, source)};
}

KernelTransfer wave_transfer(int64_t blocks, int32_t resident_blocks_per_sm, const DeviceSpec& origin,
                             const DeviceSpec& destination) {
  if (blocks > 0 && resident_blocks_per_sm > 0 &&
      blocks < int64_t{origin.sm_count} * resident_blocks_per_sm &&
      blocks < int64_t{destination.sm_count} * resident_blocks_per_sm)
    return {TransferRule::under_one_wave, 1.0};
  return {TransferRule::wave_scaled, origin.hbm_bytes_per_ns / destination.hbm_bytes_per_ns};
}

KernelTransfer copy_transfer(std::string_view name, const DeviceSpec& origin, const DeviceSpec& destination) {
  if (name.find("HtoD") != std::string_view::npos)
    return {TransferRule::copy, origin.h2d_bytes_per_ns / destination.h2d_bytes_per_ns};
  if (name.find("DtoH") != std::string_view::npos)
    return {TransferRule::copy, origin.d2h_bytes_per_ns / destination.d2h_bytes_per_ns};
  return {TransferRule::copy, origin.hbm_bytes_per_ns / destination.hbm_bytes_per_ns};
}

}  // namespace mutwo::costmodel
