#include "costmodel/device_overrides.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "costmodel/device_catalog.hpp"
#include "support/error.hpp"

namespace mutwo::costmodel {
namespace {

struct SizeUnit {
  std::string_view name;
  int64_t bytes;
};
constexpr std::array<SizeUnit, 9> kUnits{{
    {"B", 1},
    {"KB", 1'000},
    {"MB", 1'000'000},
    {"GB", 1'000'000'000},
    {"TB", 1'000'000'000'000},
    {"KiB", int64_t{1} << 10},
    {"MiB", int64_t{1} << 20},
    {"GiB", int64_t{1} << 30},
    {"TiB", int64_t{1} << 40},
}};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

[[noreturn]] void size_error(std::string_view text, std::string_view why) {
  throw Error(fmt::format("invalid memory size '{}': {}", text, why));
}

void check_bandwidth(const DeviceSpec& d, std::string_view field, double gbps) {
  if (!std::isfinite(gbps) || gbps <= 0) {
    throw Error(fmt::format("device '{}': override '{}' = {} GB/s must be > 0", d.name, field, gbps));
  }
}

void check_latency(const DeviceSpec& d, std::string_view field, int64_t ns) {
  if (ns < 0) throw Error(fmt::format("device '{}': override '{}' = {} ns must be >= 0", d.name, field, ns));
}

}  // namespace

DeviceSpec apply_overrides(DeviceSpec d, const DeviceOverrides& o) {
  if (o.memory_bytes) {
    if (*o.memory_bytes <= 0) {
      throw Error(
          fmt::format("device '{}': override 'memory' = {} bytes must be > 0", d.name, *o.memory_bytes));
    }
    d.memory_bytes = *o.memory_bytes;
  }
  if (o.h2d_gbps) {
    check_bandwidth(d, "h2d_gbps", *o.h2d_gbps);
    d.h2d_bytes_per_ns = gbps_to_bytes_per_ns(*o.h2d_gbps);
  }
  if (o.d2h_gbps) {
    check_bandwidth(d, "d2h_gbps", *o.d2h_gbps);
    d.d2h_bytes_per_ns = gbps_to_bytes_per_ns(*o.d2h_gbps);
  }
  if (o.h2d_latency_ns) {
    check_latency(d, "h2d_latency_ns", *o.h2d_latency_ns);
    d.h2d_latency_ns = *o.h2d_latency_ns;
  }
  if (o.d2h_latency_ns) {
    check_latency(d, "d2h_latency_ns", *o.d2h_latency_ns);
    d.d2h_latency_ns = *o.d2h_latency_ns;
  }
  if (o.launch_overhead_ns) {
    check_latency(d, "launch_overhead_ns", *o.launch_overhead_ns);
    d.launch_overhead_ns = *o.launch_overhead_ns;
  }
  if (o.half_duplex) d.full_duplex = !*o.half_duplex;
  if (o.host_optimizer_gbps) {
    check_bandwidth(d, "host_optimizer_gbps", *o.host_optimizer_gbps);
    d.host_optimizer.bytes_per_ns = gbps_to_bytes_per_ns(*o.host_optimizer_gbps);
    d.host_optimizer.large_bytes_per_ns = d.host_optimizer.bytes_per_ns;
    d.host_optimizer.source = fmt::format("{} GB/s of update bytes (--host-optimizer-gbps)", *o.host_optimizer_gbps);
  }
  validate_device(d);
  return d;
}

int64_t parse_memory_size(std::string_view text) {
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
  const std::string_view s = text.substr(begin, end - begin);
  if (s.empty()) size_error(text, "empty (expected a number and an optional unit, e.g. 16GiB)");

  size_t i = 0;
  while (i < s.size() && is_digit(s[i])) ++i;
  const std::string_view whole_digits = s.substr(0, i);
  std::string_view fraction_digits;
  bool has_point = false;
  if (i < s.size() && s[i] == '.') {
    has_point = true;
    const size_t start = ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    fraction_digits = s.substr(start, i - start);
  }
  if (whole_digits.empty() && fraction_digits.empty()) {
    size_error(text, "does not start with a number (expected e.g. 16GiB, 40GB, 512MiB, 123456)");
  }
  size_t unit_start = i;
  while (unit_start < s.size() && is_space(s[unit_start])) ++unit_start;
  const std::string_view unit_text = s.substr(unit_start);

  int64_t unit_bytes = 1;
  if (!unit_text.empty()) {
    bool found = false;
    for (const SizeUnit& u : kUnits) {
      if (iequals(unit_text, u.name)) {
        unit_bytes = u.bytes;
        found = true;
        break;
      }
    }
    if (!found) {
      size_error(text,
                 fmt::format("unknown unit '{}' (valid: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)", unit_text));
    }
    // Rounding "1.5B" to 2 would hide a typo; a fraction of a larger unit rounds to the nearest byte.
    if (has_point && unit_bytes == 1) size_error(text, "a size in bytes (B) is a whole number of bytes");
  } else if (has_point) {
    size_error(text, "a size without a unit is a whole number of bytes");
  }

  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t whole = 0;
  for (char c : whole_digits) {
    if (whole > (kMax - (c - '0')) / 10) size_error(text, "too large for int64 bytes");
    whole = whole * 10 + (c - '0');
  }
  if (whole > kMax / unit_bytes) size_error(text, "too large for int64 bytes");
  int64_t bytes = whole * unit_bytes;
  if (!fraction_digits.empty()) {
    long double fraction = 0;
    long double scale = 1;
    for (char c : fraction_digits.substr(0, 18)) {
      scale /= 10;
      fraction += scale * (c - '0');
    }
    const int64_t extra = std::llround(fraction * static_cast<long double>(unit_bytes));
    if (bytes > kMax - extra) size_error(text, "too large for int64 bytes");
    bytes += extra;
  }
  return bytes;
}

}  // namespace mutwo::costmodel
