# libFuzzer targets: clang only, on request (-DHIVED_BUILD_FUZZERS=ON). Each compiles the
# sources of the modules it exercises again with coverage instrumentation (the module
# objects are not instrumented), against the same include roots as the modules themselves.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "HIVED_BUILD_FUZZERS needs clang (-DCMAKE_CXX_COMPILER=clang++)")
endif()
set(HIVED_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

# hived_add_fuzzer(NAME <name> SOURCE <file> MODULES <module>... [SOURCES <more>...]
#                  [USAGE <targets>...])
function(hived_add_fuzzer)
  cmake_parse_arguments(ARG "" "NAME;SOURCE" "MODULES;SOURCES;USAGE" ${ARGN})
  hived_module_sources(sources ${ARG_MODULES})
  add_executable(${ARG_NAME} ${PROJECT_SOURCE_DIR}/tests/fuzz/${ARG_SOURCE} ${sources}
                 ${ARG_SOURCES})
  set(usage "")
  foreach(module IN LISTS ARG_MODULES)
    list(APPEND usage hived_${module}_usage)
  endforeach()
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${ARG_NAME} PRIVATE hived_hived_EXPORTS)
  target_compile_options(${ARG_NAME} PRIVATE ${HIVED_FUZZ_FLAGS})
  target_link_options(${ARG_NAME} PRIVATE ${HIVED_FUZZ_FLAGS})
  target_link_libraries(${ARG_NAME} PRIVATE ${usage} ${ARG_USAGE} hived_warnings)
  # Where .ci/run expects them: build/fuzz/fuzz/<name>.
  set_target_properties(${ARG_NAME} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
endfunction()

# The config loader: any bytes give a located error list or a spec that round-trips.
hived_add_fuzzer(NAME config_fuzz SOURCE config_fuzz.cc MODULES config hierarchy strict_yaml)

# The scenario loader (sim/): any bytes give located errors or a scenario, within the limits.
if(HIVED_BUILD_SIM)
  hived_add_fuzzer(NAME scenario_fuzz SOURCE scenario_fuzz.cc MODULES strict_yaml hierarchy
                   SOURCES ${PROJECT_SOURCE_DIR}/sim/scenario/scenario_loader.cc
                           ${PROJECT_SOURCE_DIR}/sim/scenario/scenario_steps.cc
                   USAGE hived_sim_scenario_usage)
endif()

# The persisted-state readers (issue 29): the saved-state reader (`Restore`), the group
# record reader and its replay (`AllocateRecord`), and `ImportHivedBindInfo`. They reach the
# whole library, compiled once here with the fuzzers' instrumentation and shared by the three.
hived_module_sources(hived_fuzz_lib_sources hierarchy strict_yaml cellalloc config core sharing
                     facade)
add_library(hived_fuzz_lib STATIC ${hived_fuzz_lib_sources})
target_compile_definitions(hived_fuzz_lib PRIVATE hived_hived_EXPORTS
                           HIVED_VERSION_STRING="${PROJECT_VERSION}")
# -O1 and line tables only: the library is 60 files, and stack traces need no more.
target_compile_options(hived_fuzz_lib PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                       -fno-sanitize-recover=all -O1 -gline-tables-only)
target_link_libraries(hived_fuzz_lib PUBLIC hived_hierarchy_usage hived_strict_yaml_usage
                      hived_cellalloc_usage hived_config_usage hived_core_usage
                      hived_sharing_usage hived_facade_usage)
foreach(name state group_record bind_info journal)
  add_executable(${name}_fuzz ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}_fuzz.cc)
  target_include_directories(${name}_fuzz PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${name}_fuzz PRIVATE ${HIVED_FUZZ_FLAGS})
  target_link_options(${name}_fuzz PRIVATE ${HIVED_FUZZ_FLAGS})
  target_link_libraries(${name}_fuzz PRIVATE hived_fuzz_lib hived_warnings)
  set_target_properties(${name}_fuzz PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
endforeach()
