#pragma once
// A list that names a set of things to run or read (policies to search, server schemes,
// micro-batch and pack counts, eviction heuristics, budget ratios, bench-host's sizes, calibrate's
// files) holds each item once: a repeat would run it twice and print its rows twice, or weigh a
// file's rows twice in a fit. Experiment specs refuse such a list as they read it
// (support/toml_reader.hpp); what a command or the Python module passes is checked here.
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace mutwo::support {

// The first place `items` repeats itself: {earlier, later}, the indexes of two equal items, the
// later as small as can be; none when every item differs.
template <class T>
std::optional<std::pair<size_t, size_t>> first_repeat(const std::vector<T>& items) {
  for (size_t later = 1; later < items.size(); ++later) {
    for (size_t earlier = 0; earlier < later; ++earlier) {
      if (items[earlier] == items[later]) return std::pair{earlier, later};
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
  for (size_t later = 1; later < paths.size(); ++later) {
    for (size_t earlier = 0; earlier < later; ++earlier) {
      std::error_code ec;
      const bool same_file = std::filesystem::equivalent(resolved[earlier], resolved[later], ec);
      if (resolved[earlier] == resolved[later] || (!ec && same_file)) return std::pair{earlier, later};
    }
  }
  return std::nullopt;
}

}  // namespace mutwo::support
