#pragma once
// A fresh directory under the system temp dir for one test, removed with everything in it.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace mutwo::test {

class TempDir {
 public:
  explicit TempDir(std::string_view tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("mutwo-test-{}-{}-{}", tag, ::getpid(), counter++);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace mutwo::test
