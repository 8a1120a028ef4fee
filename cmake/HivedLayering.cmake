# The layering test (issue 9): compiles one-line probes against each module's include root
# and checks that every forbidden include fails with "No such file" while the allowed ones
# compile. The probes are excluded from the normal build; the CTest `layering.includes` builds
# them one by one (cmake/check_layering.cmake) and prints the compiler's error for each
# forbidden include.
#
# hived_layering_probe(<name> <ok|fail> <header> <usage targets>...)
set(HIVED_LAYERING_PROBES "")
function(hived_layering_probe name expect header)
  set(target layering_probe_${name})
  set(source ${PROJECT_BINARY_DIR}/layering/${name}.cc)
  file(CONFIGURE OUTPUT ${source} CONTENT "#include \"${header}\"\n")
  add_library(${target} OBJECT EXCLUDE_FROM_ALL ${source})
  set_target_properties(${target} PROPERTIES EXCLUDE_FROM_DEFAULT_BUILD ON)
  target_link_libraries(${target} PRIVATE ${ARGN})
  target_compile_features(${target} PRIVATE cxx_std_17)
  set(HIVED_LAYERING_PROBES ${HIVED_LAYERING_PROBES} "${target}|${expect}|${header}"
      PARENT_SCOPE)
endfunction()

# hierarchy: the bottom; Abseil and the public plain data only.
hived_layering_probe(hierarchy_own ok hierarchy/spec_analysis.h hived_hierarchy_usage)
hived_layering_probe(hierarchy_cellalloc fail cellalloc/cell_forest.h hived_hierarchy_usage)
hived_layering_probe(hierarchy_yaml fail strict_yaml/strict_yaml.h hived_hierarchy_usage)
# cellalloc: the hierarchy and the public spec only.
hived_layering_probe(cellalloc_yaml fail strict_yaml/strict_yaml.h hived_cellalloc_usage)
hived_layering_probe(cellalloc_own ok cellalloc/buddy_allocator.h hived_cellalloc_usage)
hived_layering_probe(cellalloc_src fail src/scheduler_impl.h hived_cellalloc_usage)
hived_layering_probe(cellalloc_config fail config/loader.cc hived_cellalloc_usage)
hived_layering_probe(cellalloc_hierarchy ok hierarchy/spec_analysis.h hived_cellalloc_usage)
# config: never the scheduler or the allocator.
hived_layering_probe(config_own ok strict_yaml/strict_yaml.h hived_config_usage)
hived_layering_probe(config_hierarchy ok hierarchy/spec_analysis.h hived_config_usage)
hived_layering_probe(config_src fail src/scheduler_impl.h hived_config_usage)
hived_layering_probe(config_cellalloc fail cellalloc/cell_forest.h hived_config_usage)
# core (src/): the allocator below it.
hived_layering_probe(core_own ok src/scheduler_impl.h hived_core_usage)
hived_layering_probe(core_config fail config/loader.cc hived_core_usage)
hived_layering_probe(core_yaml fail strict_yaml/strict_yaml.h hived_core_usage)
# GPU sharing (issue 27 item 7): the layer sees the core; the core never sees the layer.
hived_layering_probe(core_sharing fail sharing/layered.h hived_core_usage)
hived_layering_probe(sharing_own ok sharing/layered.h hived_sharing_usage)
hived_layering_probe(sharing_core ok src/scheduler_impl.h hived_sharing_usage)
hived_layering_probe(facade_sharing ok sharing/layered.h hived_facade_usage)
# sim: the public API, strict YAML for scenario files, and its modules' own layering.
if(TARGET hived_sim_cli_usage)
  include(${CMAKE_CURRENT_LIST_DIR}/HivedSimLayering.cmake)
endif()
# Benchmarks: the library's internals, never a test header.
hived_layering_probe(bench_tests fail unit/cellalloc/test_specs.h hived_internal_usage)

add_test(NAME layering.includes
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
          "-DPROBES=${HIVED_LAYERING_PROBES}" -P ${PROJECT_SOURCE_DIR}/cmake/check_layering.cmake)
# The probes are built in this build tree: never two such builds at once.
set_tests_properties(layering.includes PROPERTIES RESOURCE_LOCK hived_build_tree LABELS layering)
