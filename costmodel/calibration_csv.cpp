#include "costmodel/calibration_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/analytic_cost_model.hpp"
#include "costmodel/deepbench_csv.hpp"
#include "costmodel/device_catalog.hpp"
#include "costmodel/kineto_calibration.hpp"
#include "costmodel/neusight_csv.hpp"
#include "io/kineto_op_records.hpp"
#include "ir/kernel_precision.hpp"
#include "support/checked_int.hpp"
#include "support/error.hpp"
#include "support/json_reader.hpp"
#include "support/text_file.hpp"

namespace mutwo::costmodel {
namespace {

using ir::KindCategory;

constexpr std::array<std::string_view, 4> kConvKernels{"conv2d_forward", "conv2d_backward_data",
                                                       "conv2d_backward_filter", ""};

// A calibration CSV row's shape in 64-bit integers, as DeepBench's reader computes it (gemm_work,
// conv_work: an overflow is a FormatError naming the row), and a gemm's flops the format's
// 2*batch*m*n*k. Other kernels' flops are not the shape's (a conv pass's direct count, an op's own).
void check_row_shape(const CalibrationRow& r) {
  if (is_gemm_kernel(r.kernel)) {
    const KernelWork work =
        row_work(r.origin, [&] { return gemm_work(r.m, r.n, r.k, r.precision, r.batch); });
    if (work.flops != r.flops) {
      field_error(r.origin, "flops", std::to_string(r.flops),
                  fmt::format("a gemm's flops are 2*batch*m*n*k = {}", work.flops));
    }
    return;
  }
  (void)row_work(r.origin, [&] {
    (void)support::checked_product({2, r.batch, r.m, r.n, r.k},
                                   fmt::format("{} {}x{}x{}", r.kernel, r.m, r.n, r.k));
    return KernelWork{};
  });
}

}  // namespace

int64_t precision_element_bytes(std::string_view precision) {
  return ir::dtype_size_bytes(ir::kernel_precision(precision).dtype);
}

KernelWork gemm_work(int64_t m, int64_t n, int64_t k, std::string_view precision, int64_t batch) {
  const std::string what = fmt::format("gemm {} x {}x{}x{}", batch, m, n, k);
  // One after another: as arguments of one call their order is the compiler's, and so would be which
  // overflow the error names (gcc and clang differed).
  const int64_t a_elements = support::checked_product({m, k}, what);
  const int64_t b_elements = support::checked_product({k, n}, what);
  const int64_t c_elements = support::checked_product({m, n}, what);
  const int64_t elements =
      support::checked_sum(support::checked_sum(a_elements, b_elements, what), c_elements, what);
  return {batch,
          m,
          n,
          k,
          support::checked_product({2, batch, m, n, k}, what),
          support::checked_product({batch, elements, precision_element_bytes(precision)}, what)};
}

void set_row_work(CalibrationRow& row, const KernelWork& work) {
  row.batch = work.batch;
  row.m = work.m;
  row.n = work.n;
  row.k = work.k;
  row.flops = work.flops;
  row.bytes = work.bytes;
  row.row_elements = work.row_elements;
  row.winograd_tiles = work.winograd_tiles;
}

KernelWork row_work(std::string_view where, const std::function<KernelWork()>& work) {
  try {
    return work();
  } catch (const Error& e) {
    throw FormatError(fmt::format("{}: {}", where, e.what()));
  }
}

std::string_view timing_name(Timing timing) {
  switch (timing) {
    case Timing::kernel:
      return "kernel";
    case Timing::eager_op:
      return "eager-op";
    case Timing::host_paced:
      return "host-paced";
  }
  return "kernel";
}

std::string_view conv_pass_kernel(ConvPass pass) {
  return kConvKernels[static_cast<size_t>(pass)];
}

KernelWork conv_work(const ConvGeometry& g, ConvPass pass, std::string_view precision) {
  for (int64_t v : {g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.stride_h, g.stride_w, g.groups}) {
    if (v < 1) {
      throw Error(fmt::format("convolution {}: sizes, strides and groups must be >= 1", conv_shape_text(g)));
    }
  }
  if (g.c % g.groups != 0 || g.k % g.groups != 0) {
    throw Error(fmt::format("convolution {}: groups must divide C and K", conv_shape_text(g)));
  }
  const int64_t c_group = g.c / g.groups;  // input channels each output sees
  const int64_t k_group = g.k / g.groups;  // outputs each input channel feeds
  if (g.pad_h < 0 || g.pad_w < 0)
    throw Error(fmt::format("convolution {}: padding must be >= 0", conv_shape_text(g)));
  const std::string padded = fmt::format("convolution {}", conv_shape_text(g));
  const int64_t padded_h = support::checked_sum(g.h, support::checked_product({2, g.pad_h}, padded), padded);
  const int64_t padded_w = support::checked_sum(g.w, support::checked_product({2, g.pad_w}, padded), padded);
  if (padded_h < g.r || padded_w < g.s) {
    throw Error(fmt::format("convolution {}: filter {}x{} larger than the padded input {}x{}",
                            conv_shape_text(g), g.r, g.s, padded_h, padded_w));
  }
  const int64_t p = (padded_h - g.r) / g.stride_h + 1;  // output height
  const int64_t q = (padded_w - g.s) / g.stride_w + 1;  // output width
  KernelWork work;
  const std::string what = fmt::format("convolution {}", conv_shape_text(g));
  const auto product = [&](std::initializer_list<int64_t> f) { return support::checked_product(f, what); };
  switch (pass) {
    case ConvPass::forward:
      work.m = product({g.n, p, q}), work.n = g.k, work.k = product({c_group, g.r, g.s});
      break;
    case ConvPass::backward_data:
      work.m = product({g.n, g.h, g.w}), work.n = g.c, work.k = product({k_group, g.r, g.s});
      break;
    case ConvPass::backward_filter:
      work.m = g.k, work.n = product({c_group, g.r, g.s}), work.k = product({g.n, p, q});
      break;
  }
  work.flops = product({2, g.n, g.k, p, q, c_group, g.r, g.s});
  if (conv_variant(g.r, g.s, g.stride_h, g.stride_w, 1, 1, g.groups) == kConv3x3s1Variant) {
    const bool input_image = pass == ConvPass::backward_data;
    work.winograd_tiles = winograd_tiles(g.n, input_image ? g.h : p, input_image ? g.w : q);
  }
  const int64_t bytes = support::checked_sum(
      support::checked_sum(product({g.n, g.c, g.h, g.w}), product({g.k, c_group, g.r, g.s}), what),
      product({g.n, g.k, p, q}), what);
  work.bytes = product({bytes, precision_element_bytes(precision)});
  return work;
}

int64_t winograd_tiles(int64_t n, int64_t p, int64_t q) {
  if (n < 1 || p < 1 || q < 1) {
    throw Error(fmt::format("Winograd tiles of {} images of {}x{}: each size must be >= 1", n, p, q));
  }
  constexpr int64_t kOutputTile = 4;  // F(4x4, 3x3)
  return support::checked_product(
      {n, (p + kOutputTile - 1) / kOutputTile, (q + kOutputTile - 1) / kOutputTile}, "Winograd tiles");
}

std::optional<ConvGeometry> parse_conv_shape_text(std::string_view text) {
  // Each field "name=v" or "name=vxv" in conv_shape_text's order; groups optional at the end.
  const auto number = [](std::string_view t, int64_t& out) {
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && end == t.data() + t.size();
  };
  ConvGeometry g;
  const std::vector<std::pair<std::string_view, std::vector<int64_t*>>> fields{
      {"N", {&g.n}},
      {"C", {&g.c}},
      {"H", {&g.h}},
      {"W", {&g.w}},
      {"K", {&g.k}},
      {"R", {&g.r}},
      {"S", {&g.s}},
      {"pad", {&g.pad_h, &g.pad_w}},
      {"stride", {&g.stride_h, &g.stride_w}},
      {"groups", {&g.groups}}};
  size_t field = 0;
  for (std::string_view rest = text; !rest.empty();) {
    const size_t space = rest.find(' ');
    const std::string_view token = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    if (field == fields.size()) return std::nullopt;
    const auto& [name, out] = fields[field++];
    if (token.size() <= name.size() || token.substr(0, name.size()) != name || token[name.size()] != '=')
      return std::nullopt;
    std::string_view value = token.substr(name.size() + 1);
    if (out.size() == 2) {
      const size_t x = value.find('x');
      if (x == std::string_view::npos || !number(value.substr(0, x), *out[0])) return std::nullopt;
      value = value.substr(x + 1);
    }
    if (!number(value, *out.back())) return std::nullopt;
  }
  if (field < fields.size() - 1) return std::nullopt;  // all but groups are required
  return g;
}

int64_t row_winograd_tiles(const CalibrationRow& row) {
  if (!is_conv_pass_kernel(row.kernel) || row.variant != kConv3x3s1Variant) return 0;
  for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter}) {
    if (conv_pass_kernel(pass) != row.kernel) continue;
    if (const std::optional<ConvGeometry> g = parse_conv_shape_text(row.shape)) {
      try {
        const KernelWork work = conv_work(*g, pass, row.precision);
        if (work.m == row.m && work.n == row.n && work.k == row.k) return work.winograd_tiles;
      } catch (const Error&) {
        // A shape text that names no valid convolution: the bound below.
      }
    }
    // Images whose sides are multiples of 4: the fewest tiles its pixels fill.
    const int64_t pixels = pass == ConvPass::backward_filter ? row.k : row.m;
    return std::max<int64_t>(1, pixels / 16 + (pixels % 16 != 0 ? 1 : 0));
  }
  return 0;
}

