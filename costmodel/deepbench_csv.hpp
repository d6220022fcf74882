#pragma once
// Baidu DeepBench's measured training kernels (GEMM and convolution sheets) as calibration rows
// (calibration_csv.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/calibration_csv.hpp"

namespace mutwo::costmodel {

inline constexpr std::string_view kDeepBenchGemmHeader =
    "gpu,precision,source,M,N,K,a_transpose,b_transpose,time_ms";
inline constexpr std::string_view kDeepBenchConvHeader =
    "gpu,precision,source,W,H,C,N,K,S,R,pad_w,pad_h,stride_w,stride_h,forward_ms,backward_data_ms,"
    "backward_filter_ms,forward_algorithm";

// DeepBench's GPU names as their catalog devices: "V100" -> v100-16gb (DGX-1 V100-SXM2-16GB),
// "P100" -> p100-pcie-16gb, "T4" -> t4, "GTX 1080 Ti" -> gtx1080ti, "Titan Xp" -> titan-xp;
// throws FormatError for another name.
std::string deepbench_device(std::string_view gpu, std::string_view where);

// Converts DeepBench's training results as tests/fixtures/calibration holds them (its README):
//   gemm.csv: gpu,precision,source,M,N,K,a_transpose,b_transpose,time_ms -> one `gemm` row each;
//   conv.csv: gpu,precision,source,W,H,C,N,K,S,R,pad_w,pad_h,stride_w,stride_h,forward_ms,
//             backward_data_ms,backward_filter_ms,forward_algorithm -> one row per time present.
// time_ns = round(ms * 1e6). Errors name the file, line, field and value.
std::vector<CalibrationRow> convert_deepbench_gemm(std::string_view text, std::string_view file);
std::vector<CalibrationRow> convert_deepbench_conv(std::string_view text, std::string_view file);

}  // namespace mutwo::costmodel
