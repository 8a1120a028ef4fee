# The openb readers and the FGD fill experiment (sim/openb_*, sim/fill_*, sim/policies/fgd_frag.*).
if(TARGET hived_simlib)
  hived_add_test(NAME unit_sim_openb
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/openb_test.cc ${CMAKE_CURRENT_LIST_DIR}/fill_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/openb_replay_test.cc ${CMAKE_CURRENT_LIST_DIR}/fill_hived_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/sharing_model_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/pod_replay_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/pod_summary_test.cc
            ${CMAKE_CURRENT_LIST_DIR}/fill_library_test.cc
    LIBS hived_simlib)
endif()
