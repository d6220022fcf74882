#include "costmodel/csv_fields.hpp"

#include <charconv>
#include <cmath>

namespace mutwo::costmodel {

bool is_blank_or_comment(std::string_view line) {
  return line.empty() || line.front() == '#';
}

[[noreturn]] void field_error(std::string_view where, std::string_view field, std::string_view value,
                              std::string_view why) {
  throw FormatError(fmt::format("{}: field '{}' = '{}': {}", where, field, value, why));
}

int64_t parse_int(std::string_view where, std::string_view field, std::string_view value) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc{} || end != value.data() + value.size()) {
    field_error(where, field, value, "must be a whole number");
  }
  return v;
}

double parse_double(std::string_view where, std::string_view field, std::string_view value) {
  // A decimal number alone, as parse_int reads integers: strtod also took hexadecimal ("0x10" read as
  // 16 ms) and a leading space or '+' (while refusing a trailing space).
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc{} || end != value.data() + value.size() || !std::isfinite(v)) {
    field_error(where, field, value, "must be a number");
  }
  return v;
}

std::string csv_field(std::string_view value) {
  if (value.find_first_of(",\"") == std::string_view::npos) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

void expect_header(const std::vector<std::pair<int, std::string_view>>& lines, std::string_view header,
                   std::string_view file) {
  for (const auto& [number, line] : lines) {
    if (is_blank_or_comment(line)) continue;
    if (line != header) {
      throw FormatError(fmt::format("{}:{}: header '{}' is not '{}'", file, number, line, header));
    }
    return;
  }
  throw FormatError(fmt::format("{}: empty file: no header '{}'", file, header));
}

int64_t ms_to_ns(std::string_view where, std::string_view field, std::string_view value) {
  const double ms = parse_double(where, field, value);
  if (!(ms > 0)) field_error(where, field, value, "must be > 0");
  // A kernel's time: past 1e6 ms (17 min) it is no kernel's, and its ns would pass int64 near 9.2e15 ms
  // (1e308 used to reach the fit as -9.2e18 ns).
  if (ms > kMaxKernelMs)
    field_error(where, field, value, fmt::format("must be at most {:g} ms", kMaxKernelMs));
  return std::max<int64_t>(1, std::llround(ms * 1e6));
}

int64_t positive(std::string_view where, std::string_view field, std::string_view value) {
  const int64_t v = parse_int(where, field, value);
  if (v < 1) field_error(where, field, value, "must be >= 1");
  return v;
}

std::vector<std::string> split_csv_line(std::string_view line, std::string_view where) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  bool was_quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back().push_back(c);
      }
    } else if (c == ',') {
      fields.emplace_back();
      was_quoted = false;
    } else if (c == '"' && fields.back().empty() && !was_quoted) {
      quoted = true;
      was_quoted = true;
    } else {
      fields.back().push_back(c);
    }
  }
  if (quoted) throw FormatError(fmt::format("{}: unterminated quoted field {}", where, fields.size()));
  return fields;
}

}  // namespace mutwo::costmodel
