#pragma once
// What tells one version of a file from another without reading it: caches of files read once per
// process (exported models, content hashes) key on it, so that a file rewritten in place (a model
// exported again to the same path in a notebook) is read again. A write within the same clock tick
// as the last read, to the same size, is the one edit it cannot see (file times are as coarse as the
// kernel's clock, a few ms).
#include <compare>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace mutwo::support {

struct FileStamp {
  std::string path;  // absolute, lexically normal
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t size_bytes = 0;
  int64_t modified_ns = 0;
  int64_t changed_ns = 0;  // status change: set by every write, and not by utime
  auto operator<=>(const FileStamp&) const = default;
};

// nullopt when the file cannot be stat'ed (absent, no permission): the caller's read reports why.
std::optional<FileStamp> file_stamp(const std::filesystem::path& path);

}  // namespace mutwo::support
