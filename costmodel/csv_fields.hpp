#pragma once
// Fields of the CSV files the calibration reads (its own format, DeepBench's and NeuSight's sheets,
// the published throughputs): each error names the file and line, the field and the value.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "ir/graph.hpp"
#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::costmodel {

// CSV fields of one line (RFC 4180 quoting, no embedded newlines); `where` names the line in errors.
std::vector<std::string> split_csv_line(std::string_view line, std::string_view where);
// A field as CSV writes it: quoted when it holds a comma or a quote.
std::string csv_field(std::string_view value);

bool is_blank_or_comment(std::string_view line);  // empty, or starting with '#'
// Throws FormatError "<where>: field '<field>' = '<value>': <why>".
[[noreturn]] void field_error(std::string_view where, std::string_view field, std::string_view value,
                              std::string_view why);
int64_t parse_int(std::string_view where, std::string_view field, std::string_view value);
double parse_double(std::string_view where, std::string_view field, std::string_view value);
// A measured kernel time in ms as whole ns (at least 1): > 0 and at most kMaxKernelMs (ir::kMaxOpNs), else
// FormatError.
inline constexpr double kMaxKernelMs = static_cast<double>(ir::kMaxOpNs) / 1e6;
int64_t ms_to_ns(std::string_view where, std::string_view field, std::string_view value);
int64_t positive(std::string_view where, std::string_view field, std::string_view value);  // >= 1
// The first line that is not blank or a comment must be `header`, else FormatError naming the file.
void expect_header(const std::vector<std::pair<int, std::string_view>>& lines, std::string_view header,
                   std::string_view file);

// The data lines after the header, split into exactly `columns` fields.
template <typename Row>
void for_each_record(std::string_view text, std::string_view file, std::string_view header, Row row) {
  const auto lines = support::numbered_lines(text);
  expect_header(lines, header, file);
  const size_t columns = split_csv_line(header, file).size();
  bool seen_header = false;
  for (const auto& [number, line] : lines) {
    if (is_blank_or_comment(line)) continue;
    if (!seen_header) {
      seen_header = true;
      continue;
    }
    const std::string where = fmt::format("{}:{}", file, number);
    std::vector<std::string> fields = split_csv_line(line, where);
    if (fields.size() != columns) {
      throw FormatError(fmt::format("{}: expected {} fields, got {}", where, columns, fields.size()));
    }
    row(where, fields);
  }
}

}  // namespace mutwo::costmodel
