# cmake -DCOMMAND="exe;arg;..." -DEXPECTED=<code> [-DMATCH=<regex>] -P expect_exit.cmake
# Runs COMMAND and fails unless it exits with EXPECTED (a crash is never a number) and, when
# MATCH is given, its stdout+stderr match it.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT "${code}" STREQUAL "${EXPECTED}")
  message(FATAL_ERROR "exit ${code}, expected ${EXPECTED}\n${out}${err}")
endif()
if(DEFINED MATCH AND NOT "${out}${err}" MATCHES "${MATCH}")
  message(FATAL_ERROR "output does not match '${MATCH}':\n${out}${err}")
endif()
