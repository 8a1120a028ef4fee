# Run by the CTest `layering.includes` (cmake/HivedLayering.cmake): builds the probes and
# checks the outcomes. PROBES is a list of "target|ok-or-fail|header". The allowed probes
# must compile; each forbidden one must fail *because its header is not found* (not for any
# other reason), so the test fails if the layering leaks or if a probe is broken.
set(ok_targets "")
set(fail_targets "")
foreach(probe IN LISTS PROBES)
  string(REPLACE "|" ";" fields "${probe}")
  list(GET fields 0 target)
  list(GET fields 1 expect)
  if(expect STREQUAL "ok")
    list(APPEND ok_targets ${target})
  else()
    list(APPEND fail_targets ${target})
  endif()
endforeach()

execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${ok_targets}
                RESULT_VARIABLE ok_rc OUTPUT_VARIABLE ok_out ERROR_VARIABLE ok_out)
# `-k 0`: keep going, so every forbidden probe is compiled and reports its own error.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${fail_targets} -- -k 0
                RESULT_VARIABLE fail_rc OUTPUT_VARIABLE fail_out ERROR_VARIABLE fail_out)

set(failures 0)
if(NOT ok_rc EQUAL 0)
  message(SEND_ERROR "FAIL allowed includes do not compile:\n${ok_out}")
  math(EXPR failures "${failures} + 1")
endif()
foreach(probe IN LISTS PROBES)
  string(REPLACE "|" ";" fields "${probe}")
  list(GET fields 0 target)
  list(GET fields 1 expect)
  list(GET fields 2 header)
  if(expect STREQUAL "ok")
    message(STATUS "ok   ${target}: `#include \"${header}\"` compiles")
    continue()
  endif()
  string(REGEX REPLACE "^layering_probe_" "" name ${target})
  string(REGEX MATCH "[^\n]*/${name}\\.cc:[^\n]*${header}[^\n]*(No such file or directory|file not found)[^\n]*"
         refused "${fail_out}")
  if(refused AND NOT fail_rc EQUAL 0)
    message(STATUS "ok   ${target}: refused: ${refused}")
  else()
    message(SEND_ERROR "FAIL ${target}: `#include \"${header}\"` must fail as not found")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} layering check(s) failed; build output:\n${fail_out}")
endif()
