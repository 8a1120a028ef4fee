/* The C interface (include/hived/hived_c.h), compiled as C11: every call, with good input
 * and with misuse (NULL handles and pointers, bad YAML and JSON, unknown groups, VCs and
 * nodes), each giving the documented code and a message, never a crash. Run from the source
 * root (CTest's working directory) so config/examples/two-racks.yaml is found. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"
#include "hived/hived_c.h"

static void TestNamesAndVersion(void) {
  CHECK(strlen(hived_version()) >= 5);
  CHECK(strcmp(hived_code_name(HIVED_OK), "ok") == 0);
  CHECK(strcmp(hived_code_name(HIVED_NOT_FOUND), "not-found") == 0);
  CHECK(strcmp(hived_code_name(99), "unknown") == 0);
  CHECK(strcmp(hived_outcome_name(HIVED_OUTCOME_INFEASIBLE), "infeasible") == 0);
  CHECK(strcmp(hived_outcome_name(-3), "unknown") == 0);
  CHECK(strcmp(hived_reason_code_name(HIVED_REASON_LAZY_DOWNGRADE), "lazy-downgrade") == 0);
  CHECK(strcmp(hived_reason_code_name(11), "unknown") == 0);
  hived_free(NULL);
}

static void TestConfigs(void) {
  char* err = NULL;
  hived_config* config = NULL;
  EXPECT(hived_config_load_file(NULL, &config, &err), HIVED_INVALID_ARGUMENT, "path is NULL");
  EXPECT(hived_config_load_file(kConfigPath, NULL, &err), HIVED_INVALID_ARGUMENT, "out is NULL");
  EXPECT(hived_config_load_file("no/such/file.yaml", &config, &err), HIVED_NOT_FOUND, NULL);
  CHECK(config == NULL);
  const char* bad = "physicalCluster:\n  cellTypes: [\n";
  EXPECT(hived_config_load_yaml(bad, strlen(bad), &config, &err), HIVED_INVALID_ARGUMENT,
         "<yaml>:");
  EXPECT(hived_config_load_yaml(NULL, 3, &config, &err), HIVED_INVALID_ARGUMENT, "yaml is NULL");
  EXPECT(hived_config_load_yaml(NULL, 0, &config, &err), HIVED_INVALID_ARGUMENT, NULL);
  CHECK(config == NULL);
  EXPECT(hived_config_load_file(kConfigPath, &config, &err), HIVED_OK, NULL);
  CHECK(config != NULL);
  hived_scheduler* s = NULL;
  EXPECT(hived_scheduler_create(NULL, &s, &err), HIVED_INVALID_ARGUMENT, "config is NULL");
  EXPECT(hived_scheduler_create(config, NULL, &err), HIVED_INVALID_ARGUMENT, "out is NULL");
  EXPECT(hived_scheduler_create(config, &s, &err), HIVED_OK, NULL);
  hived_config_destroy(config); /* the scheduler keeps its own copy */
  EXPECT(hived_check_invariants(s, &err), HIVED_OK, NULL);
  hived_scheduler_destroy(s);
  s = NULL;

  /* The YAML shorthand; an earlier message in *error is freed, not leaked. */
  FILE* f = fopen(kConfigPath, "rb");
  CHECK(f != NULL);
  if (f == NULL) return;
  char text[8192];
  const size_t n = fread(text, 1, sizeof text, f);
  fclose(f);
  err = malloc(4);
  strcpy(err, "old");
  CHECK(hived_scheduler_create_from_yaml(text, 10, &s, &err) == HIVED_INVALID_ARGUMENT);
  CHECK(err != NULL && strcmp(err, "old") != 0);
  hived_free(err);
  err = NULL;
  EXPECT(hived_scheduler_create_from_yaml(text, n, NULL, &err), HIVED_INVALID_ARGUMENT,
         "out is NULL");
  EXPECT(hived_scheduler_create_from_yaml(text, n, &s, &err), HIVED_OK, NULL);
  hived_scheduler_destroy(s);
  s = NULL;
  EXPECT(hived_scheduler_create_from_file(NULL, &s, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_scheduler_create_from_file(kConfigPath, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  /* Errors without a message pointer are still codes. */
  CHECK(hived_scheduler_create_from_file("no/such/file.yaml", &s, NULL) == HIVED_NOT_FOUND);
  hived_scheduler_destroy(NULL);
  hived_config_destroy(NULL);
}

static void TestRequests(void) {
  char* err = NULL;
  hived_request* request = NULL;
  hived_request_desc desc;
  memset(&desc, 0, sizeof desc);
  EXPECT(hived_request_create(NULL, &request, &err), HIVED_INVALID_ARGUMENT, "desc is NULL");
  EXPECT(hived_request_create(&desc, NULL, &err), HIVED_INVALID_ARGUMENT, "out is NULL");
  desc.member_count = 2;
  EXPECT(hived_request_create(&desc, &request, &err), HIVED_INVALID_ARGUMENT, "members");
  desc.member_count = 0;
  desc.leaf_cell_type_count = 1;
  EXPECT(hived_request_create(&desc, &request, &err), HIVED_INVALID_ARGUMENT, "leaf_cell_types");
  desc.leaf_cell_type_count = 0;
  desc.has_suggested_nodes = 1;
  desc.suggested_node_count = 1;
  EXPECT(hived_request_create(&desc, &request, &err), HIVED_INVALID_ARGUMENT, "suggested_nodes");
  CHECK(request == NULL);
  hived_request_destroy(NULL);
}

/* Schedule, allocate, views, release; the phases; misuse of each. */
static void TestLifecycle(void) {
  char* err = NULL;
  hived_scheduler* s = NULL;
  EXPECT(hived_scheduler_create_from_file(kConfigPath, &s, &err), HIVED_OK, NULL);
  hived_result* result = hived_result_create();
  CHECK(result != NULL);
  hived_request* req = MakeRequest("g1", "prod", 0, 2, 8, 0);

  /* NULL arguments. */
  EXPECT(hived_schedule(NULL, req, HIVED_PHASE_PREEMPTING, result, &err), HIVED_INVALID_ARGUMENT,
         "hived_schedule: scheduler is NULL");
  EXPECT(hived_schedule(s, NULL, HIVED_PHASE_PREEMPTING, result, &err), HIVED_INVALID_ARGUMENT,
         "request is NULL");
  EXPECT(hived_schedule(s, req, HIVED_PHASE_PREEMPTING, NULL, &err), HIVED_INVALID_ARGUMENT,
         "result is NULL");
  EXPECT(hived_schedule(s, req, 7, result, &err), HIVED_INVALID_ARGUMENT, "not a hived_phase");

  /* Filtering changes nothing; Preempting reserves. */
  EXPECT(hived_schedule(s, req, HIVED_PHASE_FILTERING, result, &err), HIVED_OK, NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_PLACED);
  char* json = NULL;
  EXPECT(hived_group_json(s, "g1", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(json != NULL && strstr(json, "\"state\":\"absent\"") != NULL);
  hived_free(json);
  json = NULL;

  EXPECT(hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_PLACED);
  CHECK(hived_result_reason_code(result) == HIVED_REASON_NONE);
  CHECK(strcmp(hived_result_chain(result), "V100-RACK") == 0);
  CHECK(hived_result_pod_count(result) == 2);
  CHECK(hived_result_victim_count(result) == 0);
  CHECK(strncmp(hived_result_pod_node(result, 0), "rack", 4) == 0);
  CHECK(hived_result_pod_leaf_cell_number(result, 1) == 8);
  size_t count = 0;
  const int32_t* indices = hived_result_pod_leaf_cell_indices(result, 0, &count);
  CHECK(indices != NULL && count == 8 && indices[7] == 7);
  /* Out of range and NULL: empty answers. */
  CHECK(strcmp(hived_result_pod_node(result, 2), "") == 0);
  CHECK(hived_result_pod_leaf_cell_number(result, 5) == 0);
  CHECK(hived_result_pod_leaf_cell_indices(result, 9, &count) == NULL && count == 0);
  CHECK(strcmp(hived_result_victim(result, 0), "") == 0);
  CHECK(hived_result_outcome(NULL) == HIVED_OUTCOME_WAITING);
  CHECK(hived_result_reason_code(NULL) == HIVED_REASON_NONE);
  CHECK(strcmp(hived_result_reason(NULL), "") == 0);
  CHECK(strcmp(hived_result_chain(NULL), "") == 0);
  CHECK(hived_result_pod_count(NULL) == 0 && hived_result_victim_count(NULL) == 0);
  CHECK(strcmp(hived_result_pod_node(NULL, 0), "") == 0);
  CHECK(strcmp(hived_result_victim(NULL, 0), "") == 0);
  CHECK(hived_result_pod_leaf_cell_number(NULL, 0) == 0);
  CHECK(hived_result_pod_leaf_cell_indices(NULL, 0, NULL) == NULL);

  size_t len = 0;
  EXPECT(hived_result_json(result, &json, &len, &err), HIVED_OK, NULL);
  CHECK(json != NULL && strlen(json) == len && strstr(json, "\"outcome\":\"placed\"") != NULL);
  hived_free(json);
  json = NULL;
  EXPECT(hived_result_json(NULL, &json, &len, &err), HIVED_INVALID_ARGUMENT, "result is NULL");
  EXPECT(hived_result_json(result, NULL, &len, &err), HIVED_INVALID_ARGUMENT, "json is NULL");

  /* Allocate: misuse first, then the reserved placement. */
  hived_allocate_info info = {1, NULL};
  EXPECT(hived_allocate(NULL, req, result, &info, &err), HIVED_INVALID_ARGUMENT, "scheduler");
  CHECK(info.downgraded == 0 && info.reason == NULL);
  EXPECT(hived_allocate(s, NULL, result, &info, &err), HIVED_INVALID_ARGUMENT, "request");
  EXPECT(hived_allocate(s, req, NULL, &info, &err), HIVED_INVALID_ARGUMENT, "result");
  hived_request* other = MakeRequest("other", "prod", 0, 1, 8, 0);
  EXPECT(hived_allocate(s, other, result, &info, &err), HIVED_FAILED_PRECONDITION, "other");
  EXPECT(hived_allocate(s, req, result, &info, &err), HIVED_OK, NULL);
  CHECK(info.downgraded == 0 && info.reason == NULL);
  EXPECT(hived_allocate(s, req, result, NULL, &err), HIVED_ALREADY_EXISTS, "g1");
  EXPECT(hived_check_invariants(s, &err), HIVED_OK, NULL);
  EXPECT(hived_check_invariants(NULL, &err), HIVED_INVALID_ARGUMENT, "scheduler is NULL");

  /* A request that is malformed, or names an unknown VC. */
  hived_request* empty = MakeRequest("empty", "prod", 0, 0, 8, 0);
  EXPECT(hived_schedule(s, empty, HIVED_PHASE_PREEMPTING, result, &err), HIVED_INVALID_ARGUMENT,
         NULL);
  CHECK(hived_result_pod_count(result) == 0); /* emptied on an error */
  hived_request* unknown_vc = MakeRequest("u", "no-such-vc", 0, 1, 1, 0);
  EXPECT(hived_schedule(s, unknown_vc, HIVED_PHASE_PREEMPTING, result, &err), HIVED_NOT_FOUND,
         "no-such-vc");
  /* Waiting and infeasible are results, not errors. */
  hived_request* too_big = MakeRequest("big", "dev", 0, 1, 8, 0);
  EXPECT(hived_schedule(s, too_big, HIVED_PHASE_FILTERING, result, &err), HIVED_OK, NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_INFEASIBLE);
  CHECK(strlen(hived_result_reason(result)) > 0);
  CHECK(hived_result_reason_code(result) != HIVED_REASON_NONE);

  /* Preemption: an opportunistic group, then a guaranteed one that needs its cells. */
  hived_request* opp = MakeRequest("opp", "research", -1, 4, 8, 0);
  EXPECT(hived_schedule(s, opp, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_PLACED);
  EXPECT(hived_allocate(s, opp, result, NULL, &err), HIVED_OK, NULL);
  hived_request* prod2 = MakeRequest("g2", "prod", 0, 2, 8, 0);
  EXPECT(hived_schedule(s, prod2, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_PREEMPTING);
  CHECK(hived_result_victim_count(result) == 1);
  CHECK(strcmp(hived_result_victim(result, 0), "opp") == 0);
  EXPECT(hived_cancel_preemption(s, "g2", &err), HIVED_OK, NULL);
  EXPECT(hived_cancel_preemption(s, "g2", &err), HIVED_NOT_FOUND, "g2");
  EXPECT(hived_cancel_preemption(NULL, "g2", &err), HIVED_INVALID_ARGUMENT, "scheduler");
  EXPECT(hived_cancel_preemption(s, NULL, &err), HIVED_INVALID_ARGUMENT, "group is NULL");

  EXPECT(hived_release(s, "opp", &err), HIVED_OK, NULL);

  /* Unreserve. */
  hived_request* dev = MakeRequest("d", "dev", 0, 1, 4, 0);
  EXPECT(hived_schedule(s, dev, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_PLACED);
  EXPECT(hived_release(s, "d", &err), HIVED_FAILED_PRECONDITION, NULL);
  EXPECT(hived_unreserve(s, "d", &err), HIVED_OK, NULL);
  EXPECT(hived_unreserve(s, "d", &err), HIVED_NOT_FOUND, "d");
  EXPECT(hived_unreserve(s, "g1", &err), HIVED_FAILED_PRECONDITION, "g1");
  EXPECT(hived_unreserve(NULL, "d", &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_unreserve(s, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);

  /* Node health. */
  EXPECT(hived_set_node_healthy(s, "rack1-node0", 0, &err), HIVED_OK, NULL);
  EXPECT(hived_set_node_healthy(s, "no-such-node", 0, &err), HIVED_NOT_FOUND, "no-such-node");
  EXPECT(hived_set_node_healthy(NULL, "rack1-node0", 0, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_set_node_healthy(s, NULL, 0, &err), HIVED_INVALID_ARGUMENT, "node is NULL");

  /* Views. */
  EXPECT(hived_groups_json(s, &json, &len, &err), HIVED_OK, NULL);
  CHECK(json != NULL && json[0] == '[' && strstr(json, "\"name\":\"g1\"") != NULL &&
        strlen(json) == len);
  hived_free(json);
  {
    size_t page_len = 0;
    EXPECT(hived_groups_page_json(s, NULL, 1, &json, &page_len, &err), HIVED_OK, NULL);
    CHECK(json != NULL && strstr(json, "\"name\":\"g1\"") != NULL && strlen(json) == page_len);
    hived_free(json);
  }
  EXPECT(hived_groups_page_json(s, "g1", 5, &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"name\":\"g1\"") == NULL);
  hived_free(json);
  {
    uint64_t version = 0;
    EXPECT(hived_state_version(s, &version, &err), HIVED_OK, NULL);
    CHECK(version > 0);
    EXPECT(hived_changes_json(s, 0, &json, NULL, &err), HIVED_OK, NULL);
    CHECK(strstr(json, "\"groups\":[") != NULL && strstr(json, "\"g1\"") != NULL);
    hived_free(json);
    EXPECT(hived_changes_json(s, version, &json, NULL, &err), HIVED_OK, NULL);
    CHECK(strstr(json, "\"groups\":[]") != NULL);
    hived_free(json);
    json = NULL;
    EXPECT(hived_changes_json(s, version + 1, &json, NULL, &err), HIVED_INVALID_ARGUMENT, "ahead");
    CHECK(json == NULL);
    EXPECT(hived_state_version(s, NULL, &err), HIVED_INVALID_ARGUMENT, "version is NULL");
    EXPECT(hived_state_version(NULL, &version, &err), HIVED_INVALID_ARGUMENT, "scheduler");
  }
  EXPECT(hived_group_json(s, "g1", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"state\":\"allocated\"") != NULL &&
        strstr(json, "\"physicalNode\":\"rack") != NULL);
  hived_free(json);
  EXPECT(hived_nodes_json(s, &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json,
               "{\"name\":\"rack1-node0\",\"leafCellType\":\"V100\",\"totalLeafCells\":8,"
               "\"freeLeafCells\":") != NULL &&
        strstr(json, "\"healthy\":false") != NULL);
  hived_free(json);
  EXPECT(hived_vc_usages_json(s, &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"vc\":\"prod\"") != NULL &&
        strstr(json, "\"guaranteedUsedLeafCells\":16") != NULL);
  hived_free(json);
  EXPECT(hived_chain_summaries_json(s, &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"chain\":\"V100-RACK\"") != NULL && strstr(json, "\"total\":64") != NULL);
  hived_free(json);
  EXPECT(hived_vc_summaries_json(s, &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"vc\":\"research\"") != NULL);
  hived_free(json);
  EXPECT(hived_virtual_cluster_json(s, "dev", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"address\":\"dev/0\"") != NULL);
  hived_free(json);
  json = NULL;
  EXPECT(hived_virtual_cluster_json(s, "nope", &json, NULL, &err), HIVED_NOT_FOUND, "nope");
  EXPECT(hived_virtual_cluster_json(s, NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, "vc");
  EXPECT(hived_groups_json(NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, "scheduler");
  EXPECT(hived_groups_json(s, NULL, NULL, &err), HIVED_INVALID_ARGUMENT, "json is NULL");
  EXPECT(hived_group_json(s, NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, "group");
  EXPECT(hived_nodes_json(NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_vc_usages_json(NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_chain_summaries_json(NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_vc_summaries_json(NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  CHECK(json == NULL);

  /* Release. */
  EXPECT(hived_release(s, "g1", &err), HIVED_OK, NULL);
  EXPECT(hived_release(s, "g1", &err), HIVED_NOT_FOUND, "g1");
  EXPECT(hived_release(NULL, "g1", &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_release(s, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_check_invariants(s, &err), HIVED_OK, NULL);

  hived_request_destroy(req);
  hived_request_destroy(other);
  hived_request_destroy(empty);
  hived_request_destroy(unknown_vc);
  hived_request_destroy(too_big);
  hived_request_destroy(opp);
  hived_request_destroy(prod2);
  hived_request_destroy(dev);
  hived_result_destroy(result);
  hived_result_destroy(NULL);
  hived_scheduler_destroy(s);
}

/* Save, restore, records, recovery and HiveD's bind info. */
static void TestPersistence(void) {
  char* err = NULL;
  hived_config* config = NULL;
  EXPECT(hived_config_load_file(kConfigPath, &config, &err), HIVED_OK, NULL);
  hived_scheduler* s = NULL;
  EXPECT(hived_scheduler_create(config, &s, &err), HIVED_OK, NULL);
  hived_result* result = hived_result_create();
  hived_request* req = MakeRequest("job", "research", 5, 2, 4, 0);
  EXPECT(hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  EXPECT(hived_allocate(s, req, result, NULL, &err), HIVED_OK, NULL);

  char* state = NULL;
  size_t state_len = 0;
  EXPECT(hived_save_state(NULL, &state, &state_len, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_save_state(s, NULL, &state_len, &err), HIVED_INVALID_ARGUMENT, "state is NULL");
  EXPECT(hived_save_state(s, &state, &state_len, &err), HIVED_OK, NULL);
  CHECK(state != NULL && strlen(state) == state_len &&
        strstr(state, "\"schema\":\"hived.scheduler-state\"") != NULL);

  hived_scheduler* restored = NULL;
  char* report = NULL;
  EXPECT(hived_scheduler_restore(config, state, state_len, &restored, &report, &err), HIVED_OK,
         NULL);
  CHECK(report != NULL && strstr(report, "\"outcome\":\"kept\"") != NULL);
  char* again = NULL;
  size_t again_len = 0;
  EXPECT(hived_save_state(restored, &again, &again_len, &err), HIVED_OK, NULL);
  CHECK(again_len == state_len && memcmp(again, state, state_len) == 0);
  hived_free(again);
  hived_free(report);
  hived_scheduler_destroy(restored);
  restored = NULL;
  /* No report wanted. */
  EXPECT(hived_scheduler_restore(config, state, state_len, &restored, NULL, &err), HIVED_OK, NULL);
  hived_scheduler_destroy(restored);
  restored = NULL;
  const char* bad_json = "{\"schema\":";
  EXPECT(hived_scheduler_restore(config, bad_json, strlen(bad_json), &restored, NULL, &err),
         HIVED_INVALID_ARGUMENT, "malformed JSON");
  EXPECT(hived_scheduler_restore(config, NULL, 5, &restored, NULL, &err), HIVED_INVALID_ARGUMENT,
         "state is NULL");
  EXPECT(hived_scheduler_restore(NULL, state, state_len, &restored, NULL, &err),
         HIVED_INVALID_ARGUMENT, "config is NULL");
  EXPECT(hived_scheduler_restore(config, state, state_len, NULL, NULL, &err),
         HIVED_INVALID_ARGUMENT, "out is NULL");
  CHECK(restored == NULL);

  /* Per-group records. */
  char* record = NULL;
  size_t record_len = 0;
  EXPECT(hived_group_record(s, "job", &record, &record_len, &err), HIVED_OK, NULL);
  CHECK(record != NULL && strstr(record, "\"name\":\"job\"") != NULL);
  EXPECT(hived_group_record(s, "nope", &record, &record_len, &err), HIVED_NOT_FOUND, "nope");
  EXPECT(hived_group_record(NULL, "job", &record, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_group_record(s, NULL, &record, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_group_record(s, "job", NULL, NULL, &err), HIVED_INVALID_ARGUMENT, NULL);

  hived_scheduler* fresh = NULL;
  EXPECT(hived_scheduler_create(config, &fresh, &err), HIVED_OK, NULL);
  hived_allocate_info info = {0, NULL};
  EXPECT(hived_allocate_record(fresh, record, record_len, &info, &err), HIVED_OK, NULL);
  CHECK(info.downgraded == 0);
  EXPECT(hived_allocate_record(fresh, record, record_len, &info, &err), HIVED_ALREADY_EXISTS,
         "job");
  const char* bad_record = "{\"name\":1}";
  EXPECT(hived_allocate_record(fresh, bad_record, strlen(bad_record), &info, &err),
         HIVED_INVALID_ARGUMENT, "$.name");
  EXPECT(hived_allocate_record(NULL, record, record_len, &info, &err), HIVED_INVALID_ARGUMENT,
         NULL);
  EXPECT(hived_allocate_record(fresh, NULL, 3, &info, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_check_invariants(fresh, &err), HIVED_OK, NULL);
  hived_free(record);

  /* Recover a placement given as plain structs. */
  const int32_t leaves[] = {0, 1};
  const char* types[] = {"V100-NODE", "V100-NODE"};
  hived_pod_placement pod = {2, "rack0-node3", leaves, 2, types};
  hived_placement placement = {"V100-RACK", &pod, 1};
  hived_request* rec = MakeRequest("rec", "research", 0, 1, 2, 0);
  EXPECT(hived_recover(fresh, rec, &placement, &info, &err), HIVED_OK, NULL);
  hived_free(info.reason); /* research's virtual nodes are taken by "job": downgraded */
  EXPECT(hived_recover(fresh, rec, &placement, &info, &err), HIVED_ALREADY_EXISTS, NULL);
  hived_request* rec2 = MakeRequest("rec2", "research", 0, 1, 2, 0);
  pod.node = "rack9-node9";
  EXPECT(hived_recover(fresh, rec2, &placement, &info, &err), HIVED_INVALID_ARGUMENT,
         "rack9-node9");
  pod.node = "rack0-node3"; /* leaves another group holds */
  EXPECT(hived_recover(fresh, rec2, &placement, &info, &err), HIVED_FAILED_PRECONDITION, NULL);
  pod.leaf_cell_indices = NULL;
  EXPECT(hived_recover(fresh, rec2, &placement, &info, &err), HIVED_INVALID_ARGUMENT,
         "leaf_cell_indices is NULL");
  placement.pods = NULL;
  EXPECT(hived_recover(fresh, rec2, &placement, &info, &err), HIVED_INVALID_ARGUMENT,
         "placement->pods");
  EXPECT(hived_recover(fresh, rec2, NULL, &info, &err), HIVED_INVALID_ARGUMENT, "placement");
  EXPECT(hived_recover(fresh, NULL, &placement, &info, &err), HIVED_INVALID_ARGUMENT, "request");
  EXPECT(hived_recover(NULL, rec2, &placement, &info, &err), HIVED_INVALID_ARGUMENT, NULL);
  /* A recovered group whose VC cannot hold it runs downgraded, and says why. */
  const int32_t dev_leaves[] = {0, 1, 2, 3, 4, 5, 6, 7};
  hived_pod_placement dev_pod = {8, "rack1-node1", dev_leaves, 8, NULL};
  hived_placement dev_placement = {"V100-RACK", &dev_pod, 1};
  hived_request* dev = MakeRequest("dev-big", "dev", 0, 1, 8, 0);
  EXPECT(hived_recover(fresh, dev, &dev_placement, &info, &err), HIVED_OK, NULL);
  CHECK(info.downgraded == 1 && info.reason != NULL && strlen(info.reason) > 0);
  hived_free(info.reason);
  EXPECT(hived_check_invariants(fresh, &err), HIVED_OK, NULL);

  /* HiveD's bind info. */
  const char* bind_info =
      "node: rack0-node2\n"
      "leafCellIsolation: [0, 1]\n"
      "cellChain: V100-RACK\n"
      "affinityGroupBindInfo:\n"
      "- podPlacements:\n"
      "  - physicalNode: rack0-node2\n"
      "    physicalLeafCellIndices: [0, 1]\n"
      "    preassignedCellTypes: [V100-NODE, V100-NODE]\n";
  const char* spec =
      "virtualCluster: research\n"
      "priority: 3\n"
      "affinityGroup:\n"
      "  name: hived-job\n"
      "  members:\n"
      "  - podNumber: 1\n"
      "    leafCellNumber: 2\n";
  char* imported = NULL;
  size_t imported_len = 0;
  EXPECT(hived_import_hived_bind_info(bind_info, strlen(bind_info), spec, strlen(spec), &imported,
                                      &imported_len, &err),
         HIVED_OK, NULL);
  CHECK(imported != NULL && strstr(imported, "\"name\":\"hived-job\"") != NULL);
  EXPECT(hived_allocate_record(fresh, imported, imported_len, NULL, &err), HIVED_OK, NULL);
  hived_free(imported);
  imported = NULL;
  EXPECT(hived_import_hived_bind_info(bind_info, strlen(bind_info), NULL, 0, &imported, NULL, &err),
         HIVED_OK, NULL);
  hived_free(imported);
  imported = NULL;
  const char* bad_bind = "affinityGroupBindInfo:\n- podPlacements:\n  - physicalNode: [x\n";
  EXPECT(hived_import_hived_bind_info(bad_bind, strlen(bad_bind), NULL, 0, &imported, NULL, &err),
         HIVED_INVALID_ARGUMENT, "pod-bind-info");
  EXPECT(hived_import_hived_bind_info(NULL, 0, NULL, 0, &imported, NULL, &err),
         HIVED_INVALID_ARGUMENT, "bind_info_yaml is NULL");
  EXPECT(hived_import_hived_bind_info(bind_info, strlen(bind_info), NULL, 4, &imported, NULL, &err),
         HIVED_INVALID_ARGUMENT, "scheduling_spec_yaml is NULL");
  EXPECT(hived_import_hived_bind_info(bind_info, strlen(bind_info), NULL, 0, NULL, NULL, &err),
         HIVED_INVALID_ARGUMENT, "record_json is NULL");
  CHECK(imported == NULL);
  EXPECT(hived_check_invariants(fresh, &err), HIVED_OK, NULL);

  hived_request_destroy(rec);
  hived_request_destroy(rec2);
  hived_request_destroy(dev);
  hived_free(state);
  hived_request_destroy(req);
  hived_result_destroy(result);
  hived_scheduler_destroy(fresh);
  hived_scheduler_destroy(s);
  hived_config_destroy(config);
}

/* The header's example, as written there (cluster.yaml -> the bundled config, VC1 -> prod). */
static int HeaderExample(void) {
  hived_scheduler* s = NULL;
  char* err = NULL;
  if (hived_scheduler_create_from_file(kConfigPath, &s, &err) != HIVED_OK) {
    fprintf(stderr, "%s\n", err);
    hived_free(err);
    return 1;
  }
  hived_member member = {.pod_number = 1, .leaf_cell_number = 8};
  hived_request_desc desc = {.name = "g1", .vc = "prod", .members = &member, .member_count = 1};
  hived_request* req = NULL;
  hived_result* result = hived_result_create();
  int ran = 0;
  if (hived_request_create(&desc, &req, &err) == HIVED_OK &&
      hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, &err) == HIVED_OK &&
      hived_result_outcome(result) == HIVED_OUTCOME_PLACED) {
    if (hived_allocate(s, req, result, NULL, &err) == HIVED_OK) {
      printf("g1 runs on %s\n", hived_result_pod_node(result, 0));
      ran = 1;
    }
  }
  hived_free(err); /* NULL when nothing failed */
  hived_result_destroy(result);
  hived_request_destroy(req);
  hived_scheduler_destroy(s);
  return ran ? 0 : 1;
}

int main(void) {
  TestNamesAndVersion();
  TestConfigs();
  TestRequests();
  TestLifecycle();
  TestPersistence();
  CHECK(HeaderExample() == 0);
  return CheckSummary("capi_test");
}
