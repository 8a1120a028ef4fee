# The simulator's layering (sim/README.md), checked as the library's is: included by
# cmake/HivedLayering.cmake, which defines `hived_layering_probe`. This table states what each
# module of sim/ may include, written apart from sim/CMakeLists.txt's declarations so that a
# dependency added there against the layering fails the CTest `layering.sim_includes`.
#
# Per module: one allowed probe (its own header) and one forbidden probe for every module it
# may not see (a layer above it, or a sibling), each of which must fail with "No such file".
#
# "<module>|<a header of it>|<the modules it may see>"
set(HIVED_SIM_LAYERS
  "common|sim/common/csv.h|"
  "cluster|sim/cluster/spec_info.h|common"
  "trace|sim/trace/trace_reader.h|cluster common"
  "engine|sim/engine/engine.h|trace cluster common"
  "policies|sim/policies/scheduler_backend.h|engine trace cluster common"
  "metrics|sim/metrics/metrics.h|engine trace cluster common"
  "openb|sim/openb/openb_replay.h|policies engine trace cluster common"
  "planning|sim/planning/sweep.h|policies engine trace cluster common"
  "scenario|sim/scenario/scenario.h|common"
  "cli|sim/cli/commands.h|planning openb metrics policies engine trace cluster common")

set(hived_saved_probes ${HIVED_LAYERING_PROBES})
set(HIVED_LAYERING_PROBES "")
set(hived_sim_modules "")
foreach(layer IN LISTS HIVED_SIM_LAYERS)
  string(REPLACE "|" ";" fields "${layer}")
  list(GET fields 0 module)
  list(APPEND hived_sim_modules ${module})
endforeach()
foreach(layer IN LISTS HIVED_SIM_LAYERS)
  string(REPLACE "|" ";" fields "${layer}")
  list(GET fields 0 module)
  list(GET fields 1 header)
  list(GET fields 2 allowed)
  string(REPLACE " " ";" allowed "${allowed}")
  set(usage hived_sim_${module}_usage)
  hived_layering_probe(sim_${module}_own ok ${header} ${usage})
  foreach(other IN LISTS HIVED_SIM_LAYERS)
    string(REPLACE "|" ";" other_fields "${other}")
    list(GET other_fields 0 other_module)
    list(GET other_fields 1 other_header)
    if(other_module STREQUAL module OR other_module IN_LIST allowed)
      continue()
    endif()
    hived_layering_probe(sim_${module}_${other_module} fail ${other_header} ${usage})
  endforeach()
  # The library's internals stay out of every module; strict YAML is scenario's and
  # the CLI's (`validate`) alone.
  hived_layering_probe(sim_${module}_src fail src/scheduler_impl.h ${usage})
  hived_layering_probe(sim_${module}_cellalloc fail cellalloc/cell_forest.h ${usage})
  if(module STREQUAL "scenario" OR module STREQUAL "cli")
    hived_layering_probe(sim_${module}_strict_yaml ok strict_yaml/strict_yaml.h ${usage})
  else()
    hived_layering_probe(sim_${module}_strict_yaml fail strict_yaml/strict_yaml.h ${usage})
  endif()
endforeach()
# The public API from the top, and the library's other internals from scenario (the module
# that sees the most of them).
hived_layering_probe(sim_cli_public ok hived/scheduler.h hived_sim_cli_usage)
hived_layering_probe(sim_scenario_config fail config/loader.cc hived_sim_scenario_usage)
hived_layering_probe(sim_scenario_hierarchy fail hierarchy/spec_analysis.h hived_sim_scenario_usage)
set(HIVED_SIM_LAYERING_PROBES ${HIVED_LAYERING_PROBES})
set(HIVED_LAYERING_PROBES ${hived_saved_probes})

add_test(NAME layering.sim_includes
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR}
          "-DPROBES=${HIVED_SIM_LAYERING_PROBES}" -P ${PROJECT_SOURCE_DIR}/cmake/check_layering.cmake)
set_tests_properties(layering.sim_includes PROPERTIES RESOURCE_LOCK hived_build_tree
                     LABELS layering)
