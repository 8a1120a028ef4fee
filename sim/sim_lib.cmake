# The simulator's library (issue 6): trace readers, engine, queue policies, the sharing
# policies over hived::Scheduler, metrics and reports. Linked by hived-sim and the sim tests.
# Uses only the public API (include/hived).
find_package(nlohmann_json 3.11 REQUIRED)
add_library(hived_simlib STATIC
  ${CMAKE_CURRENT_LIST_DIR}/commands.cc
  ${CMAKE_CURRENT_LIST_DIR}/compare_multi.cc
  ${CMAKE_CURRENT_LIST_DIR}/csv.cc
  ${CMAKE_CURRENT_LIST_DIR}/engine.cc
  ${CMAKE_CURRENT_LIST_DIR}/fgd_frag.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_cluster.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_experiment.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_hived.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_library.cc
  ${CMAKE_CURRENT_LIST_DIR}/fill_policy.cc
  ${CMAKE_CURRENT_LIST_DIR}/flags.cc
  ${CMAKE_CURRENT_LIST_DIR}/plot.cc
  ${CMAKE_CURRENT_LIST_DIR}/event_queue.cc
  ${CMAKE_CURRENT_LIST_DIR}/gen_cluster.cc
  ${CMAKE_CURRENT_LIST_DIR}/gen_trace.cc
  ${CMAKE_CURRENT_LIST_DIR}/hived_backend.cc
  ${CMAKE_CURRENT_LIST_DIR}/json.cc
  ${CMAKE_CURRENT_LIST_DIR}/metrics.cc
  ${CMAKE_CURRENT_LIST_DIR}/node_events.cc
  ${CMAKE_CURRENT_LIST_DIR}/node_usage.cc
  ${CMAKE_CURRENT_LIST_DIR}/openb_config.cc
  ${CMAKE_CURRENT_LIST_DIR}/openb_reader.cc
  ${CMAKE_CURRENT_LIST_DIR}/openb_replay.cc
  ${CMAKE_CURRENT_LIST_DIR}/plan.cc
  ${CMAKE_CURRENT_LIST_DIR}/output_dir.cc
  ${CMAKE_CURRENT_LIST_DIR}/private_backend.cc
  ${CMAKE_CURRENT_LIST_DIR}/queue_policy.cc
  ${CMAKE_CURRENT_LIST_DIR}/quota_backend.cc
  ${CMAKE_CURRENT_LIST_DIR}/replay.cc
  ${CMAKE_CURRENT_LIST_DIR}/replay_measure.cc
  ${CMAKE_CURRENT_LIST_DIR}/run_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/run_options.cc
  ${CMAKE_CURRENT_LIST_DIR}/scheduler_backend.cc
  ${CMAKE_CURRENT_LIST_DIR}/sharing_model.cc
  ${CMAKE_CURRENT_LIST_DIR}/spec_edit.cc
  ${CMAKE_CURRENT_LIST_DIR}/spec_info.cc
  ${CMAKE_CURRENT_LIST_DIR}/sweep.cc
  ${CMAKE_CURRENT_LIST_DIR}/sweep_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/sweep_runner.cc
  ${CMAKE_CURRENT_LIST_DIR}/trace_reader.cc
  ${CMAKE_CURRENT_LIST_DIR}/trace_transform.cc
)
target_link_libraries(hived_simlib
  PUBLIC hived_sim_usage hived::hived absl::status absl::statusor absl::strings absl::str_format
         absl::flat_hash_map absl::flat_hash_set absl::function_ref
         nlohmann_json::nlohmann_json
  PRIVATE hived_warnings Threads::Threads)
target_link_libraries(hived-sim PRIVATE hived_simlib)
