# format_check.cmake: fails when clang-format (the project's .clang-format) would change a C++
# file tracked by git. Run by ctest as format_check; fix with
#   git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' | xargs clang-format -i
execute_process(COMMAND ${GIT} ls-files *.cpp *.hpp *.cu *.cuh
                WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE files OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "git ls-files failed in ${SOURCE_DIR}")
endif()
string(REPLACE "\n" ";" files "${files}")
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${files}
                WORKING_DIRECTORY ${SOURCE_DIR}
                ERROR_VARIABLE complaints RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  string(REGEX MATCHALL "[^\n]*: error: code should be clang-formatted[^\n]*" lines "${complaints}")
  list(LENGTH lines count)
  string(REPLACE ";" "\n" lines "${lines}")
  message(FATAL_ERROR "${count} places are not formatted (clang-format -i fixes them):\n${lines}")
endif()
