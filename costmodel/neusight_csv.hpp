#pragma once
// Reads NeuSight's measured PyTorch operator times (Lee et al., "Forecasting GPU Performance for Deep
// Learning Training and Inference", ASPLOS 2025; its artifact's training set, a copy with provenance
// in tests/fixtures/calibration/neusight/) into the one calibration format (calibration_csv.hpp).
//
// What NeuSight measured (its collection script, scripts/asplos/data/.../collect.py): each row is one
// torch op, fp32 tensors, PyTorch 2.1 with TF32 off (torch.backends.cudnn.allow_tf32 = False; matmul
// TF32 is off by default) and cudnn.benchmark = True, called from Python as
//   start.record(); out = op(*inputs); end.record(); torch.cuda.synchronize()
// 25 times; `Latency` is the mean of the 5 fastest, in **milliseconds, for the whole op** (every
// kernel it launched). The GPU is idle when start is recorded, so the interval holds the host's
// dispatch of the op up to its first kernel: rows carry timing "eager-op" and the kernel model
// takes that harness out (wave_fit.hpp).
//
// Columns by name (the header differs per op): OPName, Latency, Device, and
//   linear, bmm  B, M, N, K. As the script builds them (and the launch grids confirm), **N is the
//                reduction**: bmm multiplies [B, M, N] by [B, N, K]; linear is nn.Linear(N, K) (with
//                bias) on an [M, N] input (B = 1). Rows: kernel gemm, batch B, m = M, n = K, k = N;
//                flops 2*B*M*N*K; bytes B*(M*N + N*K + M*K) elements, plus K for linear's bias.
//   conv         B, Input_Channel, Output_Channel, Kernel_Szie (the column's own spelling), Input_Size,
//                Stride, Padding: nn.Conv2d(C, K, R, stride, padding, bias=False) on [B, C, H, H],
//                square filter and input. Rows: conv2d_forward, its shape class (conv_variant), the
//                implicit-GEMM shape and direct-convolution FLOPs of conv_work.
//   ln, softmax  B, H: nn.LayerNorm(H) / nn.Softmax over the last dim of [B, H]: kernels layernorm /
//                softmax with op_kind_work's work (bench_rows.hpp).
//   add mul relu gelu tanh   B, H: their op kinds on [B, H] (add, mul: two such tensors).
//   div pow      two-tensor ops with no mutwo kind: kernel `mul` (the same traffic: two tensors read,
//                one written; `source` keeps the op's name).
//   addu mulu divu powu      tensor-op-scalar (one tensor read, one written): kernel `relu`, the same
//                traffic; `source` keeps the op's name.
// Device: the `Device` column by match_device (device_catalog.hpp): NVIDIA A100-PCIE-40GB ->
// a100-pcie-40gb, NVIDIA A100 80GB PCIe -> a100-pcie-80gb, Tesla V100-PCIE-32GB -> v100-pcie-32gb,
// Tesla T4 -> t4, Tesla P100-PCIE-16GB -> p100-pcie-16gb, Tesla P4 -> p4.
// time_ns = round(Latency * 1e6). source "neusight <OPName>"; shape the row's dims and, for gemm
// rows, cuBLAS's main kernel (its tile is in the name: "ampere_sgemm_128x64_tn").
#include <string_view>
#include <vector>

#include "costmodel/calibration_csv.hpp"

namespace mutwo::costmodel {

// Whether a row was read from NeuSight's bmm files: a batched product even at B = 1, where its batch
// count alone does not say so.
bool is_neusight_bmm(const CalibrationRow& row);

// Whether a header line is NeuSight's (it starts "OPName,Latency,Device,").
bool is_neusight_header(std::string_view line);

// Converts one NeuSight CSV (text, gzip already undone). Errors name the file, line, field and value:
// FormatError "<file>:<line>: field 'Latency' = '-1': must be > 0".
std::vector<CalibrationRow> convert_neusight_csv(std::string_view text, std::string_view file);

}  // namespace mutwo::costmodel
