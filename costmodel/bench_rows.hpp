#pragma once
// Calibration CSV rows (calibration_csv.hpp) from `mutwo bench-ops` timings
// (ir/bench_ops.hpp), so that `mutwo calibrate` fits them as it fits DeepBench's.
#include <string_view>
#include <vector>

#include "costmodel/calibration_csv.hpp"
#include "ir/bench_ops.hpp"

namespace mutwo::costmodel {

// The row of one timing on `device` (a catalog name, or kHostCpuDevice). m, n, k, flops and bytes
// follow the calibration CSV's rules: gemm and conv2d_* as DeepBench's rows are converted
// (gemm_work, conv_work: flops 2*m*n*k, the direct-convolution count for each pass); an op kind
// (relu, gelu, add, softmax, layernorm, batchnorm2d) as the calibrated source looks it up
// (op_kernels of the one-op graph at the precision's dtype: m = output elements, n = k = 1, the
// op's FLOPs and bytes read + written), so a profile fitted on these rows prices the zoo's ops.
// source is "bench-ops <shape's source>"; shape a readable text. Throws Error for a bad shape.
CalibrationRow bench_row(const ir::KernelTiming& timing, std::string_view device);

// An op kind's kernel as the calibrated source prices it: the one op of a graph holding only it, on
// an input of shape `dims` at the precision's dtype (add and mul take two such inputs; layernorm a
// gamma and beta over the last dim, batchnorm2d over dim 1): m = output elements, n = k = 1, the
// op's FLOPs and bytes read + written. Throws UnknownNameError for an unknown kind.
KernelWork op_kind_work(std::string_view kind, const std::vector<int64_t>& dims, std::string_view precision);

}  // namespace mutwo::costmodel
