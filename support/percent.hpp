#pragma once
// The one way figures are printed as percentages in tables and reports: one decimal and a spaced
// " %" ("12.5 %"), "-" where there is no figure.
#include <cstdint>
#include <optional>
#include <string>

namespace mutwo::support {

std::string percent(double fraction);                               // 0.125 -> "12.5 %"
std::string signed_percent(const std::optional<double>& fraction);  // +0.125 -> "+12.5 %"; none -> "-"
std::string percent_of(int64_t part, int64_t whole);                // part / whole; whole <= 0 -> "-"

}  // namespace mutwo::support
