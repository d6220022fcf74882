#include "ir/exec_device.hpp"

#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "support/error.hpp"

namespace mutwo::ir {

std::optional<int> parse_exec_device(std::string_view device) {
  if (device == "cpu") return std::nullopt;
  if (device == "cuda") return 0;
  if (!device.starts_with("cuda:"))
    throw UnknownNameError(fmt::format("unknown device '{}'; valid: cpu, cuda, cuda:N", device));
  // "cuda:" names no index, and std::stoi threw an uncaught out_of_range past 2^31.
  const std::string_view digits = device.substr(5);
  int index = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || !std::isdigit(static_cast<unsigned char>(digits[0])) || error != std::errc() ||
      end != digits.data() + digits.size()) {
    throw Error(fmt::format("device '{}': expected cuda:N with N a device index", device));
  }
  return index;
}

}  // namespace mutwo::ir
