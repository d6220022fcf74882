#pragma once
// Which mutwo wrote a result: the project version and the git revision of the source tree, both
// taken when CMake configured the build (experiments/CMakeLists.txt).
#include <string_view>

namespace mutwo::experiments {

// PROJECT_VERSION of the root CMakeLists.txt: "0.1.0".
std::string_view mutwo_version();

// Short commit hash ("c1a9490"), with "+dirty" when tracked files had uncommitted changes at
// configure time; "unknown" when the source tree is not a git checkout. CMake re-runs its configure
// step when HEAD moves, so a build after a commit records the new revision.
std::string_view git_revision();

}  // namespace mutwo::experiments
