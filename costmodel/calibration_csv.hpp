#pragma once
// Measured kernel times in mutwo's one calibration CSV format (costmodel/README.md), its reader and
// writer, and converters from foreign measurements (Baidu DeepBench's GEMM and convolution sheets).
//
// Header (exactly these columns, in this order; '#' lines and blank lines are skipped):
//   device,precision,kernel,variant,category,batch,m,n,k,flops,bytes,time_ns,timing,source,shape
// (version 1 of the format, without batch and timing, is still read: batch 1, timing kernel).
// device     catalog name (builtin_devices(): "v100-16gb"), or "cpu" for `mutwo bench-ops` rows
//            timed on the host CPU (read and written, never fitted: they do not calibrate a GPU)
// precision  fp32 | tf32 | fp16 | bf16: the math mode the kernel ran in (fp16: 16-bit inputs and
//            outputs, tensor cores where the GPU has them, 32-bit accumulation)
// kernel     gemm | conv2d_forward | conv2d_backward_data | conv2d_backward_filter | a mutwo op kind
// variant    conv kernels: the convolution's shape class (conv_variant below: 3x3s1, 1x1s1,
//            1x1-strided, grouped, general); every other kernel: empty
// category   the mutwo KindCategory of the kernel (gemm: matmul; conv2d_*: conv; an op kind: its own)
// batch      independent products the kernel computes, >= 1: a batched GEMM's B (torch.bmm, what a
//            horizontally fused linear becomes); 1 for every other kernel
// m, n, k    the kernel's implicit-GEMM shape, each >= 1: output rows, output columns, reduction
//            length (GEMM: M, N, K; conv forward: N*P*Q, K, C*R*S; backward data: N*H*W, C, K*R*S;
//            backward filter: K, C*R*S, N*P*Q); kernels that are not GEMM-like: elements, 1, 1
// flops      as mutwo counts them (GEMM 2*batch*M*N*K; conv: the direct-convolution count
//            2*N*K*P*Q*C*R*S for each of the three passes, as DeepBench reports it)
// bytes      every input and output once, at the precision's element size
// time_ns    measured time, whole ns, > 0
// timing     what time_ns holds: "kernel" (the GPU time of the kernels, launched back to back:
//            DeepBench, `mutwo bench-ops`, profiler traces) or "eager-op" (one PyTorch op called from
//            Python between two CUDA events on an idle GPU, so the host's dispatch of the op is inside
//            it: NeuSight's measurements; the kernel model takes that harness out as a nuisance term)
// source     where the shape comes from (DeepBench's application, a trace's op name); may be empty
// shape      a readable shape string; may be empty
// Fields holding a comma or a double quote are double-quoted, quotes doubled (RFC 4180).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/csv_fields.hpp"
#include "ir/op_kind.hpp"

