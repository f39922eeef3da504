# Runs the rewind tool and checks that it fails the way it should (used by tests/cli/CMakeLists.txt).
#
#   cmake -DCLI=path/to/rewind -DSTATUS=2 "-DREGEX=unknown problem" "-DARGS=run|nope" \
#         -P expect_failure.cmake
#
# Passes when the exit status is STATUS, stdout is empty, and stderr is exactly one line that
# starts with "rewind: error: " and matches REGEX.
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${CLI} ${args}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(JOIN " " command ${CLI} ${args})
set(shown "command: ${command}\nstatus: ${status}\nstdout: ${out}\nstderr: ${err}")
if(NOT status STREQUAL STATUS)
  message(FATAL_ERROR "expected exit status ${STATUS}\n${shown}")
endif()
if(NOT out STREQUAL "")
  message(FATAL_ERROR "expected nothing on stdout\n${shown}")
endif()
if(NOT err MATCHES "^rewind: error: [^\n]*\n$")
  message(FATAL_ERROR "expected one line 'rewind: error: ...' on stderr\n${shown}")
endif()
if(NOT err MATCHES "${REGEX}")
  message(FATAL_ERROR "stderr does not match '${REGEX}'\n${shown}")
endif()
message(STATUS "ok: ${err}")
