#include "ir/bench_ops.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/kernel_precision.hpp"
#include "support/error.hpp"

namespace mutwo::ir {
namespace {

bool is_conv(std::string_view kernel) {
  return kernel.starts_with("conv2d_");
}

// A convolution of a zoo model: C, H=W, K, R=S, pad, stride, groups.
struct ConvLayer {
  std::string_view stage;
  int64_t c, hw, k, rs, pad, stride, groups = 1;
};

// Every distinct convolution of ResNet-50 at 224x224 (downsampling 1x1s included); ResNet-18/34's
// 3x3s are the same shapes as the bottlenecks' 3x3s.
constexpr std::array<ConvLayer, 23> kResNet50Convs{{
    {"stem", 3, 224, 64, 7, 3, 2},    {"res2", 64, 56, 64, 1, 0, 1},     {"res2", 64, 56, 64, 3, 1, 1},
    {"res2", 64, 56, 256, 1, 0, 1},   {"res2", 256, 56, 64, 1, 0, 1},    {"res3", 256, 56, 128, 1, 0, 1},
    {"res3", 128, 56, 128, 3, 1, 2},  {"res3", 128, 28, 128, 3, 1, 1},   {"res3", 128, 28, 512, 1, 0, 1},
    {"res3", 512, 28, 128, 1, 0, 1},  {"res3", 256, 56, 512, 1, 0, 2},   {"res4", 512, 28, 256, 1, 0, 1},
    {"res4", 256, 28, 256, 3, 1, 2},  {"res4", 256, 14, 256, 3, 1, 1},   {"res4", 256, 14, 1024, 1, 0, 1},
    {"res4", 1024, 14, 256, 1, 0, 1}, {"res4", 512, 28, 1024, 1, 0, 2},  {"res5", 1024, 14, 512, 1, 0, 1},
    {"res5", 512, 14, 512, 3, 1, 2},  {"res5", 512, 7, 512, 3, 1, 1},    {"res5", 512, 7, 2048, 1, 0, 1},
    {"res5", 2048, 7, 512, 1, 0, 1},  {"res5", 1024, 14, 2048, 1, 0, 2},
}};

// MobileNet-V2's (torchvision, 224x224) convolutions at 112x112 and 56x56: the stem, the narrow 1x1
// expansions and projections and the depthwise 3x3s between them. The H200 lease's mobilenet-v2
// step spent most of its convolution time in them (the 1x1 from 16 to 96 channels at 112x112:
// 11.6 ms for 4 models' backward), shapes the ResNet-50 grid never times.
constexpr std::array<ConvLayer, 10> kMobileNetV2Convs{{
    {"stem", 3, 224, 32, 3, 1, 2},
    {"112", 32, 112, 32, 3, 1, 1, 32},
    {"112", 32, 112, 16, 1, 0, 1},
    {"112", 16, 112, 96, 1, 0, 1},
    {"112", 96, 112, 96, 3, 1, 2, 96},
    {"56", 96, 56, 24, 1, 0, 1},
    {"56", 24, 56, 144, 1, 0, 1},
    {"56", 144, 56, 144, 3, 1, 1, 144},
    {"56", 144, 56, 24, 1, 0, 1},
    {"56", 144, 56, 144, 3, 1, 2, 144},
}};

std::vector<BenchShape> gemm_grid(std::string_view) {
  std::vector<BenchShape> out;
  for (int64_t m = 64; m <= 8192; m *= 2) {
    for (int64_t n = 64; n <= 8192; n *= 2) {
      for (int64_t k = 64; k <= 8192; k *= 2) out.push_back({"gemm", {m, n, k}, "pow2"});
    }
  }
  // DeepBench's training GEMMs (NN layout; DeepSpeech, speaker ID, language modelling).
  for (int64_t mk : {1760, 2048, 2560, 4096}) {
    for (int64_t n : {16, 32, 64, 128, 7000}) out.push_back({"gemm", {mk, n, mk}, "DeepBench"});
    out.push_back({"gemm", {5124, 9124, mk}, "DeepBench"});
    out.push_back({"gemm", {35, 8457, mk}, "DeepBench"});
  }
  for (auto [m, k] : {std::pair<int64_t, int64_t>{3072, 1024}, {7680, 2560}}) {
    for (int64_t n : {16, 128, 24000}) out.push_back({"gemm", {m, n, k}, "DeepBench"});
  }
  for (auto [m, k] : {std::pair<int64_t, int64_t>{4608, 1536}, {6144, 2048}, {8448, 2816}}) {
    out.push_back({"gemm", {m, 24000, k}, "DeepBench"});
  }
  for (int64_t m : {512, 1024}) out.push_back({"gemm", {m, 16, 500000}, "DeepBench"});
  // Transformer layers at 8 x 512 tokens (m = 4096): BERT-base/-large projections and FFNs, fused
  // QKV, GPT-2's vocabulary projection.
  for (auto [n, k] : {std::pair<int64_t, int64_t>{768, 768},
                      {2304, 768},
                      {3072, 768},
                      {768, 3072},
                      {1024, 1024},
                      {3072, 1024},
                      {4096, 1024},
                      {1024, 4096},
                      {50257, 768}}) {
    out.push_back({"gemm", {4096, n, k}, "transformer"});
  }
  return out;
}

std::vector<BenchShape> conv_grid(std::string_view kernel) {
  std::vector<BenchShape> out;
  for (int64_t n : {16, 32, 64}) {
    for (const ConvLayer& l : kResNet50Convs) {
      out.push_back({std::string(kernel),
                     {n, l.c, l.hw, l.hw, l.k, l.rs, l.rs, l.pad, l.stride, l.groups},
                     fmt::format("resnet50 {}", l.stage)});
    }
    for (const ConvLayer& l : kMobileNetV2Convs) {
      out.push_back({std::string(kernel),
                     {n, l.c, l.hw, l.hw, l.k, l.rs, l.rs, l.pad, l.stride, l.groups},
                     fmt::format("mobilenet-v2 {}", l.stage)});
    }
  }
  return out;
}

std::vector<BenchShape> rows_cols_grid(std::string_view kernel) {
  std::vector<BenchShape> out;
  for (int64_t rows : {1024, 4096, 16384, 65536}) {
    for (int64_t cols : {256, 768, 1024, 4096})
      out.push_back({std::string(kernel), {rows, cols}, "rows x cols"});
  }
  return out;
}

std::vector<BenchShape> batchnorm_grid(std::string_view) {
  // ResNet-50's batch-normalised activations: channels and spatial size.
  constexpr std::array<std::pair<int64_t, int64_t>, 9> kActivations{
      {{64, 112}, {64, 56}, {256, 56}, {128, 28}, {512, 28}, {256, 14}, {1024, 14}, {512, 7}, {2048, 7}}};
  std::vector<BenchShape> out;
  for (int64_t n : {16, 64}) {
    for (auto [c, hw] : kActivations) out.push_back({"batchnorm2d", {n, c, hw, hw}, "resnet50"});
  }
  return out;
}

// A kernel: its dims count, whether tf32 changes its math, its default grid.
struct KernelInfo {
  std::string_view name;
  size_t dims;
  bool gemm_like;
  std::vector<BenchShape> (*grid)(std::string_view kernel);
};

constexpr std::array<KernelInfo, 10> kKernels{{{"gemm", 3, true, gemm_grid},
                                               {"conv2d_forward", 10, true, conv_grid},
                                               {"conv2d_backward_data", 10, true, conv_grid},
                                               {"conv2d_backward_filter", 10, true, conv_grid},
                                               {"relu", 2, false, rows_cols_grid},
                                               {"gelu", 2, false, rows_cols_grid},
                                               {"add", 2, false, rows_cols_grid},
                                               {"softmax", 2, false, rows_cols_grid},
                                               {"layernorm", 2, false, rows_cols_grid},
                                               {"batchnorm2d", 4, false, batchnorm_grid}}};

const KernelInfo& info(std::string_view kernel) {
  for (const KernelInfo& k : kKernels) {
    if (k.name == kernel) return k;
  }
  throw UnknownNameError(
      fmt::format("unknown kernel '{}'; valid: {}", kernel, fmt::join(bench_kernel_names(), ", ")));
}

// A handful of tiny shapes, by the kernel's dims count.
std::vector<BenchShape> quick_grid(std::string_view kernel, size_t dims) {
  const std::string name(kernel);
  switch (dims) {
    case 3:
      return {{name, {64, 64, 64}, "quick"}, {name, {128, 32, 96}, "quick"}};
    case 10:
      return {{name, {2, 3, 16, 16, 8, 3, 3, 1, 1, 1}, "quick"},
              {name, {2, 8, 8, 8, 16, 1, 1, 0, 2, 1}, "quick"},
              {name, {2, 8, 8, 8, 8, 3, 3, 1, 1, 8}, "quick"}};  // depthwise
    case 4:
      return {{name, {2, 8, 8, 8}, "quick"}};
    default:
      return {{name, {64, 128}, "quick"}, {name, {256, 96}, "quick"}};
  }
}

}  // namespace

const std::vector<std::string>& bench_kernel_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const KernelInfo& k : kKernels) out.emplace_back(k.name);
    return out;
  }();
  return names;
}

