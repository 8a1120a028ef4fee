set(HIVED_SHARED_DIR "${PROJECT_SOURCE_DIR}/../shared" CACHE PATH
    "The shared/ folder beside the checkout (HiveD configs, traces); tests needing it skip without it")

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

# hived_add_module(NAME <name> SOURCES ... [DEPS ...])
# An object library `hived_<name>` plus an interface `hived_<name>_usage` that carries its
# include paths and link dependencies (object libraries do not pass their objects on).
function(hived_add_module)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES;DEPS" ${ARGN})
  set(target hived_${ARG_NAME})
  if(NOT ARG_SOURCES)
    return()  # a module still without code contributes nothing
  endif()
  set_property(GLOBAL APPEND PROPERTY HIVED_MODULES ${target})
  set_property(GLOBAL APPEND PROPERTY HIVED_MODULE_DEPS ${ARG_DEPS})
  add_library(${target} OBJECT ${ARG_SOURCES})
  add_library(${target}_usage INTERFACE)
  target_include_directories(${target}_usage INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/export>
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
  target_link_libraries(${target}_usage INTERFACE ${HIVED_PRIVATE_DEPS} ${ARG_DEPS}
                        Threads::Threads)
  target_link_libraries(${target} PRIVATE ${target}_usage $<BUILD_INTERFACE:hived_warnings>)
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES
    POSITION_INDEPENDENT_CODE ${BUILD_SHARED_LIBS}
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # The objects end up in hived_hived: export its public symbols.
  target_compile_definitions(${target} PRIVATE hived_hived_EXPORTS
    HIVED_VERSION_STRING="${PROJECT_VERSION}")
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
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_compile_definitions(${ARG_NAME} PRIVATE
    HIVED_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    HIVED_SHARED_DIR="${HIVED_SHARED_DIR}")
  catch_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES ENVIRONMENT "HIVED_SHARED_DIR=${HIVED_SHARED_DIR}")
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
