#pragma once
// The flags' checks for numbers. CLI11's PositiveNumber and Range let NaN through (every comparison
// with it is false: a NaN bandwidth read as "not given", a NaN limit as none) and word a refusal as
// a range 300 digits long.
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace mutwo::cli {

inline const CLI::Validator kPositiveNumber(
    [](std::string& text) -> std::string {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value <= 0) {
        return "must be a positive finite number, got '" + text + "'";
      }
      return {};
    },
    "POSITIVE");

// A finite number above `low` (low_open) or from it, up to `high`.
inline CLI::Validator finite_number(double low, bool low_open, double high = INFINITY) {
  const std::string range = std::isinf(high)
                                ? fmt::format("{} {:g}", low_open ? ">" : ">=", low)
                                : fmt::format("in {}{:g}, {:g}]", low_open ? "(" : "[", low, high);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = 0;
        const bool ok = CLI::detail::lexical_cast(text, value) && std::isfinite(value) &&
                        (low_open ? value > low : value >= low) && value <= high;
        return ok ? std::string() : fmt::format("'{}' must be a finite number {}", text, range);
      },
      "NUMBER " + range);
}

}  // namespace mutwo::cli
