# Shared settings for kanon's own targets: warnings as errors and, when
# KANON_SANITIZE is on, ASan+UBSan. Third-party headers are SYSTEM includes,
# so -Werror applies to our code only.

set(KANON_WARNINGS -Wall -Wextra -Werror -Wno-missing-field-initializers)
set(KANON_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                          -fno-sanitize-recover=all)
# GCC 12 reports impossible std::string copies (-Wrestrict, GCC bug 105651)
# once ASan's instrumentation changes inlining; the Release build keeps the
# warning, the sanitizer build does not turn it into an error.
# Likewise GCC 12 reports Asio's coroutine frame allocator as a mismatched
# new/delete pair (-Wmismatched-new-delete) once ASan changes inlining.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND KANON_SANITIZER_FLAGS -Wno-error=restrict -Wno-error=mismatched-new-delete)
endif()

function(kanon_target_defaults target)
  target_compile_options(${target} PRIVATE ${KANON_WARNINGS})
  if(KANON_SANITIZE)
    target_compile_options(${target} PRIVATE ${KANON_SANITIZER_FLAGS})
    target_link_options(${target} PUBLIC ${KANON_SANITIZER_FLAGS})
  endif()
endfunction()

# kanon_add_library(name SOURCES ... DEPS ...): one library per module.
function(kanon_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  kanon_target_defaults(${name})
endfunction()

# kanon_add_test(name SOURCES ... DEPS ... LABELS ... [TIMEOUT s]): a doctest
# executable registered with CTest. Labels: unit (no network), integration
# (real PostgreSQL), robustness (random input).
function(kanon_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE kanon_doctest_main ${ARG_DEPS})
  kanon_target_defaults(${name})
  kanon_add_test_run(${name} ${name} TIMEOUT ${ARG_TIMEOUT} LABELS ${ARG_LABELS} ARGS ${ARG_ARGS})
endfunction()

# One more ctest entry for an executable kanon_add_test made, e.g. a part of
# its test cases (ARGS --test-case=...), so that each part keeps well inside
# its timeout under the sanitizers.
function(kanon_add_test_run name executable)
  cmake_parse_arguments(ARG "" "TIMEOUT" "LABELS;ARGS" ${ARGN})
  add_test(NAME ${name} COMMAND ${executable} ${ARG_ARGS})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "KANON_SOURCE_DIR=${PROJECT_SOURCE_DIR};KANON_BINARY_DIR=${PROJECT_BINARY_DIR}")
endfunction()
