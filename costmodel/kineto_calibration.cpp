#include "costmodel/kineto_calibration.hpp"

#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "costmodel/bench_rows.hpp"
#include "ir/bench_ops.hpp"
#include "ir/tensor.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

std::optional<std::string> precision_of(const std::string& type) {
  if (type == "float") return "fp32";
  if (type == "c10::Half") return "fp16";
  if (type == "c10::BFloat16") return "bf16";
  return std::nullopt;
}

// A shape's elements; GraphError on an overflow (no real tensor has 2^63 elements: a trace's typo).
int64_t product(const std::vector<int64_t>& shape) {
  return ir::element_count(shape);
}

// [elements / last dim, last dim] of a tensor of rank >= 1 with no zero size.
std::optional<std::vector<int64_t>> rows_cols(const std::vector<int64_t>& shape) {
  if (shape.empty() || product(shape) == 0) return std::nullopt;
  return std::vector<int64_t>{product(shape) / shape.back(), shape.back()};
}

// The bench-ops kernel and dims of a record, nullopt when it maps to none.
std::optional<ir::BenchShape> bench_shape(const io::KinetoOpRecord& r) {
  const auto& d = r.input_dims;
  auto dims = [&](size_t i) -> const std::vector<int64_t>& {
    static const std::vector<int64_t> none;
    return i < d.size() ? d[i] : none;
  };
  auto nonzero = [](const std::vector<int64_t>& s) { return !s.empty() && product(s) > 0; };
  if (r.name == "aten::mm" || r.name == "aten::addmm") {
    const size_t a = r.name == "aten::mm" ? 0 : 1;
    const auto& x = dims(a);
    const auto& w = dims(a + 1);
    if (x.size() != 2 || w.size() != 2 || x[1] != w[0] || !nonzero(x) || !nonzero(w)) return std::nullopt;
    return ir::BenchShape{"gemm", {x[0], w[1], x[1]}, ""};
  }
  static const std::map<std::string, std::string> kUnary{{"aten::relu", "relu"},
                                                         {"aten::relu_", "relu"},
                                                         {"aten::gelu", "gelu"},
                                                         {"aten::_softmax", "softmax"},
                                                         {"aten::native_layer_norm", "layernorm"}};
  if (auto it = kUnary.find(r.name); it != kUnary.end()) {
    if (auto rc = rows_cols(dims(0))) return ir::BenchShape{it->second, *rc, ""};
    return std::nullopt;
  }
  if (r.name == "aten::add" || r.name == "aten::add_") {
    if (dims(0) != dims(1)) return std::nullopt;  // broadcasting or a scalar: another kernel
    if (auto rc = rows_cols(dims(0))) return ir::BenchShape{"add", *rc, ""};
    return std::nullopt;
  }
  if (r.name == "aten::native_batch_norm" || r.name == "aten::cudnn_batch_norm") {
    if (dims(0).size() == 4 && nonzero(dims(0))) return ir::BenchShape{"batchnorm2d", dims(0), ""};
  }
  return std::nullopt;
}

// The row before its origin is set: throws Error (an overflowing shape) for the caller to place.
std::optional<CalibrationRow> row_of(const io::KinetoOpRecord& r, const std::string& device) {
  // addmm's first input is the bias; an op recorded with fewer types than that has none to read.
  const size_t typed = r.name == "aten::addmm" ? 1 : 0;
  const std::optional<std::string> precision =
      typed < r.input_types.size() ? precision_of(r.input_types[typed]) : std::nullopt;
  std::optional<CalibrationRow> row;
  if (precision && r.name == "aten::bmm" && r.input_dims.size() >= 2) {
    const auto& a = r.input_dims[0];
    const auto& b = r.input_dims[1];
    if (a.size() == 3 && b.size() == 3 && a[0] == b[0] && a[2] == b[1] && product(a) > 0 && product(b) > 0) {
      // B independent [M, K] x [K, N] products: one gemm row with batch B.
      ir::KernelTiming t{{"gemm", {a[1], b[2], a[2]}, ""}, *precision, r.gpu_ns};
      row = bench_row(t, device);
      set_row_work(*row, gemm_work(a[1], b[2], a[2], *precision, a[0]));
    }
  } else if (precision) {
    if (const auto shape = bench_shape(r)) row = bench_row({*shape, *precision, r.gpu_ns}, device);
  }
  return row;
}

}  // namespace

std::optional<CalibrationRow> kineto_calibration_row(const io::KinetoOpRecord& r, const std::string& device,
                                                     const std::string& file) {
  std::optional<CalibrationRow> row;
  try {
    row = row_of(r, device);
  } catch (const Error& e) {
    throw FormatError(fmt::format("{}: event {} ('{}'): {}", file, r.event, r.name, e.what()));
  }
  if (!row) return std::nullopt;
  row->source = "kineto " + file;
  std::vector<std::string> dims;
  for (const auto& s : r.input_dims) dims.push_back(fmt::format("[{}]", fmt::join(s, ",")));
  row->shape = fmt::format("{} {}", r.name, fmt::join(dims, " "));
  row->origin = fmt::format("{}: event {}", file, r.event);
  validate_calibration_row(*row);
  // As the CSV readers check theirs: a kernel time no GPU reaches is a broken trace, not a measurement.
  check_measured_time(*row, "dur (its kernels, summed)", fmt::format("{} ns", r.gpu_ns));
  return row;
}

KinetoCalibration kineto_calibration_rows(const io::KinetoOpRecords& records, const std::string& device,
                                          const std::string& file) {
  KinetoCalibration out;
  for (const io::KinetoOpRecord& r : records.ops) {
    ++out.ops;
    out.gpu_ns += r.gpu_ns;
    std::optional<CalibrationRow> row = kineto_calibration_row(r, device, file);
    if (!row) {
      ++out.skipped[r.name];
      continue;
    }
    out.typed_gpu_ns += r.gpu_ns;
    out.rows.push_back(std::move(*row));
  }
  return out;
}

}  // namespace mutwo::costmodel
