#pragma once
// A list that names a set of things to run or read (policies to search, server schemes,
// micro-batch and pack counts, eviction heuristics, budget ratios, bench-host's sizes, calibrate's
// files) holds each item once: a repeat would run it twice and print its rows twice, or weigh a
// file's rows twice in a fit. Experiment specs refuse such a list as they read it
// (support/toml_reader.hpp); what a command or the Python module passes is checked here.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace mutwo::support {

// The first place `items` repeats itself: {earlier, later}, the indexes of two items `same` calls
// equal, the later as small as can be; none when every item differs.
template <class T, class Same = std::equal_to<>>
std::optional<std::pair<size_t, size_t>> first_repeat(const std::vector<T>& items, Same same = {}) {
  for (size_t later = 1; later < items.size(); ++later) {
    for (size_t earlier = 0; earlier < later; ++earlier) {
      if (same(items[earlier], items[later])) return std::pair{earlier, later};
    }
  }
  return std::nullopt;
}

// first_repeat over files: two paths repeat when they name one file, by another path, through a
// link, "a/../b" or as hard links (one device and inode, std::filesystem::equivalent); a path
// that cannot be resolved is compared as written (reading it says why).
inline std::optional<std::pair<size_t, size_t>> first_repeated_file(const std::vector<std::string>& paths) {
  std::vector<std::filesystem::path> resolved;
  for (const std::string& p : paths) {
    std::error_code ec;
    std::filesystem::path r = std::filesystem::weakly_canonical(p, ec);
    resolved.push_back(ec ? std::filesystem::path(p).lexically_normal() : r);
  }
  return first_repeat(resolved, [](const std::filesystem::path& a, const std::filesystem::path& b) {
    std::error_code ec;
    return a == b || (std::filesystem::equivalent(a, b, ec) && !ec);
  });
}

}  // namespace mutwo::support
