#pragma once
// Calibration rows (calibration_csv.hpp) from the kernels of a PyTorch profiler trace recorded with
// record_shapes=True (io/kineto_op_records.hpp: each shaped aten op with the GPU time of the
// kernels it launched), so that `mutwo calibrate` fits a real training run's kernels as it fits
// DeepBench's and bench-ops'.
//
// Typed ops (input 0's dtype: "float" fp32, "c10::Half" fp16, "c10::BFloat16" bf16; others are
// skipped). Work by the same rules as bench-ops rows (bench_rows.hpp):
//   aten::mm [M,K]x[K,N], aten::addmm (bias, [M,K], [K,N])  -> gemm M, N, K
//   aten::bmm [B,M,K]x[B,K,N]                                -> gemm batch B, m = M, n = N, k = K,
//                                                              flops 2*B*M*N*K, bytes of all three
//                                                              batched operands
//   aten::relu / relu_ / gelu / _softmax / native_layer_norm  -> relu, gelu, softmax, layernorm on
//                                                              [elements / last dim, last dim]
//   aten::add / add_ with two equal shapes                   -> add on the same view
//   aten::native_batch_norm / cudnn_batch_norm on 4-D input  -> batchnorm2d
// fp32 GEMMs are taken as fp32, PyTorch's default since 1.12 (torch.backends.cuda.matmul.allow_tf32
// = False); a trace taken with TF32 on must not be fitted as fp32. Convolutions are skipped: their
// stride and padding are not in "Input Dims". source = "kineto <file>", shape = "<aten op> <dims>".
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/calibration_csv.hpp"
#include "io/kineto_op_records.hpp"

namespace mutwo::costmodel {

struct KinetoCalibration {
  std::vector<CalibrationRow> rows;
  int64_t ops = 0;                         // records with kernels
  int64_t gpu_ns = 0;                      // their kernels' time
  int64_t typed_gpu_ns = 0;                // of which became rows
  std::map<std::string, int64_t> skipped;  // aten op name -> records not turned into rows
};

// `device`: the catalog device the trace ran on. `file` names the trace in sources and messages.
// The row of one record (time: its kernels'), nullopt when the rules above turn it into none.
std::optional<CalibrationRow> kineto_calibration_row(const io::KinetoOpRecord& record,
                                                     const std::string& device, const std::string& file);
KinetoCalibration kineto_calibration_rows(const io::KinetoOpRecords& records, const std::string& device,
                                          const std::string& file);

}  // namespace mutwo::costmodel
