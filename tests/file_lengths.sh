#!/usr/bin/env bash
# No code file over 500 lines (docs/ARCHITECTURE.md, "Folders and their one job"): every tracked
# C++ source and header, Python and shell script, and CMake file, tests and scripts included
# (ctest file_lengths). Lists each file over the limit with its length.
# Usage: tests/file_lengths.sh   (run from the source root of a git checkout)
set -euo pipefail
limit=500
over=$(git ls-files -z '*.cpp' '*.hpp' '*.py' '*.sh' '*.cmake' '*CMakeLists.txt' |
       xargs -0 wc -l | awk -v limit="$limit" '$2 != "total" && $1 > limit {print $2 " (" $1 " lines)"}')
if [[ -n $over ]]; then
  echo "file_lengths: over $limit lines:"
  echo "$over"
  exit 1
fi
echo "file_lengths: ok"
