#pragma once
// Plain-text tables and human-readable units for the `mutwo` command line (printing lives only in cli/).
#include <cstdint>
#include <string>
#include <vector>

namespace mutwo::cli {

enum class Align { left, right };

// A table printed with columns padded to their widest cell and a rule under the header.
class Table {
 public:
  struct Column {
    std::string header;
    Align align = Align::left;
  };
  explicit Table(std::vector<Column> columns);

  void add_row(std::vector<std::string> cells);  // one cell per column
  std::string render() const;                    // ends in a newline

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// 110106428 -> "110.1M", 3504872 -> "3.5M", 1234 -> "1.2K", 999 -> "999".
// "a, b, c": valid names in help texts and messages.
std::string joined(const std::vector<std::string>& names);

std::string human_count(int64_t count);
// Binary units: 1536 -> "1.5 KiB", 3 << 30 -> "3.00 GiB".
std::string human_bytes(int64_t bytes);
// Decimal FLOP units: 1'831'770'000'000 -> "1.83 TFLOP", 6 -> "6 FLOP".
std::string human_flops(int64_t flops);
// Today's date in UTC, "2026-11-25": the date measured or fitted figures record.
std::string today_utc();
// 2500 -> "2.500 us", 12'345'678 -> "12.346 ms".
std::string human_duration(int64_t ns);
// Table cells without a unit (the column header names it): 12'345'678 ns -> "12.3" (ms),
// 1'234'567'890 B -> "1.23" (GB, decimal).
std::string ms_cell(int64_t ns);
std::string gb_cell(int64_t bytes);
// FLOPs as GFLOPs with two decimals: 22'500'000'000 -> "22.50"; below 0.1, three digits: "0.00123".
std::string gflops(double flops);

}  // namespace mutwo::cli
