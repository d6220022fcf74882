#include "costmodel/deepbench_csv.hpp"

#include <array>
#include <map>

#include <fmt/format.h>

#include "costmodel/csv_fields.hpp"

namespace mutwo::costmodel {
namespace {

using ir::KindCategory;

std::string deepbench_precision(std::string_view where, std::string_view value) {
  if (value != "fp32" && value != "fp16")
    field_error(where, "precision", value, "DeepBench rows are fp32 or fp16");
  return std::string(value);
}

}  // namespace

std::string deepbench_device(std::string_view gpu, std::string_view where) {
  static const std::map<std::string_view, std::string_view> kDevices{{"V100", "v100-16gb"},
                                                                     {"P100", "p100-pcie-16gb"},
                                                                     {"T4", "t4"},
                                                                     {"GTX 1080 Ti", "gtx1080ti"},
                                                                     {"Titan Xp", "titan-xp"}};
  const auto it = kDevices.find(gpu);
  if (it == kDevices.end()) field_error(where, "gpu", gpu, "valid: V100, P100, T4, GTX 1080 Ti, Titan Xp");
  return std::string(it->second);
}

std::vector<CalibrationRow> convert_deepbench_gemm(std::string_view text, std::string_view file) {
  std::vector<CalibrationRow> rows;
  for_each_record(text, file, kDeepBenchGemmHeader,
                  [&](const std::string& where, const std::vector<std::string>& f) {
                    CalibrationRow r;
                    r.origin = where;
                    r.device = deepbench_device(f[0], where);
                    r.precision = deepbench_precision(where, f[1]);
                    r.kernel = "gemm";
                    r.category = KindCategory::matmul;
                    r.m = positive(where, "M", f[3]);
                    r.n = positive(where, "N", f[4]);
                    r.k = positive(where, "K", f[5]);
                    for (size_t i : {size_t{6}, size_t{7}}) {
                      if (f[i] != "N" && f[i] != "T")
                        field_error(where, i == 6 ? "a_transpose" : "b_transpose", f[i], "must be N or T");
                    }
                    set_row_work(r, row_work(where, [&] { return gemm_work(r.m, r.n, r.k, r.precision); }));
                    r.time_ns = ms_to_ns(where, "time_ms", f[8]);
                    check_measured_time(r, "time_ms", f[8]);
                    r.source = f[2];
                    r.shape = fmt::format("M={} N={} K={} {}{}", r.m, r.n, r.k, f[6], f[7]);
                    rows.push_back(std::move(r));
                  });
  return rows;
}

std::vector<CalibrationRow> convert_deepbench_conv(std::string_view text, std::string_view file) {
  std::vector<CalibrationRow> rows;
  for_each_record(
      text, file, kDeepBenchConvHeader, [&](const std::string& where, const std::vector<std::string>& f) {
        const std::string device = deepbench_device(f[0], where);
        const std::string precision = deepbench_precision(where, f[1]);
        const int64_t w = positive(where, "W", f[3]), h = positive(where, "H", f[4]),
                      c = positive(where, "C", f[5]);
        const int64_t n = positive(where, "N", f[6]), k = positive(where, "K", f[7]);
        const int64_t s = positive(where, "S", f[8]), r = positive(where, "R", f[9]);
        const int64_t pad_w = parse_int(where, "pad_w", f[10]), pad_h = parse_int(where, "pad_h", f[11]);
        const int64_t stride_w = positive(where, "stride_w", f[12]),
                      stride_h = positive(where, "stride_h", f[13]);
        if (pad_w < 0 || pad_w > (1 << 20)) field_error(where, "pad_w", f[10], "must be from 0 to 2^20");
        if (pad_h < 0 || pad_h > (1 << 20)) field_error(where, "pad_h", f[11], "must be from 0 to 2^20");
        if (w > (int64_t{1} << 40)) field_error(where, "W", f[3], "must be at most 2^40");
        if (h > (int64_t{1} << 40)) field_error(where, "H", f[4], "must be at most 2^40");
        if (h + 2 * pad_h < r || w + 2 * pad_w < s) {
          field_error(where, "R", f[9],
                      fmt::format("filter {}x{} larger than the padded input {}x{}", r, s, h + 2 * pad_h,
                                  w + 2 * pad_w));
        }
        const ConvGeometry conv{n, c, h, w, k, r, s, pad_h, pad_w, stride_h, stride_w};
        const std::string shape = conv_shape_text(conv);
        const std::array<std::string_view, 3> fields{"forward_ms", "backward_data_ms", "backward_filter_ms"};
        for (size_t pass = 0; pass < 3; ++pass) {
          const std::string& time = f[14 + pass];
          if (time.empty()) continue;  // the spreadsheet has no time for this pass
          CalibrationRow row;
          row.origin = where;
          row.device = device;
          row.precision = precision;
          set_row_work(
              row, row_work(where, [&] { return conv_work(conv, static_cast<ConvPass>(pass), precision); }));
          row.kernel = std::string(conv_pass_kernel(static_cast<ConvPass>(pass)));
          row.variant = std::string(conv_variant(r, s, stride_h, stride_w));
          row.category = KindCategory::conv;
          row.time_ns = ms_to_ns(where, fields[pass], time);
          check_measured_time(row, fields[pass], time);
          row.source = f[2];
          row.shape = pass == 0 && !f[17].empty() ? shape + " algo=" + f[17] : shape;
          rows.push_back(std::move(row));
        }
      });
  return rows;
}

}  // namespace mutwo::costmodel
