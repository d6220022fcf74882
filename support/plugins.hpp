#pragma once
// Plugins that register themselves where they are defined: a new policy, cost source, experiment
// kind, ... is one new file (plus its CMake line) with no list to edit. The file ends with
//
//   [[maybe_unused]] const bool kRegistered = Plugins<PolicyRegistry>::add(45, register_my_policy);
//
// and the concept's built-in registry calls Plugins<...>::register_all once. `rank` fixes the
// registration order (what lists, --help and searches follow, so outputs stay reproducible), since
// the order in which files' statics run is the linker's; equal ranks keep the order of add().
// A library of such files must reach the final link as objects, not archive members the linker may
// drop: see policies/CMakeLists.txt.
#include <algorithm>
#include <vector>

namespace mutwo {

template <typename Registry>
class Plugins {
 public:
  using Register = void (*)(Registry&);

  static bool add(int rank, Register registration) {
    list().push_back({rank, registration});
    return true;
  }

  static void register_all(Registry& registry) {
    std::vector<Entry> sorted = list();
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Entry& a, const Entry& b) { return a.rank < b.rank; });
    for (const Entry& e : sorted) e.registration(registry);
  }

 private:
  struct Entry {
    int rank = 0;
    Register registration = nullptr;
  };
  static std::vector<Entry>& list() {
    static std::vector<Entry> entries;  // built on first use: safe from any file's static initialiser
    return entries;
  }
};

}  // namespace mutwo
