#include "support/file_stamp.hpp"

#include <sys/stat.h>

namespace mutwo::support {

std::optional<FileStamp> file_stamp(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const auto ns = [](const timespec& t) { return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec; };
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  if (ec) absolute = path;
  return FileStamp{absolute.lexically_normal().string(),
                   static_cast<uint64_t>(st.st_dev),
                   static_cast<uint64_t>(st.st_ino),
                   static_cast<int64_t>(st.st_size),
                   ns(st.st_mtim),
                   ns(st.st_ctim)};
}

}  // namespace mutwo::support