namespace mutwo::costmodel {

inline constexpr std::string_view kCalibrationCsvHeader =
    "device,precision,kernel,variant,category,batch,m,n,k,flops,bytes,time_ns,timing,source,shape";
// Version 1 (no batch, no timing), read as batch 1 and timing "kernel".
inline constexpr std::string_view kCalibrationCsvHeaderV1 =
    "device,precision,kernel,variant,category,m,n,k,flops,bytes,time_ns,source,shape";

// What a measured time holds (the `timing` column):
//   kernel      the GPU time of kernels launched back to back, the queue kept ahead of the GPU
//               (DeepBench: many launches between two events; profiler traces);
//   eager-op    one PyTorch op timed from Python between two CUDA events on an idle GPU, the host's
//               dispatch inside it (NeuSight): the kernels' time plus the host's;
//   host-paced  each launch between two CUDA events, launched back to back from the host
//               (mutwo bench-ops on a GPU): the kernel's time, or the host's time per launch when
//               that is longer (max, not sum).
enum class Timing : uint8_t { kernel, eager_op, host_paced };
std::string_view timing_name(Timing timing);  // "kernel", "eager-op", "host-paced"

struct CalibrationRow {
  std::string device;
  std::string precision;
  std::string kernel;
  std::string variant;  // conv kernels: conv_variant(); others: empty
  ir::KindCategory category = ir::KindCategory::matmul;
  int64_t batch = 1;
  int64_t m = 1, n = 1, k = 1;
  int64_t flops = 0;
  int64_t bytes = 0;
  int64_t time_ns = 0;
  int64_t row_elements =
      0;  // KernelSample::row_elements (read from NeuSight's softmax rows; not a CSV column)
  int64_t winograd_tiles = 0;  // KernelWork::winograd_tiles (from the conv's geometry; not a CSV column)
  Timing timing = Timing::kernel;
  std::string source;
  std::string shape;
  // Where the row was read from, for messages: "file.csv:12"; empty for rows built in code.
  std::string origin;
};

// The device name of rows timed on the host CPU (`mutwo bench-ops --device cpu`).
inline constexpr std::string_view kHostCpuDevice = "cpu";

// "fp32", "tf32", "fp16", "bf16": the names of ir/kernel_precision.hpp's table.
const std::vector<std::string>& calibration_precisions();
// The kernel name of matrix products (linear, bmm, attention): the only one with a batch count.
inline constexpr std::string_view kGemmKernel = "gemm";
bool is_gemm_kernel(std::string_view kernel);
// The category a kernel name implies: gemm -> matmul, conv2d_* -> conv, an op kind -> its category.
// Throws UnknownNameError naming the valid kernel names.
ir::KindCategory kernel_category(std::string_view kernel);
// conv2d_forward, conv2d_backward_data, conv2d_backward_filter: the kernels that carry a variant.
bool is_conv_pass_kernel(std::string_view kernel);
// Parses a KindCategory name ("matmul"); throws UnknownNameError listing the valid ones.
ir::KindCategory parse_category(std::string_view name);

// A kernel's implicit-GEMM shape and work by the rules above.
struct KernelWork {
  int64_t batch = 1;
  int64_t m = 1, n = 1, k = 1;
  int64_t flops = 0;
  int64_t bytes = 0;
  int64_t row_elements = 0;  // KernelSample::row_elements
  // A 3x3 stride-1 convolution pass (ungrouped): the 4x4 output tiles of Winograd F(4x4, 3x3) over the
  // image the pass computes (the output for forward and weight gradient, the input for data gradient),
  // N x ceil(P / 4) x ceil(Q / 4); 0 for every other kernel (wave_kernel.hpp, winograd_sample).
  int64_t winograd_tiles = 0;
};
// The element size of a precision's tensors: 2 for fp16 and bf16, else 4.
int64_t precision_element_bytes(std::string_view precision);
// GEMM C[m,n] = A[m,k] B[k,n], `batch` of them: flops 2*batch*m*n*k; bytes batch*(m*k + k*n + m*n)
// elements.
KernelWork gemm_work(int64_t m, int64_t n, int64_t k, std::string_view precision, int64_t batch = 1);
// Copies a kernel's work (batch, m, n, k, flops, bytes, row_elements, winograd_tiles) into its row.
void set_row_work(CalibrationRow& row, const KernelWork& work);
// Runs a row's work computation; the Error it throws (an overflowing shape) becomes a FormatError that
// starts with the row's place, "<where>: ".
KernelWork row_work(std::string_view where, const std::function<KernelWork()>& work);

// A convolution (dilation 1): x[N,C,H,W], w[K,C/groups,R,S], y[N,K,P,Q].
struct ConvGeometry {
  int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1;
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1;
  int64_t groups = 1;  // divides C and K; C = K = groups: depthwise
};
enum class ConvPass : uint8_t { forward, backward_data, backward_filter };
// "conv2d_forward", "conv2d_backward_data", "conv2d_backward_filter".
std::string_view conv_pass_kernel(ConvPass pass);
// The pass's m, n, k (above, with C/groups for C in k and in the weight gradient's n, and K/groups
// for K in the data gradient's k: each output sees its group's channels), the direct-convolution
// flops 2*N*K*P*Q*(C/groups)*R*S and bytes of x, w and y. Throws Error when the filter is larger
// than the padded input, a size is < 1 or groups divides not both C and K.
KernelWork conv_work(const ConvGeometry& conv, ConvPass pass, std::string_view precision);
// The 4x4 output tiles Winograd F(4x4, 3x3) cuts N images of P x Q into: N x ceil(P / 4) x ceil(Q / 4)
// (Lavin & Gray, CVPR 2016; cuDNN's WINOGRAD_NONFUSED algorithms, which NeuSight's records name for
// most 3x3 convolutions: tests/fixtures/calibration/neusight/README.md). Throws Error on a size < 1.
int64_t winograd_tiles(int64_t n, int64_t p, int64_t q);
// conv_shape_text's inverse: the geometry of "N=.. C=.. H=.. W=.. K=.. R=.. S=.. pad=AxB stride=AxB
// [groups=G]", nullopt for any other text.
std::optional<ConvGeometry> parse_conv_shape_text(std::string_view text);
// The Winograd tiles of a calibration row read from a CSV (whose columns hold m, n, k, not the image):
// from its shape text where that is conv_shape_text's and agrees with m, n, k; else, for a 3x3 stride-1
// pass, the fewest its pixels fill (sides multiples of 4: ceil(pixels / 16), pixels m, or k for the
// weight gradient); 0 for every other row.
int64_t row_winograd_tiles(const CalibrationRow& row);
// The shape class of a convolution, which decides the algorithm cuDNN's heuristics run and so how
// fast each FLOP goes: "3x3s1" (3x3, stride 1: where cuDNN may pick Winograd, whose arithmetic is
// 2.25-4x below the direct count; Lavin & Gray, CVPR 2016), "1x1s1" (1x1, stride 1: a plain GEMM
// over the pixels), "1x1-strided" (1x1, stride > 1: its backward-data pass scatters into a strided
// input), "grouped" (groups > 1: depthwise and grouped kernels), "general" (everything else,
// dilated ones included). The kernel model (calibration_fit.hpp) is fitted per class.
std::string_view conv_variant(int64_t r, int64_t s, int64_t stride_h, int64_t stride_w,
                              int64_t dilation_h = 1, int64_t dilation_w = 1, int64_t groups = 1);
// "3x3s1", "1x1s1", "1x1-strided", "grouped", "general".
const std::vector<std::string>& conv_variants();
// Whether `variant` is valid for `kernel`: a conv pass kernel needs one of conv_variants(), every
// other kernel none (""). The one rule the CSV reader and the profile reader check.
bool valid_kernel_variant(std::string_view kernel, std::string_view variant);
// The class every variant with too few rows of its own is fitted in (calibration_profile.hpp).
inline constexpr std::string_view kGeneralConvVariant = "general";
// 3x3, stride 1: the class where cuDNN may pick Winograd (the wave model prices it apart).
inline constexpr std::string_view kConv3x3s1Variant = "3x3s1";

// "N=.. C=.. H=.. W=.. K=.. R=.. S=.. pad=PHxPW stride=SHxSW", the shape text of conv rows.
std::string conv_shape_text(const ConvGeometry& conv);

// Checks one row's fields (catalog device, precision, kernel and its category, a conv kernel's
// variant (one of conv_variants()) and no variant on any other kernel, batch/m/n/k >= 1, batch 1 on
// every kernel but gemm,
// flops/bytes >= 0, time_ns > 0): throws FormatError "<origin>: field '<name>' = '<value>' ...".
void validate_calibration_row(const CalibrationRow& row);
// The plausibility of a measured time, checked by the CSV readers (the calibration format's,
// DeepBench's, NeuSight's) after validate_calibration_row: time_ns at most ir::kMaxOpNs (the DeepBench
// reader's kMaxKernelMs), and flops / time_ns at most max_measured_flops_per_ns(); else FormatError
// "<origin>: field 'time_ns' = '<v>': ...". A time whose rate no GPU reaches (a 137-GFLOP GEMM in 1 ns) is a
// typo or a unit slip, not a measurement: fitted, it drove every coefficient to 0. `field` and `value` name
// the column the time was read from ("time_ms", "0.0000001"; default: time_ns).
void check_measured_time(const CalibrationRow& row, std::string_view field = "time_ns",
                         std::string_view value = {});
// 10 x the largest peak (FP32, TF32, FP16/BF16 or FP64) of any catalog GPU, FLOP/ns: B200's dense
// FP16 2,250 TFLOPS gives 2.25e7, far beyond any real kernel (sparsity and FP8/FP4 rates are at most
// 4x the dense FP16 one).
double max_measured_flops_per_ns();

// Parses calibration CSV text; `file` names it in errors: FormatError "<file>:<line>: field
// '<name>' = '<value>': <why>" for a bad field (validate_calibration_row; a gemm's flops other than
// 2*batch*m*n*k), "<file>:<line>: gemm 1 x 2^62x... overflows 64-bit integers" for a shape whose
// work does not fit in int64 (as DeepBench's reader), "<file>:<line>: expected 13 fields, got 9" for a
// short row, "<file>:1: header ..." for a wrong header.
std::vector<CalibrationRow> parse_calibration_csv(std::string_view text, std::string_view file);
// The rows as CSV text, header first, one row a line, in the given order.
std::string calibration_csv_text(const std::vector<CalibrationRow>& rows);

// Reads any calibration input by its content: the calibration format, DeepBench gemm.csv or
// conv.csv, NeuSight's operator CSVs (by header; neusight_csv.hpp), or a PyTorch profiler trace recorded with
// record_shapes (JSON, gzip accepted: kineto_calibration.hpp). A trace's rows are on the catalog device its
// deviceProperties name matches (match_device), else on `trace_device`; neither: FormatError naming the file
// and asking for --device. `note`, when given, receives a line on what a trace yielded ("" otherwise). Throws
// FormatError naming the file when the content is none of these.
std::vector<CalibrationRow> read_calibration_input(const std::string& path,
                                                   const std::string& trace_device = "",
                                                   std::string* note = nullptr);
// The same on text already read (gzip undone); `path` names it in messages.
std::vector<CalibrationRow> parse_calibration_input(const std::string& text, const std::string& path,
                                                    const std::string& trace_device = "",
                                                    std::string* note = nullptr);

}  // namespace mutwo::costmodel
