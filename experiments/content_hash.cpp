#include "experiments/content_hash.hpp"

#include <cstdint>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "support/file_stamp.hpp"
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
  const std::optional<support::FileStamp> stamp = support::file_stamp(path);
  if (!stamp) return content_hash(support::read_file_bytes(path, what));  // its error names the file
  static std::mutex mutex;
  static std::map<support::FileStamp, std::string> known;
  {
    const std::lock_guard lock(mutex);
    if (const auto it = known.find(*stamp); it != known.end()) return it->second;
  }
  std::string hash = content_hash(support::read_file_bytes(path, what));
  const std::lock_guard lock(mutex);
  return known.emplace(*stamp, std::move(hash)).first->second;
}

}  // namespace mutwo::experiments
