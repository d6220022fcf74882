#pragma once
// A piece of device work measured on one GPU, moved to another: the factor its measured time is
// scaled by. This is Habitat's method (Yu et al., "Habitat: A Runtime-Based Computational
// Performance Predictor for Deep Neural Network Training", USENIX ATC 2021): start from the time
// the work took, and scale it by what differs between the GPUs, so that moving work to the GPU it
// ran on changes nothing. Rules, the first that applies:
//   priced          a kernel whose op's shapes the trace recorded (a calibration row:
//                   kineto_calibration.hpp) takes the ratio of its price on the two GPUs by a cost
//                   source that prices a kernel from its work on any GPU: waves (the wave model, with
//                   a GPU's refinement where it has one) or analytic (the roofline). Habitat does the
//                   same with its MLPs for the ops it has them for.
//   under one wave  a kernel whose thread blocks fill less than one wave (SMs x its resident blocks
//                   per SM) on both GPUs: its time is one wave's latency, kept as measured;
//   wave scaled     any other kernel: times the ratio of the HBM bandwidths (origin / destination).
//                   These two rules are Habitat's wave scaling without hardware counters
//                   (habitat/analysis/wave_scaling/resimplified.py): they assume the kernel is
//                   bandwidth-bound, which a GEMM or convolution with no recorded shape is not (on a
//                   GPU whose peak grew more than its bandwidth the what-if is then too slow). The
//                   destination's occupancy is taken equal to the origin's (64 Ki registers and 2048
//                   threads per SM from Volta to Hopper; Turing and Ada hold fewer threads).
//   copy            a copy: host to device times the ratio of the host links' h2d bandwidths, device
//                   to host of their d2h bandwidths, within the device (and a memset) of the HBM
//                   bandwidths.
// Collectives are not moved: their time is the network's and the other ranks'.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibration_csv.hpp"
#include "costmodel/device_spec.hpp"
#include "support/registry.hpp"

namespace mutwo::costmodel {

enum class TransferRule : uint8_t { priced, under_one_wave, wave_scaled, copy };
std::string_view transfer_rule_name(TransferRule rule);  // "priced", "under one wave", ...

struct KernelTransfer {
  TransferRule rule = TransferRule::wave_scaled;
  double factor = 1.0;  // destination time / measured time, > 0
};

// A source that prices a kernel row on any GPU from its work.
struct KernelPricer {
  std::string name;
  std::string description;
  double (*price)(const CalibrationRow& row, const DeviceSpec& device) = nullptr;  // ns
};
// "waves", "analytic".
const Registry<KernelPricer>& kernel_pricers();

// A kernel row's price on `device` by `source` (kernel_pricers), in ns, > 0. Throws
// UnknownNameError naming the valid sources, Error when the wave model has no group for the row.
double kernel_price_ns(const CalibrationRow& row, const DeviceSpec& device, std::string_view source);

KernelTransfer priced_transfer(const CalibrationRow& row, const DeviceSpec& origin,
                               const DeviceSpec& destination, std::string_view source);
// `blocks`, `resident_blocks_per_sm`: the kernel's launch (ir::DeviceWork); 0 when unknown (then
// wave scaled).
KernelTransfer wave_transfer(int64_t blocks, int32_t resident_blocks_per_sm, const DeviceSpec& origin,
                             const DeviceSpec& destination);
// A copy or memset by its Kineto name ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)").
KernelTransfer copy_transfer(std::string_view name, const DeviceSpec& origin, const DeviceSpec& destination);

}  // namespace mutwo::costmodel
