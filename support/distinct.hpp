#pragma once
// A list that names a set of things to run (policies to search, server schemes, micro-batch and
// pack counts, eviction heuristics, budget ratios) holds each item once: a repeat would plan or
// run it twice and print its rows twice. Experiment specs refuse such a list as they read it
// (support/toml_reader.hpp); what a command or the Python module passes is checked here.
#include <optional>
#include <vector>

namespace mutwo::support {

// The first item that stands earlier in `items` too, if any.
template <class T>
std::optional<T> first_repeat(const std::vector<T>& items) {
  for (size_t i = 1; i < items.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (items[j] == items[i]) return items[i];
    }
  }
  return std::nullopt;
}

}  // namespace mutwo::support
