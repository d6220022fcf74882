#pragma once
// The flags' check for a positive number. CLI11's PositiveNumber lets NaN through (NaN <= 0 is false,
// and a NaN bandwidth then reads as "not given") and words its refusal as a range 300 digits long.
#include <cmath>
#include <string>

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

}  // namespace mutwo::cli
