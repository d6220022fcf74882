#include "experiments/content_hash.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace mutwo::experiments {

std::string content_hash(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

std::string config_hash(const nlohmann::json& config) {
  return content_hash(config.dump());  // nlohmann's object keeps keys sorted: a canonical form
}

}  // namespace mutwo::experiments
