#include "costmodel/wave_kernel.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/calibration_csv.hpp"
#include "costmodel/process_node.hpp"
#include "ir/kernel_precision.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

std::string family_of(std::string_view kernel, ir::KindCategory category) {
  if (is_gemm_kernel(kernel) || category == ir::KindCategory::matmul) return std::string(kGemmKernel);
  if (is_conv_pass_kernel(kernel)) return std::string(kernel);
  if (category == ir::KindCategory::conv) return "conv2d_forward";
  if (category == ir::KindCategory::norm) return "norm";
  if (category == ir::KindCategory::reduction) return "reduction";
  return "elementwise";
}

}  // namespace

KernelSample winograd_sample(std::string_view pass, const KernelSample& conv) {
  constexpr int64_t kProducts = 36;  // F(4x4, 3x3): 6x6 input tiles, one product per element
  constexpr double kFilterTaps = 9;  // the 3x3 filter in the implicit GEMM's reduction
  const auto taps_out = [&](int64_t v) { return std::max<int64_t>(1, std::llround(v / kFilterTaps)); };
  KernelSample w = conv;
  w.batch = kProducts;
  if (pass == conv_pass_kernel(ConvPass::backward_filter)) {
    w.n = taps_out(conv.n);
    w.k = conv.winograd_tiles;
  } else {
    w.m = conv.winograd_tiles;
    w.k = taps_out(conv.k);
  }
  w.flops = 2.0 * kProducts * static_cast<double>(w.m) * static_cast<double>(w.n) * static_cast<double>(w.k);
  return w;
}

std::string wave_group_text(const WaveGroupKey& key) {
  std::string text = key.family;
  if (!key.variant.empty()) text += " " + key.variant;
  if (!key.math.empty()) text += " (" + key.math + ")";
  return text;
}

bool is_softmax_warp_kernel(std::string_view kernel, int64_t row_elements, std::string_view precision) {
  if (kernel != ir::kind_name(ir::OpKind::softmax) && kernel != ir::kind_name(ir::OpKind::softmax_backward))
    return false;
  return row_elements > 0 && row_elements <= kSoftmaxWarpMaxRowElements &&
         row_elements * precision_element_bytes(precision) <= kSoftmaxWarpMaxRowBytes;
}

bool is_gemm_like(const WaveGroupKey& key) {
  return is_gemm_kernel(key.family) || is_conv_pass_kernel(key.family);
}

WaveKernel wave_kernel(std::string_view kernel, ir::KindCategory category, std::string_view variant,
                       std::string_view precision, const KernelSample& sample, const DeviceSpec& device) {
  WaveKernel w;
  w.sample = sample;
  w.group.family = family_of(kernel, category);
  w.peak_flops_per_ns = device.fp32_flops_per_ns;
  if (!is_gemm_like(w.group)) {
    if (w.group.family == "reduction" && is_softmax_warp_kernel(kernel, sample.row_elements, precision))
      w.group.variant = kSoftmaxWarpVariant;
    return w;
  }
  if (variant == kConv3x3s1Variant) w.group.variant = kConv3x3s1Variant;
  if (is_gemm_kernel(w.group.family) && sample.batch > 1) w.group.variant = kBatchedGemmVariant;
  const bool tensor_cores = device.half_flops_per_ns >= 4 * device.fp32_flops_per_ns;
  w.group.math = kCudaMath;
  switch (ir::kernel_precision(precision).id) {
    case ir::KernelPrecision::tf32:
      if (device.tf32_flops_per_ns > 0) {
        w.group.math = kTensorMath;
        w.peak_flops_per_ns = device.tf32_flops_per_ns;
      }
      break;
    case ir::KernelPrecision::fp16:
      if (tensor_cores) w.group.math = kTensorMath;
      // Without tensor cores cuBLAS and cuDNN accumulate fp16 in FP32 (cublasGemmEx, compute type 32F,
      // as PyTorch calls it): a chip whose native half math is slower than FP32 (GP102's and GP104's
      // 1/64, costmodel/devices/gtx1080ti.toml) converts and runs at the FP32 rate.
      w.peak_flops_per_ns = std::max(device.half_flops_per_ns, device.fp32_flops_per_ns);
      break;
    case ir::KernelPrecision::bf16:
      if (has_bf16_tensor_cores(device)) {
        w.group.math = kTensorMath;
        w.peak_flops_per_ns = device.half_flops_per_ns;
      }
      break;
    case ir::KernelPrecision::fp32:
      break;
  }
  return w;
}

