# Capacity planning (issue 11): spec edits, trace transforms, sweep/merge, plan, compare.
# The end-to-end tests run the hived-sim binary, whose path they get at compile time.
hived_add_test(NAME unit_sim_planning
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/spec_edit_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/trace_transform_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/sweep_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/plan_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/plan_cost_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/plan_comments_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/plan_sure_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/move_vc_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/growth_test.cc
  LIBS hived_simlib)
if(TARGET hived-sim)
  target_compile_definitions(unit_sim_planning PRIVATE HIVED_SIM_EXE="$<TARGET_FILE:hived-sim>")
  add_dependencies(unit_sim_planning hived-sim)
endif()
