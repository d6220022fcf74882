# The walls between folders (docs/ARCHITECTURE.md, "Folders and their one job"): a folder may include headers
# from, and link the library of, only the folders its row of the table names.
#
#   cmake -DROOT=<source tree> -P include_arrows.cmake
#
# scans every C++ file under the library folders for `#include "folder/..."` (or <folder/...>) and
# every folder's CMakeLists.txt for mutwo_<folder> / mutwo::<folder> in target_link_libraries, and
# fails listing each forbidden arrow as "<file>:<line>: <from> -> <to> (include|link)".
# With -DEXPECT=<such lines, paths relative to ROOT, separated by |> it instead checks that exactly
# those violations are found: the self-test runs it on a fixture tree that breaks the rules on purpose.
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED ROOT)
  message(FATAL_ERROR "include_arrows.cmake: pass -DROOT=<source tree>")
endif()
get_filename_component(ROOT "${ROOT}" ABSOLUTE)

# The table's arrows (docs/ARCHITECTURE.md); a folder may always use itself. tests/, bench/, fuzz/ and
# scripts/ may use all.
set(folders support ir io transforms zoo costmodel sim policies exec experiments api cli python)
set(allowed_support "")
set(allowed_ir support)
set(allowed_io support ir)
set(allowed_transforms support ir)
set(allowed_zoo support ir io transforms)
set(allowed_costmodel support ir io)
set(allowed_sim support ir io costmodel)
set(allowed_policies support ir io transforms zoo costmodel sim)
set(allowed_exec support ir io transforms)
# experiments reach exec only through the executor interface declared in ir/ (ir/executor.hpp).
set(allowed_experiments support ir io transforms zoo costmodel policies sim)
# api: what each command computes, for the CLI and the Python module alike.
set(allowed_api support ir io transforms zoo costmodel sim policies experiments)
set(allowed_cli support ir io transforms zoo costmodel sim policies exec experiments api)
set(allowed_python support ir io transforms zoo costmodel sim policies experiments api)

set(violations "")

# Line number (1-based) of the first occurrence of `needle` in `content`.
function(line_of content needle out)
  string(FIND "${content}" "${needle}" pos)
  string(SUBSTRING "${content}" 0 ${pos} prefix)
  string(REGEX MATCHALL "\n" newlines "${prefix}")
  list(LENGTH newlines n)
  math(EXPR n "${n} + 1")
  set(${out} ${n} PARENT_SCOPE)
endfunction()

# The folder a library target name belongs to: mutwo_sim, mutwo::sim, mutwo_exec_module -> exec.
function(folder_of_target name out)
  set(result "")
  foreach(f IN LISTS folders)
    if(name STREQUAL f OR name MATCHES "^${f}_")
      set(result ${f})
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

foreach(from IN LISTS folders)
  if(NOT IS_DIRECTORY "${ROOT}/${from}")
    continue()
  endif()
  set(allowed ${from} ${allowed_${from}})

  # Includes.
  file(GLOB_RECURSE sources LIST_DIRECTORIES false "${ROOT}/${from}/*.cpp" "${ROOT}/${from}/*.hpp"
       "${ROOT}/${from}/*.h" "${ROOT}/${from}/*.cc" "${ROOT}/${from}/*.cu" "${ROOT}/${from}/*.cuh")
  list(SORT sources)
  foreach(file IN LISTS sources)
    file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"][a-z_]+/")
    if(NOT includes)
      continue()
    endif()
    file(RELATIVE_PATH rel "${ROOT}" "${file}")
    set(content "")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[<\"]([a-z_]+)/.*$" "\\1" to "${inc}")
      list(FIND folders "${to}" is_folder)
      list(FIND allowed "${to}" is_allowed)
      if(is_folder GREATER -1 AND is_allowed EQUAL -1)
        if(content STREQUAL "")
          file(READ "${file}" content)
        endif()
        line_of("${content}" "${inc}" line)
        list(APPEND violations "${rel}:${line}: ${from} -> ${to} (include)")
      endif()
    endforeach()
  endforeach()

  # Links: every mutwo_<folder> / mutwo::<folder> named in a target_link_libraries call.
  set(lists_file "${ROOT}/${from}/CMakeLists.txt")
  if(EXISTS "${lists_file}")
    file(READ "${lists_file}" content)
    # Semicolons and brackets would split or glue CMake list items; links need neither.
    string(REGEX REPLACE "[][;]" " " flat "${content}")
    string(REGEX MATCHALL "target_link_libraries[ \t\n]*\\([^)]*\\)" calls "${flat}")
    file(RELATIVE_PATH rel "${ROOT}" "${lists_file}")
    foreach(call IN LISTS calls)
      string(REGEX REPLACE "#[^\n]*" "" call_code "${call}")  # comments inside the call
      # Drop the target being linked (the first argument); the rest is what it links.
      string(REGEX REPLACE "^target_link_libraries[ \t\n]*\\([ \t\n]*[^ \t\n)]+" "" call_code "${call_code}")
      string(REGEX MATCHALL "mutwo(::|_)[a-z_]+" names "${call_code}")
      set(targets "")
      foreach(n IN LISTS names)
        string(REGEX REPLACE "^mutwo(::|_)" "" n "${n}")
        list(APPEND targets ${n})
      endforeach()
      foreach(t IN LISTS targets)
        folder_of_target(${t} to)
        if(to STREQUAL "")
          continue()
        endif()
        list(FIND allowed "${to}" is_allowed)
        if(is_allowed EQUAL -1)
          string(FIND "${flat}" "${call}" pos)
          string(SUBSTRING "${flat}" 0 ${pos} prefix)
          string(REGEX MATCHALL "\n" newlines "${prefix}")
          list(LENGTH newlines line)
          math(EXPR line "${line} + 1")
          list(APPEND violations "${rel}:${line}: ${from} -> ${to} (link mutwo_${t})")
        endif()
      endforeach()
    endforeach()
  endif()
endforeach()

list(REMOVE_DUPLICATES violations)
list(JOIN violations "\n  " report)

if(DEFINED EXPECT)
  string(REPLACE "|" ";" expected "${EXPECT}")
  list(SORT expected)
  set(found ${violations})
  list(SORT found)
  if(NOT found STREQUAL expected)
    list(JOIN expected "\n  " want)
    message(FATAL_ERROR "include_arrows self-test: expected these forbidden arrows in ${ROOT}:\n  ${want}\n"
                        "found:\n  ${report}")
  endif()
  list(LENGTH found n)
  message(STATUS "include_arrows self-test: the ${n} planted forbidden arrows are reported")
  return()
endif()

if(violations)
  message(FATAL_ERROR "forbidden dependencies between folders (docs/ARCHITECTURE.md's table of arrows):\n  ${report}\n"
                      "Allowed: the allowed_<folder> table at the top of tests/include_arrows.cmake.")
endif()
message(STATUS "include_arrows: every include and link follows docs/ARCHITECTURE.md's arrows")
