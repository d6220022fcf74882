#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (-fno-sanitize-recover: the
# first report fails its test; leaks are reports too). Every library and the CLI are compiled with
# them; the doctest suites' own code (test bodies, doctest) without their checks, linked with their
# runtimes (tests/CMakeLists.txt, mutwo_suite_flags).
#
#   bash scripts/sanitize.sh          clang, build-fuzz/: every library, the CLI, every test and the
#                                     fuzz targets (scripts/fuzz.sh then reuses the build); the suite
#                                     without the LibTorch executor and the full-scale data runs
#                                     (label full_data). What .ci/run does.
#   bash scripts/sanitize.sh --full   gcc, build-asan/: the same plus exec/ and every LibTorch-linked
#                                     test (2026-12-01, 2 cores: 21 min to build, 7 min for the suite;
#                                     then the README's own commands, at about 20x their Release time,
#                                     were stopped at 20 min inside the 49th: outside CI's budget).
#   bash scripts/sanitize.sh --thread clang, build-tsan/, ThreadSanitizer: the CLI and the suites
#                                     whose code runs on several threads (support/parallel_for's pool:
#                                     DTR-log sweeps, the wave model's fits and calibrate's reads, the
#                                     search's plans of one partition; the experiment runner's jobs, the
#                                     results database's writers), then those suites and the replay,
#                                     experiment, calibrate and search CLI tests (109 build steps;
#                                     2026-12-02, 2 cores: 137 tests passed in 53 s: outside CI).
#
# Why two compilers: clang 14 cannot compile Debian's LibTorch 1.13 headers in C++20 (c10::IValue is
# incomplete where ATen/core/List.h needs it), and libFuzzer needs clang. What the full run found in
# LibTorch itself: GeneratorImpl::clone() leaks a reference (exec/kernel.cpp no longer clones on CPU),
# and LeakSanitizer's tracer crashes at the exit of a process holding LibTorch's threads (below).
# Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
full=0
if [ "${1:-}" = "--full" ]; then full=1; shift; fi
if [ "${1:-}" = "--thread" ]; then
  shift
  suites="test_parallel_for test_dtr_replay test_experiments test_experiment_kinds test_results_db_writes"
  suites="$suites test_cost_setup test_measured_cost test_search"
  cmake -S . -B build-tsan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DMUTWO_SANITIZE=thread -DMUTWO_WITH_TORCH=OFF \
    -DMUTWO_BUILD_TESTS=ON -DMUTWO_BUILD_BENCH=OFF -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld >/dev/null
  # shellcheck disable=SC2086
  cmake --build build-tsan --target mutwo make_results_fixture $suites
  export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
  ctest --test-dir build-tsan --output-on-failure -j "$(nproc)" -LE full_data \
    -R "^(${suites// /|}|cli_replay.*|cli_experiment.*|cli_calibrate.*|cli_search.*)\$" "$@"
  echo "sanitize: build-tsan: the threaded suites and CLI tests passed under ThreadSanitizer"
  exit 0
fi
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if [ "$full" -eq 1 ]; then
  build=build-asan
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" -DMUTWO_SANITIZE=address,undefined -DMUTWO_BUILD_BENCH=OFF >/dev/null
else
  build=build-fuzz
  # The options scripts/fuzz.sh configures with, so that it finds this build as it is.
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DMUTWO_FUZZ=ON \
    -DMUTWO_SANITIZE=address,undefined -DMUTWO_WITH_TORCH=OFF -DMUTWO_BUILD_TESTS=ON -DMUTWO_BUILD_BENCH=OFF \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld >/dev/null
fi
cmake --build "$build"
if [ "$full" -eq 1 ]; then
  # A mutwo process that loads the LibTorch executor module crashes LeakSanitizer's stop-the-world
  # tracer at exit ("Tracer caught signal 11", LibTorch's thread pools): those CLI tests run with
  # leak detection off, everything else (the executor's own suites included) with it on.
  torch_cli='^cli_(run|profile|bench_ops|bench_host|experiment_measured)|^readme_commands$|^kill_experiment$|^device_check_(lease_)?dry_run$'
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -E "$torch_cli" "$@"
  ASAN_OPTIONS=${ASAN_OPTIONS/detect_leaks=1/detect_leaks=0} \
    ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -R "$torch_cli" "$@"
else
  # Less the full-scale data runs (label full_data, tests/CMakeLists.txt), which the Release build runs.
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE full_data "$@"
fi
echo "sanitize: $build: every test passed under AddressSanitizer + UndefinedBehaviorSanitizer"
