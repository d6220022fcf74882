# Precompiled headers: the third-party headers most of mutwo's translation units include, parsed once
# per target instead of once per file. What each costs a file that includes it (g++ 12 -O2, one core of
# the 2-core build machine): CLI/CLI.hpp 10.0 s (18 files), ATen/ATen.h 11.8 s (30), nlohmann/json.hpp
# 3.0 s (90), fmt/format.h 1.1 s (286 of 341). Why: CI's time (the README's test command builds twice,
# Release and sanitized; it took 36 minutes on 2 cores). With them the Release build of a fresh clone
# took 494 s where it took 658 s (2 cores, 2026-11-28).
#
# MUTWO_PRECOMPILED_HEADERS=OFF builds without them: a file that forgot an include then fails there.
option(MUTWO_PRECOMPILED_HEADERS "Precompile the heavy third-party headers (cmake/precompiled_headers.cmake)" ON)

set(mutwo_pch_common <algorithm> <map> <memory> <optional> <string> <string_view> <vector> <fmt/format.h>)

# A library or program of mutwo's: the common headers, nlohmann/json, and `extra` (ATen, CLI11).
# The libraries without `extra` share one, mutwo_support's: they compile with the same flags, and each
# library's own header held its objects back until it was built (13 of them, 8-10 s each in the Release
# build on 2 cores, 2026-11-30). Why: CI's time.
function(mutwo_precompile target)
  if(NOT MUTWO_PRECOMPILED_HEADERS)
    return()
  endif()
  if(ARGN OR target STREQUAL "mutwo_support")
    target_precompile_headers(${target} PRIVATE ${mutwo_pch_common} <nlohmann/json.hpp> ${ARGN})
  else()
    target_precompile_headers(${target} REUSE_FROM mutwo_support)
  endif()
endfunction()

# The doctest suites share two precompiled headers: mutwo_test_main's (doctest), and for the suites that
# include LibTorch mutwo_autograd_reference's (tests/support/torch_doctest.hpp: LibTorch, then doctest,
# in the order that keeps doctest's CHECK). Every suite is a program compiled with the flags of its
# kind (tests/ builds position-dependent code, the compilers' default PIE, so that the static anchors
# and the suites agree: g++ refuses a header precompiled with -fPIC in a -fPIE file).
function(mutwo_precompile_test_main target)
  if(MUTWO_PRECOMPILED_HEADERS)
    target_precompile_headers(${target} PRIVATE ${mutwo_pch_common} <doctest/doctest.h>)
    # Its file configures doctest (its main) before including it, so it skips the header; CMake builds
    # a target's precompiled header only for a file that uses it: an empty one, generated.
    get_target_property(sources ${target} SOURCES)
    set_source_files_properties(${sources} TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${target}_pch.cpp CONTENT "// ${target}'s precompiled header\n")
    target_sources(${target} PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/${target}_pch.cpp)
  endif()
endfunction()
function(mutwo_precompile_torch_tests target)
  if(MUTWO_PRECOMPILED_HEADERS)
    target_precompile_headers(${target} PRIVATE "${PROJECT_SOURCE_DIR}/tests/support/torch_doctest.hpp"
                              ${mutwo_pch_common})
  endif()
endfunction()
# A suite; `torch`: it includes LibTorch.
function(mutwo_precompile_test target torch)
  if(MUTWO_PRECOMPILED_HEADERS)
    if(torch)
      target_precompile_headers(${target} REUSE_FROM mutwo_autograd_reference)
    else()
      target_precompile_headers(${target} REUSE_FROM mutwo_test_main)
    endif()
  endif()
endfunction()
