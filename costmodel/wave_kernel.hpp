#pragma once
// A kernel as the wave model (wave_model.hpp) sees it on one GPU: the group whose coefficients price
// it, and its work turned into times on that GPU's datasheet. Every feature is in ns on the device
// (FLOPs over the peak, bytes over the bandwidth, waves over the clock), so one set of
// dimensionless coefficients describes every GPU and a GPU with no measured kernels is priced from
// its datasheet alone.
//
// Groups (one set of coefficients each):
//   family   gemm (matmul-category kernels: linear, attention products, batched products),
//            conv2d_forward, conv2d_backward_data, conv2d_backward_filter (one per pass),
//            norm (layer and batch norm), reduction (softmax, pooling, losses),
//            elementwise (pointwise ops, and the bandwidth-bound categories with no measurements of
//            their own: data movement, optimizer updates, opaque ops)
//   variant  a convolution's "3x3s1" class apart from the rest ("": cuDNN may run those as Winograd,
//            2.25-4x fewer multiplications than the direct count; Lavin & Gray 2016; the FP32 forward
//            group's features are Winograd's own: runs_winograd, winograd_sample);
//            a GEMM of more than one product "batched" (torch.bmm, and a fused model array's linear
//            layers: cuBLAS's strided-batched kernels, a family of their own with one tile per GPU
//            (on the A100 16,588 of NeuSight's 16,661 bmm rows ran ampere_sgemm_128x128_nn) where
//            single products pick among six; tests/fixtures/calibration/neusight/README.md)
//            a softmax that runs PyTorch's warp kernel "warp" (reduction family; is_softmax_warp_kernel)
//   math     gemm and conv: "tensor" (TF32, or FP16/BF16 on tensor cores) or "cuda" (FP32, or half
//            precision on a GPU without tensor cores for it); "" for the bandwidth-bound families
//
// Features of a kernel of `batch` products of implicit-GEMM shape m x n x k (calibration_csv.hpp),
// on S SMs at clock f (GHz), peak P of its math mode, HBM bandwidth H and L2 size L; a GEMM-like
// kernel's compute features are at the clock the board sustains (r = sustained_clock_ratio below:
// f and P times r), since a long run of math draws more power than a small board can deliver at boost:
//   waves   = ceil(batch * ceil(m / tile_m) * ceil(n / tile_n) / S)      (gemm and conv only)
//   compute = {1, waves / f, flops / P, Fq / P, bytes / H}
//             Fq = flops * waves * S * tile_m * tile_n / (batch * m * n): every tile slot of every
//             wave, idle ones included; bytes / H: the operands' HBM traffic paid on top of the math
//             where the kernel does not hide it (a tile's loads before its first product and its
//             stores after the last; Winograd's transforms, separate kernels or stages around its
//             products); the fit says how much per group, FP32 ("cuda") groups only, 0 in the
//             tensor-core groups (costmodel/README.md, "Traffic beside the math")
//   memory  = {1, hbm_bytes / H, l2_bytes / (S * f)}
// A bandwidth-bound kernel whose bytes (read + written) fit in L2 (<= L) streams them from L2, whose
// rate scales with the SMs and their clock: its bytes are l2_bytes, else hbm_bytes. GEMM-like kernels
// move every operand through HBM at least once: hbm_bytes = bytes. Without a tile (bandwidth-bound
// families) waves and Fq are 0.
#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibration_fit.hpp"
#include "costmodel/device_spec.hpp"
#include "ir/op_kind.hpp"

