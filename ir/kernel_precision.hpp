#pragma once
// The precision a timed kernel ran at: a calibration row's `precision`, bench-ops' --precisions, a
// cost source's per-op pricing. One table says what each name means, so that code asks a property
// (element bytes, tensor-core math) instead of comparing names:
//   fp32  fp32 data, CUDA-core math
//   tf32  fp32 data, TF32 tensor-core math where the kernel is a GEMM or convolution (PyTorch's
//         allow_tf32 flags), CUDA cores elsewhere
//   fp16  fp16 data, tensor-core math where the GPU has it
//   bf16  bf16 data, tensor-core math where the GPU has bf16 tensor cores (Ampere on)
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/dtype.hpp"

namespace mutwo::ir {

enum class KernelPrecision : uint8_t { fp32, tf32, fp16, bf16 };

struct KernelPrecisionInfo {
  KernelPrecision id = KernelPrecision::fp32;
  std::string_view name;     // "fp32", in files and flags
  DType dtype = DType::f32;  // the data's element type
  bool half = false;         // 16-bit data, priced at the GPU's half-precision peak
};

const std::vector<KernelPrecisionInfo>& kernel_precisions();              // fp32, tf32, fp16, bf16
const KernelPrecisionInfo* find_kernel_precision(std::string_view name);  // null when unknown
// Throws UnknownNameError "unknown precision 'x'; valid: fp32, tf32, fp16, bf16".
const KernelPrecisionInfo& kernel_precision(std::string_view name);
const KernelPrecisionInfo& kernel_precision(KernelPrecision id);

}  // namespace mutwo::ir
