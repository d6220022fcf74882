# End-to-end test driver for the `mutwo` program (SimGrid's .tesh idea): run one command, check its
# exit status and output. Run as a CMake script:
#   cmake -DMUTWO=<binary> -DARGS="trace|--check|file.json" [-DWORKDIR=dir] [-DEXPECT_RC=0|1|2]
#         [-DSTDOUT_REGEX=re] [-DSTDERR_REGEX=re] [-DSTDERR_NOT_REGEX=re] [-DSTDOUT_FILE=golden.out]
#         [-DJSON_LENGTH=n] [-DJSON_CHECKS="0|name=bert-base;0|parameters=110106428"]
#         [-DABSENT_FILE=name] -P test_cli.cmake
# ARGS separates arguments with '|' (a ';' would be split by add_test). JSON_CHECKS entries are
# "<path>=<value>" with the path's keys/indices separated by '|'; they read stdout as JSON.
# ABSENT_FILE (in WORKDIR) is removed before the command and must not exist after it: an output a
# failing command must not leave.
cmake_minimum_required(VERSION 3.25)

if(NOT MUTWO)
  message(FATAL_ERROR "test_cli.cmake: -DMUTWO=<path to the mutwo binary> is required")
endif()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
if(NOT WORKDIR)
  set(WORKDIR ${CMAKE_CURRENT_BINARY_DIR})
endif()
string(REPLACE "|" ";" args "${ARGS}")
if(DEFINED ABSENT_FILE)
  file(REMOVE ${WORKDIR}/${ABSENT_FILE})
endif()

execute_process(COMMAND ${MUTWO} ${args}
                WORKING_DIRECTORY ${WORKDIR}
                RESULT_VARIABLE rc
                OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
set(report "command: mutwo ${args}\nexit status: ${rc}\n--- stdout ---\n${out}--- stderr ---\n${err}")

if(NOT rc STREQUAL EXPECT_RC)
  message(FATAL_ERROR "expected exit status ${EXPECT_RC}\n${report}")
endif()
if(DEFINED ABSENT_FILE AND EXISTS ${WORKDIR}/${ABSENT_FILE})
  message(FATAL_ERROR "${ABSENT_FILE} was written\n${report}")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "stdout does not match '${STDOUT_REGEX}'\n${report}")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "stderr does not match '${STDERR_REGEX}'\n${report}")
endif()
if(DEFINED STDERR_NOT_REGEX AND err MATCHES "${STDERR_NOT_REGEX}")
  message(FATAL_ERROR "stderr matches '${STDERR_NOT_REGEX}'\n${report}")
endif()
if(DEFINED STDOUT_FILE)
  file(READ ${STDOUT_FILE} golden)
  if(NOT out STREQUAL golden)
    message(FATAL_ERROR "stdout differs from ${STDOUT_FILE}\n--- expected ---\n${golden}\n${report}")
  endif()
endif()
if(DEFINED JSON_LENGTH)
  string(JSON n ERROR_VARIABLE json_error LENGTH "${out}")
  if(json_error)
    message(FATAL_ERROR "stdout is not JSON: ${json_error}\n${report}")
  endif()
  if(NOT n EQUAL JSON_LENGTH)
    message(FATAL_ERROR "JSON array has ${n} elements, expected ${JSON_LENGTH}\n${report}")
  endif()
endif()
foreach(check IN LISTS JSON_CHECKS)
  string(FIND "${check}" "=" eq REVERSE)
  string(SUBSTRING "${check}" 0 ${eq} path)
  math(EXPR value_start "${eq} + 1")
  string(SUBSTRING "${check}" ${value_start} -1 expected)
  string(REPLACE "|" ";" path "${path}")
  string(JSON value ERROR_VARIABLE json_error GET "${out}" ${path})
  if(json_error)
    message(FATAL_ERROR "JSON path '${path}': ${json_error}\n${report}")
  endif()
  if(NOT value STREQUAL expected)
    message(FATAL_ERROR "JSON path '${path}' is '${value}', expected '${expected}'\n${report}")
  endif()
endforeach()