std::string conv_shape_text(const ConvGeometry& g) {
  std::string text = fmt::format("N={} C={} H={} W={} K={} R={} S={} pad={}x{} stride={}x{}", g.n, g.c, g.h,
                                 g.w, g.k, g.r, g.s, g.pad_h, g.pad_w, g.stride_h, g.stride_w);
  if (g.groups != 1) text += fmt::format(" groups={}", g.groups);
  return text;
}

std::string_view conv_variant(int64_t r, int64_t s, int64_t stride_h, int64_t stride_w, int64_t dilation_h,
                              int64_t dilation_w, int64_t groups) {
  if (groups > 1) return "grouped";
  if (dilation_h != 1 || dilation_w != 1) return kGeneralConvVariant;
  const bool unit_stride = stride_h == 1 && stride_w == 1;
  if (r == 3 && s == 3 && unit_stride) return kConv3x3s1Variant;
  if (r == 1 && s == 1) return unit_stride ? "1x1s1" : "1x1-strided";
  return kGeneralConvVariant;
}

const std::vector<std::string>& conv_variants() {
  static const std::vector<std::string> names{std::string(kConv3x3s1Variant), "1x1s1", "1x1-strided",
                                              "grouped", std::string(kGeneralConvVariant)};
  return names;
}

const std::vector<std::string>& calibration_precisions() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const ir::KernelPrecisionInfo& p : ir::kernel_precisions()) out.emplace_back(p.name);
    return out;
  }();
  return names;
}