bool runs_winograd(const WaveGroupKey& key) {
  return key.family == conv_pass_kernel(ConvPass::forward) && key.variant == kConv3x3s1Variant &&
         key.math == kCudaMath;
}

WaveKernel as_priced(const WaveKernel& kernel, bool winograd) {
  if (!winograd || kernel.sample.winograd_tiles < 1) return kernel;
  WaveKernel w = kernel;
  w.sample = winograd_sample(kernel.group.family, kernel.sample);
  return w;
}

bool chooses_tile(const WaveGroupKey& key) {
  return is_gemm_like(key) && key.math == kCudaMath && key.variant != kBatchedGemmVariant;
}

std::vector<TileShape> tile_choices(TileShape largest) {
  std::vector<TileShape> out{largest};
  const auto add = [&](TileShape t) {
    if (t.m > largest.m || t.n > largest.n) return;
    for (const TileShape& o : out) {
      if (o.m == t.m && o.n == t.n) return;
    }
    out.push_back(t);
  };
  for (const TileShape& t : kTileCandidates) {
    add(t);
    add({t.n, t.m});
  }
  return out;
}

double sustained_clock_ratio(const DeviceSpec& device, double energy_pj_per_flop) {
  if (!(energy_pj_per_flop > 0) || !(device.board_power_w > 0) || device.process.empty()) return 1.0;
  const ProcessNode* process = find_process_node(device.process);
  if (process == nullptr) {
    throw Error(fmt::format("device '{}': process '{}' is not a known process; valid: {}", device.name,
                            device.process, process_node_names()));
  }
  // W / (pJ per FLOP) = 1e12 FLOP/s = 1e3 FLOP per ns.
  const double sustained_flops_per_ns =
      1000.0 * device.board_power_w / (energy_pj_per_flop * process->energy_vs_16ff);
  return std::min(1.0, sustained_flops_per_ns / device.fp32_flops_per_ns);
}

WaveFeatures wave_features(const WaveKernel& kernel, TileShape tile, const DeviceSpec& device,
                           double clock_ratio) {
  if (!(clock_ratio > 0 && clock_ratio <= 1)) {
    throw Error(fmt::format("device '{}': clock ratio {} must be in (0, 1]", device.name, clock_ratio));
  }
  if (device.sm_count < 1 || device.boost_clock_mhz < 1 || device.l2_bytes < 1) {
    throw Error(
        fmt::format("device '{}': the wave model needs its SMs, boost clock and L2 size", device.name));
  }
  const KernelSample& s = kernel.sample;
  if (s.batch < 1 || s.m < 1 || s.n < 1 || s.k < 1) {
    throw Error(
        fmt::format("kernel shape batch={} m={} n={} k={}: each must be >= 1", s.batch, s.m, s.n, s.k));
  }
  const double clock_ghz = device.boost_clock_mhz / 1000.0;
  const double sms = device.sm_count;
  WaveFeatures f;
  f.compute[0] = 1.0;
  f.compute[2] = s.flops / kernel.peak_flops_per_ns;
  f.memory[0] = 1.0;
  if (is_gemm_like(kernel.group)) {
    // The per-device model's waves and quantized FLOPs (calibration_fit.hpp), as times on this GPU.
    const std::array<double, kComputeTerms> terms = compute_terms(s, tile, device.sm_count);
    f.compute[1] = terms[1] / (clock_ghz * clock_ratio);
    f.compute[2] /= clock_ratio;
    f.compute[3] = terms[3] / (kernel.peak_flops_per_ns * clock_ratio);
    f.memory[1] = s.bytes / device.hbm_bytes_per_ns;
    // Tensor-core groups keep no such term: fitted on two GPUs' half-precision kernels, the extra freedom
    // moved their tiles and every TF32 figure end to end (costmodel/README.md, "Traffic beside the math").
    if (kernel.group.math == kCudaMath) f.compute[4] = f.memory[1];
    return f;
  }
  if (s.bytes <= static_cast<double>(device.l2_bytes)) {
    f.memory[2] = s.bytes / (sms * clock_ghz);
  } else {
    f.memory[1] = s.bytes / device.hbm_bytes_per_ns;
  }
  return f;
}

}  // namespace mutwo::costmodel
