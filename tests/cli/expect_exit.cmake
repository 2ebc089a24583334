# Runs one command and checks its exit code and output (used by the CLI tests in
# tests/CMakeLists.txt). Run as a script:
#
#   cmake -DCMD=<program>@@<arg>@@<arg>... -DEXPECT_CODE=<n>
#         [-DEXPECT_STDERR=<regex>@@<regex>...] [-DEXPECT_STDOUT=<regex>@@<regex>...]
#         [-DEXPECT_FILE=<path>] [-DEXPECT_NO_FILE=<path>] -P expect_exit.cmake
#
# Lists are joined with "@@" because ';' would be split by add_test. Every regex must match
# (CMake regex syntax). EXPECT_FILE is removed before the run and must exist after it;
# EXPECT_NO_FILE is removed before the run and must not exist after it (no partial output).
cmake_minimum_required(VERSION 3.24)

foreach(var CMD EXPECT_CODE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_exit.cmake: ${var} is not set")
  endif()
endforeach()

string(REPLACE "@@" ";" command "${CMD}")
foreach(f EXPECT_FILE EXPECT_NO_FILE)
  if(DEFINED ${f})
    file(REMOVE "${${f}}")
  endif()
endforeach()

execute_process(
  COMMAND ${command}
  RESULT_VARIABLE code
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)

string(REPLACE "@@" " " shown "${CMD}")
message("command: ${shown}")
message("exit code: ${code} (expected ${EXPECT_CODE})")
message("stdout:\n${out}")
message("stderr:\n${err}")

set(failures "")
if(NOT "${code}" STREQUAL "${EXPECT_CODE}")
  string(APPEND failures "\n  exit code ${code}, expected ${EXPECT_CODE}")
endif()
foreach(stream STDERR STDOUT)
  if(DEFINED EXPECT_${stream})
    string(REPLACE "@@" ";" patterns "${EXPECT_${stream}}")
    string(TOLOWER "${stream}" name)
    if(stream STREQUAL "STDERR")
      set(text "${err}")
    else()
      set(text "${out}")
    endif()
    foreach(re IN LISTS patterns)
      if(NOT text MATCHES "${re}")
        string(APPEND failures "\n  ${name} does not match '${re}'")
      endif()
    endforeach()
  endif()
endforeach()
if(DEFINED EXPECT_FILE AND NOT EXISTS "${EXPECT_FILE}")
  string(APPEND failures "\n  ${EXPECT_FILE} was not written")
endif()

if(DEFINED EXPECT_NO_FILE AND EXISTS "${EXPECT_NO_FILE}")
  string(APPEND failures "\n  ${EXPECT_NO_FILE} was written by a failing command")
endif()

if(failures)
  message(FATAL_ERROR "expect_exit: FAILED${failures}")
endif()
message("expect_exit: PASSED")
