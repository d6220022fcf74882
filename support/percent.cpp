#include "support/percent.hpp"

#include <fmt/format.h>

namespace mutwo::support {

std::string percent(double fraction) {
  return fmt::format("{:.1f} %", 100.0 * fraction);
}

std::string signed_percent(const std::optional<double>& fraction) {
  return fraction ? fmt::format("{:+.1f} %", 100.0 * *fraction) : "-";
}

std::string percent_of(int64_t part, int64_t whole) {
  return whole > 0 ? percent(static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

}  // namespace mutwo::support
