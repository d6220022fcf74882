#pragma once
// A command's output files, checked before it works or writes any of them: each must be writable
// (support::writable_target) and no two the same file, so that one bad path neither costs the run
// nor leaves the other outputs written (a --timeline into a missing folder used to fail after the
// schedule was saved; the same file as schedule and timeline kept only the second).
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "support/error.hpp"
#include "support/text_file.hpp"

namespace mutwo::cli {

// {flag, path} pairs; an empty path is an output not asked for.
inline void check_output_paths(const std::vector<std::pair<std::string_view, std::string>>& outputs) {
  std::vector<std::pair<std::string_view, std::filesystem::path>> seen;
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    const std::filesystem::path target = std::filesystem::absolute(support::writable_target(path, flag));
    for (const auto& [other_flag, other] : seen) {
      if (other.lexically_normal() == target.lexically_normal()) {
        throw Error(fmt::format("{} and {} are the same file '{}': give each its own", other_flag, flag, path));
      }
    }
    seen.emplace_back(flag, target);
  }
}

}  // namespace mutwo::cli
