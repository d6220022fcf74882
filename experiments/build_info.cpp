#include "experiments/build_info.hpp"

// Both come from experiments/CMakeLists.txt as compile definitions of this file only, so a new
// revision recompiles one file.
#ifndef MUTWO_VERSION
#error "MUTWO_VERSION must be defined by experiments/CMakeLists.txt"
#endif
#ifndef MUTWO_GIT_REVISION
#error "MUTWO_GIT_REVISION must be defined by experiments/CMakeLists.txt"
#endif

namespace mutwo::experiments {

std::string_view mutwo_version() {
  return MUTWO_VERSION;
}

std::string_view git_revision() {
  return MUTWO_GIT_REVISION;
}

}  // namespace mutwo::experiments