namespace mutwo::costmodel {

// The variant of a GEMM of more than one product, and the two math modes of a GEMM-like group (above).
inline constexpr std::string_view kBatchedGemmVariant = "batched";
// A softmax (forward or backward) over rows of at most 1,024 elements and 4,096 bytes runs PyTorch's warp
// kernel (softmax_warp_forward / _backward: a warp per row, held in registers); a longer row runs
// cunn_SoftMaxForward / Backward (a block per row, a pass per step): ATen/native/cuda/SoftMax.cu,
// host_softmax. On NeuSight's five GPUs one group for both priced the warp kernel +11.6 % and the block
// kernel -6.6 % (signed medians; the cross-GPU group of the model fitted before the split, with one
// harness for both): the warp kernel is a reduction group of its own (docs/FIDELITY.md).
inline constexpr std::string_view kSoftmaxWarpVariant = "warp";
inline constexpr int64_t kSoftmaxWarpMaxRowElements = 1024;
inline constexpr int64_t kSoftmaxWarpMaxRowBytes = 4096;
// Whether a kernel (an op kind's name) is a softmax that runs the warp kernel: softmax or
// softmax_backward with 0 < row_elements <= 1,024 and row_elements x the precision's element size
// <= 4,096 bytes.
bool is_softmax_warp_kernel(std::string_view kernel, int64_t row_elements, std::string_view precision);
inline constexpr std::string_view kTensorMath = "tensor";
inline constexpr std::string_view kCudaMath = "cuda";

struct WaveGroupKey {
  std::string family;
  std::string variant;
  std::string math;
  auto operator<=>(const WaveGroupKey&) const = default;
};
std::string wave_group_text(const WaveGroupKey& key);  // "gemm (tensor)", "conv2d_forward 3x3s1 (cuda)"

inline constexpr size_t kWaveComputeTerms = 5;  // 1, waves / clock, flops / peak, Fq / peak, bytes / H
inline constexpr size_t kWaveMemoryTerms = 3;   // 1, HBM bytes / bandwidth, L2 bytes / (SMs * clock)

struct WaveKernel {
  WaveGroupKey group;
  double peak_flops_per_ns = 1;  // the math mode's dense peak on the device
  KernelSample sample;           // shape, FLOPs, bytes (and, when fitting, the measured time)
};

// Whether a group is GEMM-like (waves and tiles apply): gemm and the conv passes.
bool is_gemm_like(const WaveGroupKey& key);

// Whether a group's kernels each run the tile that finishes first (tile_choices) rather than the group's
// one tile: FP32 GEMMs of one product and FP32 convolution passes (math "cuda"). cuBLAS and cuDNN pick a
// tile per shape there: NeuSight's launch records show six SGEMM tiles per GPU for nn.Linear (on the V100
// 128x64 for 2,402 rows, 128x32 1,179, 32x128 938, 128x128 836, 64x32 600, 32x32 504). Not batched
// GEMMs, whose strided-batched kernels keep one tile per GPU (16,588 of the A100's 16,661 bmm rows ran
// 128x128), nor the tensor-core groups, fitted on two GPUs' half-precision kernels (DeepBench's V100 and
// T4): given the choice they priced TF32 convolutions up to 1.8x too fast end to end (MobileNet-V2 on the
// A100 +87 %, ResNet-50 +22 %; costmodel/README.md, "A tile per kernel").
bool chooses_tile(const WaveGroupKey& key);
// The tiles a kernel of such a group may run, its group's tile (the largest) first: every candidate of
// kTileCandidates no larger on either side, either way round (cuBLAS's 128x32 and 32x128).
std::vector<TileShape> tile_choices(TileShape largest);

// The group and peak of a kernel (`kernel`: gemm, conv2d_*, or an op kind; its category; a conv's
// shape class) at a precision (fp32, tf32, fp16, bf16) on `device`:
//   tf32 -> tensor at the TF32 peak (cuda at FP32 on a GPU without TF32);
//   fp16 -> tensor at the half peak on a GPU with tensor cores (half peak >= 4 x FP32), else cuda at
//           the faster of the half and FP32 rates (P100's FP16x2; GP102's 1/64 half rate is never
//           used: the kernels accumulate in FP32);
//   bf16 -> tensor at the half peak with bf16 tensor cores (has_bf16_tensor_cores), else cuda at FP32
//           (cuBLAS runs bf16 on CUDA cores before Ampere);
//   fp32 -> cuda at FP32.
// Bandwidth-bound families take the FP32 peak (their FLOP term rarely binds) and no math class.
WaveKernel wave_kernel(std::string_view kernel, ir::KindCategory category, std::string_view variant,
                       std::string_view precision, const KernelSample& sample, const DeviceSpec& device);

// A 3x3 stride-1 FP32 convolution pass (`pass`: conv2d_forward, _backward_data, _backward_filter; its
// implicit-GEMM sample with winograd_tiles > 0) as cuDNN's Winograd F(4x4, 3x3) runs it: 36 products,
// one per element of the 6x6 transformed tile, of tiles x K x C (forward; tiles x C x K for the data
// gradient; K x C x tiles for the weight gradient), FLOPs 2 x 36 x m x n x k, bytes as given. With
// cudnn.benchmark on, NeuSight's 3x3 convolutions ran Winograd on 13,614 of 18,374 kernel-bound rows; an
// image whose side is not a multiple of 4 pays for its part-empty tiles (in-sample 19.8 % against 22.4 %
// with the tiles taken as pixels / 16: costmodel/README.md, "Winograd").
KernelSample winograd_sample(std::string_view pass, const KernelSample& conv);
// Whether a group prices its kernels as Winograd runs them (winograd_sample): FP32 forward 3x3 stride-1
// convolutions, the class NeuSight timed (18,374 kernel-bound rows on five GPUs, cudnn.benchmark on).
// Not the backward passes, fitted on DeepBench's 2017 kernels alone (186 and 192 rows), whose in-sample
// error the transform raised (data gradient 20.9 -> 21.9 %, weight gradient 18.8 -> 21.0 %), nor the
// tensor-core groups (cuDNN's tensor-core convolutions are implicit GEMMs).
bool runs_winograd(const WaveGroupKey& key);
// The kernel as a group prices it: with its sample in Winograd's form when `winograd` (the group's
// flag, WaveGroupFit::winograd) and the kernel has tiles (a 3x3 stride-1 convolution), else as it is.
WaveKernel as_priced(const WaveKernel& kernel, bool winograd);

struct WaveFeatures {
  std::array<double, kWaveComputeTerms> compute{};
  std::array<double, kWaveMemoryTerms> memory{};
};
// The features above at clock ratio r (sustained_clock_ratio); `tile` is ignored for bandwidth-bound
// families. Throws Error for a device without SMs, clock or L2, a shape below 1 or r outside (0, 1].
WaveFeatures wave_features(const WaveKernel& kernel, TileShape tile, const DeviceSpec& device,
                           double clock_ratio);

// The share of its boost clock a GPU holds with every FP32 unit busy, under its board power W:
//   r = min(1, W / (e * s * P32))
// with P32 its FP32 peak, s its process's energy per op relative to TSMC 16FF+ (process_node.hpp) and
// e the energy of one FP32 FLOP on a whole board on 16FF+ (pJ; fitted across GPUs, wave_fit.hpp).
// What it says: the 70-75 W inference cards (T4, P4) run their math far below the datasheet's boost
// while 250-700 W boards hold it, which no peak or clock figure separates. 1 when e is 0 or the device
// names no board power or process.
double sustained_clock_ratio(const DeviceSpec& device, double energy_pj_per_flop);

}  // namespace mutwo::costmodel
