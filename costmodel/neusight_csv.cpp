#include "costmodel/neusight_csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/bench_rows.hpp"
#include "costmodel/csv_fields.hpp"
#include "costmodel/device_catalog.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::costmodel {
namespace {

constexpr std::string_view kHeaderStart = "OPName,Latency,Device,";
constexpr std::string_view kSourcePrefix = "neusight ";

// Decimal digits alone (parse_int: stoll took " 1" and "+1").
int64_t positive_int(std::string_view where, std::string_view field, const std::string& value) {
  const int64_t v = parse_int(where, field, value);
  if (v < 1 || v > (int64_t{1} << 31)) field_error(where, field, value, "must be from 1 to 2^31");
  return v;
}

// Latency in ms -> whole ns.
int64_t latency_ns(std::string_view where, const std::string& value) {
  double ms = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
  if (value.empty() || ec != std::errc{} || end != value.data() + value.size() || !std::isfinite(ms)) {
    field_error(where, "Latency", value, "must be a number (milliseconds)");
  }
  if (!(ms > 0) || ms > kMaxKernelMs) field_error(where, "Latency", value, "must be > 0 and at most 1e6 ms");
  return std::max<int64_t>(1, std::llround(ms * 1e6));
}

struct OpMapping {
  std::string_view kernel;  // the calibration row's kernel
  bool two_inputs;          // elementwise ops reading two [B, H] tensors
};
const std::map<std::string_view, OpMapping>& vector_ops() {
  static const std::map<std::string_view, OpMapping> ops{
      {"ln", {"layernorm", false}}, {"softmax", {"softmax", false}}, {"add", {"add", true}},
      {"mul", {"mul", true}},       {"div", {"mul", true}},          {"pow", {"mul", true}},
      {"relu", {"relu", false}},    {"gelu", {"gelu", false}},       {"tanh", {"tanh", false}},
      {"addu", {"relu", false}},    {"mulu", {"relu", false}},       {"divu", {"relu", false}},
      {"powu", {"relu", false}}};
  return ops;
}

}  // namespace

bool is_neusight_bmm(const CalibrationRow& row) {
  return row.source == fmt::format("{}bmm", kSourcePrefix);
}

bool is_neusight_header(std::string_view line) {
  return line.substr(0, kHeaderStart.size()) == kHeaderStart;
}

std::vector<CalibrationRow> convert_neusight_csv(std::string_view text, std::string_view file) {
  std::vector<CalibrationRow> rows;
  std::vector<std::string> header;
  std::map<std::string, size_t> column;
  for (const auto& [number, line] : support::numbered_lines(text)) {
    if (line.empty()) continue;
    const std::string where = fmt::format("{}:{}", file, number);
    if (header.empty()) {
      if (!is_neusight_header(line)) {
        throw FormatError(
            fmt::format("{}: header '{}' is not NeuSight's (it starts '{}')", where, line, kHeaderStart));
      }
      header = split_csv_line(line, where);
      for (size_t i = 0; i < header.size(); ++i) {
        // A column named twice: the last one was read, the first ignored unsaid.
        if (!column.emplace(header[i], i).second)
          throw FormatError(fmt::format("{}: column '{}' is named twice in the header", where, header[i]));
      }
      continue;
    }
    const std::vector<std::string> f = split_csv_line(line, where);
    if (f.size() != header.size()) {
      throw FormatError(fmt::format("{}: expected {} fields, got {}", where, header.size(), f.size()));
    }
    const auto get = [&](const std::string& name) -> const std::string& {
      const auto it = column.find(name);
      if (it == column.end()) {
        throw FormatError(
            fmt::format("{}: op '{}' needs a column '{}', which the header lacks", where, f[0], name));
      }
      return f[it->second];
    };
    const auto dim = [&](const std::string& name) { return positive_int(where, name, get(name)); };
    CalibrationRow r;
    r.origin = where;
    const std::string& product = get("Device");
    const std::optional<std::string> device = match_device(product);
    if (!device) field_error(where, "Device", product, "not a GPU of the device catalog (match_device)");
    r.device = *device;
    r.precision = "fp32";
    r.time_ns = latency_ns(where, get("Latency"));
    r.timing = Timing::eager_op;
    const std::string& op = f[0];
    r.source = std::string(kSourcePrefix) + op;
    if (op == "linear" || op == "bmm") {
      const int64_t b = dim("B"), m = dim("M"), n = dim("N"), k = dim("K");
      if (op == "linear" && b != 1) field_error(where, "B", get("B"), "linear rows have B = 1");
      // N is the reduction: [B, M, N] x [B, N, K] -> [B, M, K].
      set_row_work(r, row_work(where, [&] { return gemm_work(m, k, n, r.precision, b); }));
      if (op == "linear") r.bytes += k * precision_element_bytes(r.precision);  // the bias
      r.kernel = "gemm";
      r.category = ir::KindCategory::matmul;
      r.shape = fmt::format("B={} M={} N={} K={} {}", b, m, n, k,
                            column.count("Kernel Name") ? get("Kernel Name") : "");
    } else if (op == "conv") {
      const int64_t n = dim("B"), c = dim("Input_Channel"), k = dim("Output_Channel");
      const int64_t rs = dim("Kernel_Szie"), hw = dim("Input_Size"), stride = dim("Stride");
      const std::string& pad_text = get("Padding");
      const int64_t pad = pad_text == "0" ? 0 : positive_int(where, "Padding", pad_text);
      const ConvGeometry g{n, c, hw, hw, k, rs, rs, pad, pad, stride, stride};
      set_row_work(r, row_work(where, [&] { return conv_work(g, ConvPass::forward, r.precision); }));
      r.kernel = std::string(conv_pass_kernel(ConvPass::forward));
      r.variant = std::string(conv_variant(rs, rs, stride, stride));
      r.category = ir::KindCategory::conv;
      r.shape = conv_shape_text(g);
    } else {
      const auto it = vector_ops().find(op);
      if (it == vector_ops().end()) {
        std::vector<std::string_view> valid{"linear", "bmm", "conv"};
        for (const auto& [name, _] : vector_ops()) valid.push_back(name);
        field_error(where, "OPName", op, fmt::format("valid: {}", fmt::join(valid, ", ")));
      }
      const int64_t b = dim("B"), h = dim("H");
      set_row_work(r, row_work(where, [&] { return op_kind_work(it->second.kernel, {b, h}, r.precision); }));
      r.kernel = std::string(it->second.kernel);
      r.category = kernel_category(r.kernel);
      r.shape = fmt::format("B={} H={}", b, h);
    }
    validate_calibration_row(r);
    check_measured_time(r, "Latency", get("Latency"));
    rows.push_back(std::move(r));
  }
  if (header.empty()) throw FormatError(fmt::format("{}: empty file: no header", file));
  return rows;
}

}  // namespace mutwo::costmodel