bool is_gemm_kernel(std::string_view kernel) {
  return kernel == kGemmKernel;
}

KindCategory parse_category(std::string_view name) {
  std::vector<std::string_view> valid;
  for (size_t i = 0; i < kKindCategoryCount; ++i) {
    const KindCategory c = static_cast<KindCategory>(i);
    if (ir::category_name(c) == name) return c;
    valid.push_back(ir::category_name(c));
  }
  throw UnknownNameError(fmt::format("unknown category '{}'; valid: {}", name, fmt::join(valid, ", ")));
}

bool valid_kernel_variant(std::string_view kernel, std::string_view variant) {
  if (!is_conv_pass_kernel(kernel)) return variant.empty();
  const auto& variants = conv_variants();
  return std::find(variants.begin(), variants.end(), variant) != variants.end();
}

bool is_conv_pass_kernel(std::string_view kernel) {
  return std::find(kConvKernels.begin(), kConvKernels.end(), kernel) != kConvKernels.end() && !kernel.empty();
}

KindCategory kernel_category(std::string_view kernel) {
  if (is_gemm_kernel(kernel)) return KindCategory::matmul;
  for (std::string_view conv : kConvKernels) {
    if (!conv.empty() && kernel == conv) return KindCategory::conv;
  }
  try {
    return ir::kind_category(ir::parse_kind(kernel));
  } catch (const UnknownNameError&) {
    throw UnknownNameError(fmt::format(
        "unknown kernel '{}'; valid: gemm, conv2d_forward, conv2d_backward_data, conv2d_backward_filter or a "
        "mutwo op kind (linear, relu, ...)",
        kernel));
  }
}

double max_measured_flops_per_ns() {
  static const double bound = [] {
    double fastest = 0;
    for (const DeviceSpec& d : builtin_devices().devices()) {
      fastest = std::max(
          {fastest, d.fp32_flops_per_ns, d.tf32_flops_per_ns, d.half_flops_per_ns, d.fp64_flops_per_ns});
    }
    return 10 * fastest;
  }();
  return bound;
}

