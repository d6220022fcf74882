#pragma once
// Training precision modes as PyTorch users train: what a Graph's tensors are stored in and which
// math its matmuls and convolutions run on. The rewrite that applies one is transforms/autocast.hpp.
#include <cstdint>
#include <string_view>

#include "ir/dtype.hpp"

namespace mutwo::ir {

enum class Precision : uint8_t {
  fp32,      // f32 everywhere; PyTorch's TF32 defaults (cuDNN conv on, matmul off since 1.12)
  tf32,      // f32 tensors, matmul and conv on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32)
  amp_fp16,  // torch.autocast(dtype=torch.float16) + GradScaler, fp32 master weights
  amp_bf16,  // torch.autocast(dtype=torch.bfloat16), fp32 master weights
  bf16,      // model.to(torch.bfloat16): weights, activations, gradients and optimizer state in bf16
};

std::string_view precision_name(Precision precision);  // "fp32", "tf32", "amp-fp16", "amp-bf16", "bf16"
// Throws UnknownNameError "unknown precision 'x'; valid: fp32, tf32, amp-fp16, amp-bf16, bf16".
Precision parse_precision(std::string_view name);
// "fp32, tf32, amp-fp16, amp-bf16, bf16", for help texts.
std::string_view precision_names();

bool is_autocast(Precision precision);
// The lower-precision dtype autocast casts to (f16 or bf16); f32 for the other modes.
DType autocast_dtype(Precision precision);
// torch.backends.cuda.matmul.allow_tf32 under this mode (only tf32 sets it; PyTorch's default is off).
bool allows_tf32_matmul(Precision precision);

}  // namespace mutwo::ir
