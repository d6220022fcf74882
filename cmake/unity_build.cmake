# Unity builds: a library or program of mutwo's compiles its files in batches of 8, each batch one
# translation unit, so the third-party templates its files share (CLI11, fmt, nlohmann/json, ATen) are
# instantiated and compiled once per batch instead of once per file. What it saved (g++ 12, 2-core
# build machine, 2026-11-30): the CLI's 20 files compiled in 16 s where they took 73 s, and the whole
# Release build of a fresh clone took 318 s where it took 523 s (compile-seconds 945 where 1,600; the
# executor's 44 where 137). Why: CI's time.
# The plugin targets (mutwo_cost_sources, mutwo_policy_plugins, mutwo_experiment_kinds) stay one file
# per unit: each plugin registers itself under the same local names as its neighbours. So does zoo/:
# each model's file names its own constants (kVocabSize, kNumClasses) and layers locally.
#
# MUTWO_UNITY_BUILD=OFF compiles each file alone (an edited file then recompiles alone, and a file that
# forgot an include fails there).
option(MUTWO_UNITY_BUILD "Compile each library's files in batches (cmake/unity_build.cmake)" ON)

function(mutwo_unity_build target)
  if(MUTWO_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()