void check_measured_time(const CalibrationRow& row, std::string_view field, std::string_view value) {
  const std::string& where = row.origin.empty() ? std::string("calibration row") : row.origin;
  const std::string text = value.empty() ? std::to_string(row.time_ns) : std::string(value);
  if (row.time_ns > ir::kMaxOpNs) {
    field_error(
        where, field, text,
        fmt::format("must be at most {} ns ({:g} ms): no kernel runs that long", ir::kMaxOpNs, kMaxKernelMs));
  }
  const double rate = static_cast<double>(row.flops) / static_cast<double>(row.time_ns);
  if (row.time_ns > 0 && rate > max_measured_flops_per_ns()) {
    field_error(where, field, text,
                fmt::format("{} FLOPs in {} ns is {:.3g} FLOP/ns, more than {:.3g} (10 x the fastest catalog "
                            "GPU's peak): not a measured time",
                            row.flops, row.time_ns, rate, max_measured_flops_per_ns()));
  }
}

void validate_calibration_row(const CalibrationRow& row) {
  const std::string& where = row.origin.empty() ? std::string("calibration row") : row.origin;
  if (row.device != kHostCpuDevice && !builtin_devices().contains(row.device)) {
    field_error(where, "device", row.device,
                fmt::format("not a catalog device; valid: {} (or {}: host CPU timings)",
                            fmt::join(builtin_devices().names(), ", "), kHostCpuDevice));
  }
  const auto& precisions = calibration_precisions();
  if (std::find(precisions.begin(), precisions.end(), row.precision) == precisions.end()) {
    field_error(where, "precision", row.precision, fmt::format("valid: {}", fmt::join(precisions, ", ")));
  }
  KindCategory implied{};
  try {
    implied = kernel_category(row.kernel);
  } catch (const UnknownNameError& e) {
    field_error(where, "kernel", row.kernel, e.what());
  }
  if (!valid_kernel_variant(row.kernel, row.variant)) {
    field_error(
        where, "variant", row.variant,
        is_conv_pass_kernel(row.kernel)
            ? fmt::format("a conv kernel's shape class; valid: {}", fmt::join(conv_variants(), ", "))
            : fmt::format("only the conv2d_* kernels have one; '{}' must leave it empty", row.kernel));
  }
  if (implied != row.category) {
    field_error(where, "category", ir::category_name(row.category),
                fmt::format("kernel '{}' is in category '{}'", row.kernel, ir::category_name(implied)));
  }
  if (row.batch < 1) field_error(where, "batch", std::to_string(row.batch), "must be >= 1");
  if (row.batch != 1 && !is_gemm_kernel(row.kernel)) {
    field_error(where, "batch", std::to_string(row.batch),
                "only a gemm computes a batch of products; must be 1");
  }
  if (row.m < 1) field_error(where, "m", std::to_string(row.m), "must be >= 1");
  if (row.n < 1) field_error(where, "n", std::to_string(row.n), "must be >= 1");
  if (row.k < 1) field_error(where, "k", std::to_string(row.k), "must be >= 1");
  if (row.flops < 0) field_error(where, "flops", std::to_string(row.flops), "must be >= 0");
  if (row.bytes < 0) field_error(where, "bytes", std::to_string(row.bytes), "must be >= 0");
  if (row.time_ns < 1) field_error(where, "time_ns", std::to_string(row.time_ns), "must be > 0");
}

