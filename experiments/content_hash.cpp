#include "experiments/content_hash.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "support/text_file.hpp"

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

std::string file_content_hash(const std::filesystem::path& path, std::string_view what) {
  namespace fs = std::filesystem;
  std::error_code size_ec;
  std::error_code time_ec;
  const uintmax_t size = fs::file_size(path, size_ec);
  const fs::file_time_type time = fs::last_write_time(path, time_ec);
  if (size_ec || time_ec) return content_hash(support::read_file_bytes(path, what));  // its error names it
  using Key = std::tuple<std::string, uintmax_t, fs::file_time_type::rep>;
  static std::mutex mutex;
  static std::map<Key, std::string> known;
  const Key key{fs::absolute(path).lexically_normal().string(), size, time.time_since_epoch().count()};
  {
    const std::lock_guard lock(mutex);
    if (const auto it = known.find(key); it != known.end()) return it->second;
  }
  std::string hash = content_hash(support::read_file_bytes(path, what));
  const std::lock_guard lock(mutex);
  return known.emplace(key, std::move(hash)).first->second;
}

}  // namespace mutwo::experiments