void check_bench_kernel(std::string_view kernel) {
  (void)info(kernel);
}

size_t bench_dims_count(std::string_view kernel) {
  return info(kernel).dims;
}

void validate_bench_shape(const BenchShape& shape) {
  const size_t count = bench_dims_count(shape.kernel);
  const std::string where = fmt::format("kernel '{}' dims [{}]", shape.kernel, fmt::join(shape.dims, ","));
  if (shape.dims.size() != count) throw Error(fmt::format("{}: expected {} dims", where, count));
  for (size_t i = 0; i < shape.dims.size(); ++i) {
    const bool is_pad = is_conv(shape.kernel) && i == 7;
    if (shape.dims[i] < (is_pad ? 0 : 1)) {
      throw Error(fmt::format("{}: dim {} must be >= {}", where, i, is_pad ? 0 : 1));
    }
  }
  if (is_conv(shape.kernel)) {
    const BenchConv c = bench_conv(shape);
    if (c.h + 2 * c.pad < c.r || c.w + 2 * c.pad < c.s) {
      throw Error(fmt::format("{}: filter {}x{} larger than the padded input {}x{}", where, c.r, c.s,
                              c.h + 2 * c.pad, c.w + 2 * c.pad));
    }
    if (c.c % c.groups != 0 || c.k % c.groups != 0) {
      throw Error(fmt::format("{}: groups {} must divide C = {} and K = {}", where, c.groups, c.c, c.k));
    }
  }
}

bool bench_precision_applies(std::string_view kernel, std::string_view precision) {
  return kernel_precision(precision).id != KernelPrecision::tf32 || info(kernel).gemm_like;
}

BenchConv bench_conv(const BenchShape& shape) {
  if (!is_conv(shape.kernel) || shape.dims.size() != 10) {
    throw Error(
        fmt::format("kernel '{}' with {} dims is not a convolution", shape.kernel, shape.dims.size()));
  }
  const auto& d = shape.dims;
  return {d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9]};
}

std::vector<BenchShape> default_bench_grid(std::string_view kernel, bool quick) {
  const KernelInfo& k = info(kernel);
  return quick ? quick_grid(kernel, k.dims) : k.grid(kernel);
}

}  // namespace mutwo::ir