std::vector<CalibrationRow> parse_calibration_csv(std::string_view text, std::string_view file) {
  // Version 1 has no batch and no timing column: every other field moves up.
  bool v1 = false;
  for (const auto& [number, line] : support::numbered_lines(text)) {
    if (is_blank_or_comment(line)) continue;
    v1 = line == kCalibrationCsvHeaderV1;
    break;
  }
  std::vector<CalibrationRow> rows;
  const std::string_view header = v1 ? kCalibrationCsvHeaderV1 : kCalibrationCsvHeader;
  for_each_record(text, file, header, [&](const std::string& where, const std::vector<std::string>& f) {
    CalibrationRow r;
    r.origin = where;
    r.device = f[0];
    r.precision = f[1];
    r.kernel = f[2];
    r.variant = f[3];
    try {
      r.category = parse_category(f[4]);
    } catch (const UnknownNameError& e) {
      field_error(where, "category", f[4], e.what());
    }
    size_t i = 5;
    if (!v1) r.batch = parse_int(where, "batch", f[i++]);
    r.m = parse_int(where, "m", f[i++]);
    r.n = parse_int(where, "n", f[i++]);
    r.k = parse_int(where, "k", f[i++]);
    r.flops = parse_int(where, "flops", f[i++]);
    r.bytes = parse_int(where, "bytes", f[i++]);
    r.time_ns = parse_int(where, "time_ns", f[i++]);
    if (!v1) {
      const std::string& timing = f[i++];
      bool known = false;
      for (Timing t : {Timing::kernel, Timing::eager_op, Timing::host_paced}) {
        if (timing == timing_name(t)) r.timing = t, known = true;
      }
      if (!known) field_error(where, "timing", timing, "valid: kernel, eager-op, host-paced");
    }
    r.source = f[i++];
    r.shape = f[i++];
    validate_calibration_row(r);
    check_measured_time(r);
    check_row_shape(r);
    r.winograd_tiles = row_winograd_tiles(r);
    rows.push_back(std::move(r));
  });
  return rows;
}

std::string calibration_csv_text(const std::vector<CalibrationRow>& rows) {
  std::string out(kCalibrationCsvHeader);
  out.push_back('\n');
  for (const CalibrationRow& r : rows) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.device),
                       csv_field(r.precision), csv_field(r.kernel), csv_field(r.variant),
                       ir::category_name(r.category), r.batch, r.m, r.n, r.k, r.flops, r.bytes, r.time_ns,
                       timing_name(r.timing), csv_field(r.source), csv_field(r.shape));
  }
  return out;
}

std::vector<CalibrationRow> read_calibration_input(const std::string& path, const std::string& trace_device,
                                                   std::string* note) {
  return parse_calibration_input(support::read_text_file(path, "calibration file"), path, trace_device, note);
}

std::vector<CalibrationRow> parse_calibration_input(const std::string& text, const std::string& path,
                                                    const std::string& trace_device, std::string* note) {
  if (note) note->clear();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    const io::KinetoOpRecords records = io::kineto_op_records(support::parse_json_document(text, path), path);
    std::string device = match_device(records.device).value_or("");
    if (device.empty()) device = trace_device;
    if (device.empty()) {
      throw FormatError(
          records.device.empty()
              ? fmt::format("{}: the trace names no GPU (no deviceProperties): name the catalog device "
                            "it ran on with --device",
                            path)
              : fmt::format("{}: the trace's GPU '{}' is not a catalog device: name the catalog device "
                            "it ran on with --device",
                            path, records.device));
    }
    const std::string file = std::filesystem::path(path).filename().string();
    KinetoCalibration k = kineto_calibration_rows(records, device, file);
    if (note) {
      std::vector<std::string> untyped;
      for (const auto& [name, count] : k.skipped) untyped.push_back(fmt::format("{} {}", name, count));
      *note = fmt::format(
          "{}: {} rows on {} from {} shaped ops with kernels ({:.3f} of {:.3f} GPU ms typed); not typed: {}",
          file, k.rows.size(), device, k.ops, static_cast<double>(k.typed_gpu_ns) / 1e6,
          static_cast<double>(k.gpu_ns) / 1e6,
          untyped.empty() ? std::string("none") : fmt::format("{}", fmt::join(untyped, ", ")));
    }
    return std::move(k.rows);
  }
  for (const auto& [number, line] : support::numbered_lines(text)) {
    if (is_blank_or_comment(line)) continue;
    if (line == kCalibrationCsvHeader || line == kCalibrationCsvHeaderV1)
      return parse_calibration_csv(text, path);
    if (line == kDeepBenchGemmHeader) return convert_deepbench_gemm(text, path);
    if (line == kDeepBenchConvHeader) return convert_deepbench_conv(text, path);
    if (is_neusight_header(line)) return convert_neusight_csv(text, path);
    throw FormatError(
        fmt::format("{}:{}: header '{}' is neither the calibration format ('{}') nor DeepBench's gemm.csv or "
                    "conv.csv nor "
                    "NeuSight's operator CSV (nor a PyTorch profiler trace)",
                    path, number, line, kCalibrationCsvHeader));
  }
  throw FormatError(fmt::format("{}: empty file: no header", path));
}

}  // namespace mutwo::costmodel
