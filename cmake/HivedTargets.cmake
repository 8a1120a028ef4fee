set(HIVED_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH
    "The shared/ folder beside the checkout (the real traces); tests needing it are reported Skipped without it")

# Helpers that give every hived target the same settings.

# The dependencies every internal module may use privately.
set(HIVED_PRIVATE_DEPS absl::status absl::statusor absl::strings absl::str_format
    absl::flat_hash_map absl::flat_hash_set absl::inlined_vector absl::span
    absl::random_random)
if(TARGET yaml-cpp::yaml-cpp)
  set(HIVED_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(HIVED_YAML_TARGET yaml-cpp)
endif()

# Layering (issue 9): every module compiles against an include root of its own, a folder in
# the build tree holding a symlink to the module's source folder and nothing else. A module
# sees the public headers (include/, the generated export.h), its own root and the roots of
# the modules it declares in MODULES; the project root is never an include path. So
# `#include "src/scheduler_impl.h"` from cellalloc/ fails to compile ("No such file or
# directory") while today's spellings (`#include "cellalloc/buddy_allocator.h"`) keep working
# where the dependency is declared. cmake/HivedLayering.cmake tests that it holds.

# hived_include_root(<name> <folder>)
# Creates the include root `include-roots/<name>` exposing the source folder <folder>.
function(hived_include_root name folder)
  set(root ${PROJECT_BINARY_DIR}/include-roots/${name})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  set_property(GLOBAL PROPERTY HIVED_INCLUDE_ROOT_${name} ${root})
endfunction()

# hived_add_module(NAME <name> [FOLDER <folder>] SOURCES ... [MODULES ...]
#                  [PRIVATE_MODULES ...] [DEPS ...])
# An object library `hived_<name>` plus an interface `hived_<name>_usage` that carries its
# include root, the usage of the modules its headers include (MODULES) and its link
# dependencies (object libraries do not pass their objects on). PRIVATE_MODULES may be
# included by its sources only: its users do not see them. FOLDER defaults to <name>. Adding
# a source file is a one-line change to SOURCES.
function(hived_add_module)
  cmake_parse_arguments(ARG "" "NAME;FOLDER" "SOURCES;MODULES;PRIVATE_MODULES;DEPS" ${ARGN})
  set(target hived_${ARG_NAME})
  if(NOT ARG_FOLDER)
    set(ARG_FOLDER ${ARG_NAME})
  endif()
  if(NOT ARG_SOURCES)
    return()  # a module still without code contributes nothing
  endif()
  hived_include_root(${ARG_NAME} ${ARG_FOLDER})
  get_property(root GLOBAL PROPERTY HIVED_INCLUDE_ROOT_${ARG_NAME})
  set_property(GLOBAL APPEND PROPERTY HIVED_MODULES ${target})
  set_property(GLOBAL APPEND PROPERTY HIVED_MODULE_DEPS ${ARG_DEPS})
  set(sources "")
  foreach(source IN LISTS ARG_SOURCES)
    list(APPEND sources ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  endforeach()
  set_property(GLOBAL PROPERTY HIVED_MODULE_SOURCES_${ARG_NAME} ${sources})
  add_library(${target} OBJECT ${ARG_SOURCES})
  add_library(${target}_usage INTERFACE)
  target_include_directories(${target}_usage INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/export>
    $<BUILD_INTERFACE:${root}>)
  set(module_usage "")
  foreach(module IN LISTS ARG_MODULES)
    list(APPEND module_usage hived_${module}_usage)
  endforeach()
  target_link_libraries(${target}_usage INTERFACE ${module_usage} ${HIVED_PRIVATE_DEPS}
                        ${ARG_DEPS} Threads::Threads)
  set(private_usage "")
  foreach(module IN LISTS ARG_PRIVATE_MODULES)
    list(APPEND private_usage hived_${module}_usage)
  endforeach()
  target_link_libraries(${target} PRIVATE ${target}_usage ${private_usage}
                        $<BUILD_INTERFACE:hived_warnings>)
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ${BUILD_SHARED_LIBS}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # The objects end up in hived_hived: export its public symbols.
  target_compile_definitions(${target} PRIVATE hived_hived_EXPORTS
    HIVED_VERSION_STRING="${PROJECT_VERSION}")
endfunction()

# hived_module_sources(<out> <module>...): the absolute source paths of modules, for targets
# that compile them again with other flags (the fuzzers).
function(hived_module_sources out)
  set(all "")
  foreach(module IN LISTS ARGN)
    get_property(sources GLOBAL PROPERTY HIVED_MODULE_SOURCES_${module})
    list(APPEND all ${sources})
  endforeach()
  set(${out} ${all} PARENT_SCOPE)
endfunction()

# hived_add_test(NAME <name> SOURCES ... [LIBS ...])
# A Catch2 test executable registered with CTest. LIBS defaults to `hived_internal`.
function(hived_add_test)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LIBS)
    set(ARG_LIBS hived_internal)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} Catch2::Catch2WithMain hived_warnings)
  # Tests may use the benchmarks' topology helpers (bench/); the reverse is not allowed.
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests
                             ${PROJECT_SOURCE_DIR}/bench)
  target_compile_definitions(${ARG_NAME} PRIVATE
    HIVED_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    HIVED_SHARED_DIR="${HIVED_SHARED_DIR}")
  # A test case that calls HIVED_SKIP_TEST (tests/support/testdata.h: data a fresh clone has
  # not, e.g. the real traces in ../shared) is reported "Skipped", never "Passed".
  catch_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES SKIP_REGULAR_EXPRESSION "HIVED_SKIP_TEST:")
endfunction()

# hived_add_bench(NAME <name> SOURCES ... [LIBS ...])
function(hived_add_bench)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LIBS)
    set(ARG_LIBS hived_internal)
  endif()
  add_executable(${ARG_NAME} ${ARG_SOURCES})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} benchmark::benchmark_main
                        hived_warnings)
  target_compile_definitions(${ARG_NAME} PRIVATE
    HIVED_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    HIVED_SHARED_DIR="${HIVED_SHARED_DIR}")
  set_property(GLOBAL APPEND PROPERTY HIVED_BENCHMARKS ${ARG_NAME})
endfunction()
