#include "cli/table.hpp"

#include <algorithm>
#include <ctime>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mutwo::cli {

Table::Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size()) {
    throw std::logic_error(
        fmt::format("table row has {} cells for {} columns", cells.size(), columns_.size()));
  }
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<size_t> widths;
  for (const Column& c : columns_) widths.push_back(c.header.size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) text += "  ";
      text += columns_[i].align == Align::right ? fmt::format("{:>{}}", cells[i], widths[i])
                                                : fmt::format("{:<{}}", cells[i], widths[i]);
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  };
  std::vector<std::string> headers;
  std::vector<std::string> rules;
  for (size_t i = 0; i < columns_.size(); ++i) {
    headers.push_back(columns_[i].header);
    rules.push_back(std::string(widths[i], '-'));
  }
  line(headers);
  line(rules);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string human_count(int64_t count) {
  const auto x = static_cast<double>(count);
  if (count >= 1'000'000'000) return fmt::format("{:.1f}B", x / 1e9);
  if (count >= 1'000'000) return fmt::format("{:.1f}M", x / 1e6);
  if (count >= 1'000) return fmt::format("{:.1f}K", x / 1e3);
  return fmt::format("{}", count);
}

std::string human_bytes(int64_t bytes) {
  const auto x = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", x / (1 << 30));
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", x / (1 << 20));
  if (bytes >= (int64_t{1} << 10)) return fmt::format("{:.1f} KiB", x / (1 << 10));
  return fmt::format("{} B", bytes);
}

std::string human_flops(int64_t flops) {
  const auto x = static_cast<double>(flops);
  if (flops >= 1'000'000'000'000) return fmt::format("{:.2f} TFLOP", x / 1e12);
  if (flops >= 1'000'000'000) return fmt::format("{:.2f} GFLOP", x / 1e9);
  if (flops >= 1'000'000) return fmt::format("{:.2f} MFLOP", x / 1e6);
  if (flops >= 1'000) return fmt::format("{:.2f} KFLOP", x / 1e3);
  return fmt::format("{} FLOP", flops);
}

std::string human_duration(int64_t ns) {
  const auto x = static_cast<double>(ns);
  if (ns >= 1'000'000'000) return fmt::format("{:.3f} s", x / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.3f} ms", x / 1e6);
  if (ns >= 1'000) return fmt::format("{:.3f} us", x / 1e3);
  return fmt::format("{} ns", ns);
}

std::string gflops(double flops) {
  const double g = flops / 1e9;
  // Small counts (DLRM's MLPs) keep three significant digits instead of rounding to 0.00.
  return g >= 0.1 || g == 0.0 ? fmt::format("{:.2f}", g) : fmt::format("{:.3g}", g);
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d", &utc);
  return buffer;
}

std::string ms_cell(int64_t ns) {
  return fmt::format("{:.1f}", static_cast<double>(ns) / 1e6);
}
std::string gb_cell(int64_t bytes) {
  return fmt::format("{:.2f}", static_cast<double>(bytes) / 1e9);
}

}  // namespace mutwo::cli
