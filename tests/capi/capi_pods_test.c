/* The C interface's issue-29 calls (include/hived/hived_c.h), compiled as C11: pods, timed
 * reservations and their expiry, the journal through a C callback (start, status, sequence,
 * replay, recovery) and live config change; each with misuse (NULL arguments, unknown
 * pods, a stranding config change, a failing sink) giving the documented code and a
 * message. Run from the source root (CTest's working directory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"
#include "hived/hived_c.h"

static hived_pod_desc Pod(const char* name, int32_t gpus) {
  hived_pod_desc pod;
  memset(&pod, 0, sizeof pod);
  pod.name = name;
  pod.leaf_cell_number = gpus;
  pod.first_leaf_index = -1;
  return pod;
}

static void TestPods(void) {
  char* err = NULL;
  hived_scheduler* s = NULL;
  EXPECT(hived_scheduler_create_from_file(kConfigPath, &s, &err), HIVED_OK, NULL);
  hived_request* req = MakeRequest("gang", "prod", 0, 2, 8, 0);
  hived_result* result = hived_result_create();
  EXPECT(hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_PLACED);

  hived_pod_desc p0 = Pod("worker-0", 8);
  hived_pod_desc p1 = Pod("worker-1", 8);
  hived_pod_allocation a;
  EXPECT(hived_allocate_pod(NULL, req, result, &p0, &a, &err), HIVED_INVALID_ARGUMENT,
         "hived_allocate_pod: scheduler is NULL");
  EXPECT(hived_allocate_pod(s, req, result, NULL, &a, &err), HIVED_INVALID_ARGUMENT, "pod is NULL");
  CHECK(a.slot == -1 && a.info.reason == NULL);
  EXPECT(hived_allocate_pod(s, req, result, &p0, &a, &err), HIVED_OK, NULL);
  CHECK(a.slot == 0 && a.started_gang == 1 && a.info.downgraded == 0);
  EXPECT(hived_allocate_pod(s, req, result, &p0, &a, &err), HIVED_ALREADY_EXISTS, "worker-0");
  EXPECT(hived_allocate_pod(s, req, result, &p1, &a, &err), HIVED_OK, NULL);
  CHECK(a.slot == 1 && a.started_gang == 0);

  char* json = NULL;
  size_t len = 0;
  EXPECT(hived_pod_json(s, "gang", "worker-1", &json, &len, &err), HIVED_OK, NULL);
  CHECK(json != NULL && strstr(json, "\"name\":\"worker-1\"") != NULL &&
        strstr(json, "\"index\":1") != NULL && strlen(json) == len);
  hived_free(json);
  json = NULL;
  EXPECT(hived_pod_json(s, "gang", "worker-9", &json, NULL, &err), HIVED_NOT_FOUND, "worker-9");
  EXPECT(hived_pod_json(s, "gang", NULL, &json, NULL, &err), HIVED_INVALID_ARGUMENT, "pod is NULL");

  /* The gang's record rebuilds it from one pod after a restart. */
  char* record = NULL;
  size_t record_len = 0;
  EXPECT(hived_group_record(s, "gang", &record, &record_len, &err), HIVED_OK, NULL);

  int gang = -1;
  EXPECT(hived_release_pod(s, "gang", "worker-0", &gang, &err), HIVED_OK, NULL);
  CHECK(gang == 0);
  EXPECT(hived_release_pod(s, "gang", "worker-0", &gang, &err), HIVED_NOT_FOUND, "worker-0");
  EXPECT(hived_release_pod(s, "nobody", "worker-0", &gang, &err), HIVED_NOT_FOUND, "nobody");
  EXPECT(hived_release_pod(s, "gang", "worker-1", &gang, &err), HIVED_OK, NULL);
  CHECK(gang == 1);
  EXPECT(hived_group_json(s, "gang", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"state\":\"absent\"") != NULL);
  hived_free(json);
  json = NULL;

  EXPECT(hived_recover_pod(s, record, record_len, &p1, &a, &err), HIVED_OK, NULL);
  CHECK(a.started_gang == 1 && a.slot == 0); /* no node given: the first free slot */
  EXPECT(hived_recover_pod(s, "{", 1, &p0, &a, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_recover_pod(s, NULL, 0, &p0, &a, &err), HIVED_INVALID_ARGUMENT,
         "record_json is NULL");
  EXPECT(hived_check_invariants(s, &err), HIVED_OK, NULL);
  hived_free(record);
  hived_result_destroy(result);
  hived_request_destroy(req);
  hived_scheduler_destroy(s);
}

static void TestExpiry(void) {
  char* err = NULL;
  hived_scheduler* s = NULL;
  EXPECT(hived_scheduler_create_from_file(kConfigPath, &s, &err), HIVED_OK, NULL);
  hived_request* a = MakeRequest("a", "prod", 0, 1, 8, 0);
  hived_request* b = MakeRequest("b", "prod", 0, 1, 8, 0);
  hived_result* result = hived_result_create();
  EXPECT(hived_schedule_timed(s, a, HIVED_PHASE_PREEMPTING, 100, 1, 130, result, &err), HIVED_OK,
         NULL);
  CHECK(hived_result_outcome(result) == HIVED_OUTCOME_PLACED);
  EXPECT(hived_schedule_timed(s, b, HIVED_PHASE_PREEMPTING, 110, 0, 0, result, &err), HIVED_OK,
         NULL);
  EXPECT(hived_schedule_timed(s, b, 7, 110, 0, 0, result, &err), HIVED_INVALID_ARGUMENT,
         "is not a hived_phase");
  CHECK(hived_result_pod_count(result) == 0); /* emptied on an error */
  EXPECT(hived_schedule_timed(NULL, b, HIVED_PHASE_PREEMPTING, 0, 0, 0, result, &err),
         HIVED_INVALID_ARGUMENT, "scheduler is NULL");

  char* json = NULL;
  size_t len = 0;
  EXPECT(hived_expire_reservations(s, 129, &json, &len, &err), HIVED_OK, NULL);
  CHECK(json != NULL && strcmp(json, "[]") == 0 && len == 2);
  hived_free(json);
  json = NULL;
  EXPECT(hived_expire_reservations(s, 130, &json, NULL, &err), HIVED_OK, NULL);
  CHECK(json != NULL &&
        strcmp(json,
               "[{\"group\":\"a\",\"state\":\"reserved\",\"reservedAt\":100,\"deadline\":130}]") ==
            0);
  hived_free(json);
  json = NULL;
  EXPECT(hived_group_json(s, "a", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"state\":\"absent\"") != NULL);
  hived_free(json);
  json = NULL;
  EXPECT(hived_group_json(s, "b", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(strstr(json, "\"state\":\"reserved\"") != NULL); /* no deadline: kept */
  hived_free(json);
  EXPECT(hived_expire_reservations(s, 1000, NULL, NULL, &err), HIVED_OK, NULL);
  EXPECT(hived_expire_reservations(NULL, 0, NULL, NULL, &err), HIVED_INVALID_ARGUMENT,
         "scheduler is NULL");
  hived_result_destroy(result);
  hived_request_destroy(a);
  hived_request_destroy(b);
  hived_scheduler_destroy(s);
}

/* A sink that appends to a growing buffer, or fails when `fail` is set. */
typedef struct Buffer {
  char* data;
  size_t len;
  int fail;
} Buffer;

static int Append(void* user_data, const char* frame, size_t frame_len) {
  Buffer* b = (Buffer*)user_data;
  if (b->fail) return 5;
  char* grown = (char*)realloc(b->data, b->len + frame_len);
  if (grown == NULL) return 1;
  memcpy(grown + b->len, frame, frame_len);
  b->data = grown;
  b->len += frame_len;
  return 0;
}

static void Run(hived_scheduler* s, const char* name, const char* vc, int32_t gpus) {
  char* err = NULL;
  hived_request* req = MakeRequest(name, vc, 0, 1, gpus, 0);
  hived_result* result = hived_result_create();
  EXPECT(hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  EXPECT(hived_allocate(s, req, result, NULL, &err), HIVED_OK, NULL);
  hived_result_destroy(result);
  hived_request_destroy(req);
}

static void TestJournal(void) {
  char* err = NULL;
  hived_config* config = NULL;
  EXPECT(hived_config_load_file(kConfigPath, &config, &err), HIVED_OK, NULL);
  hived_scheduler* s = NULL;
  hived_scheduler* follower = NULL;
  EXPECT(hived_scheduler_create(config, &s, &err), HIVED_OK, NULL);
  EXPECT(hived_scheduler_create(config, &follower, &err), HIVED_OK, NULL);
  Run(s, "before", "prod", 8);

  Buffer buffer = {NULL, 0, 0};
  char* state = NULL;
  size_t state_len = 0;
  uint64_t sequence = 99;
  EXPECT(hived_journal_start(s, NULL, &buffer, &state, &state_len, &sequence, &err),
         HIVED_INVALID_ARGUMENT, "append is NULL");
  EXPECT(hived_journal_start(s, Append, &buffer, &state, &state_len, &sequence, &err), HIVED_OK,
         NULL);
  CHECK(sequence == 2 && state_len > 0);
  Run(s, "after-1", "research", 8);
  Run(s, "after-2", "dev", 4);
  EXPECT(hived_release(s, "before", &err), HIVED_OK, NULL);
  uint64_t now = 0;
  EXPECT(hived_journal_sequence(s, &now, &err), HIVED_OK, NULL);
  CHECK(now == 7);
  EXPECT(hived_journal_status(s, &err), HIVED_OK, NULL);
  CHECK(buffer.len > 0);

  /* Recovery from the checkpoint and the journal equals the scheduler that wrote it. */
  hived_scheduler* recovered = NULL;
  char* report = NULL;
  EXPECT(hived_recover_from_journal(config, state, state_len, sequence, buffer.data, buffer.len,
                                    &recovered, &report, &err),
         HIVED_OK, NULL);
  CHECK(report != NULL && strstr(report, "\"lastSequence\":7") != NULL &&
        strstr(report, "\"recordsApplied\":5") != NULL);
  char* want = NULL;
  char* got = NULL;
  EXPECT(hived_save_state(s, &want, NULL, &err), HIVED_OK, NULL);
  EXPECT(hived_save_state(recovered, &got, NULL, &err), HIVED_OK, NULL);
  CHECK(want != NULL && got != NULL && strcmp(want, got) == 0);
  hived_free(got);
  got = NULL;

  /* A follower at the checkpoint replays the frames; out of sequence is refused. */
  hived_scheduler_destroy(follower);
  follower = NULL;
  EXPECT(hived_scheduler_restore(config, state, state_len, &follower, NULL, &err), HIVED_OK, NULL);
  char* call_errors = NULL;
  EXPECT(hived_apply_journal(follower, buffer.data, buffer.len, &call_errors, &err),
         HIVED_FAILED_PRECONDITION, "sequence"); /* restored at sequence 0, not 2 */
  hived_free(call_errors);
  call_errors = NULL;
  EXPECT(hived_apply_journal(follower, "xyz", 3, &call_errors, &err), HIVED_INVALID_ARGUMENT, NULL);
  EXPECT(hived_apply_journal(recovered, buffer.data, buffer.len, &call_errors, &err),
         HIVED_FAILED_PRECONDITION, NULL);              /* already applied */
  CHECK(call_errors != NULL && call_errors[0] == '\0'); /* set even when a record is refused */
  hived_free(call_errors);
  call_errors = NULL;

  /* A failing sink stops the journal: the next mutation is refused until it is stopped. */
  buffer.fail = 1;
  hived_request* req = MakeRequest("late", "prod", 0, 1, 8, 0);
  hived_result* result = hived_result_create();
  EXPECT(hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
  EXPECT(hived_journal_status(s, &err), HIVED_FAILED_PRECONDITION, "C journal sink returned 5");
  EXPECT(hived_release(s, "after-1", &err), HIVED_FAILED_PRECONDITION, NULL);
  EXPECT(hived_journal_stop(s, &err), HIVED_OK, NULL);
  EXPECT(hived_release(s, "after-1", &err), HIVED_OK, NULL);
  EXPECT(hived_journal_stop(NULL, &err), HIVED_INVALID_ARGUMENT, "scheduler is NULL");
  EXPECT(hived_journal_sequence(s, NULL, &err), HIVED_INVALID_ARGUMENT, "sequence is NULL");

  hived_result_destroy(result);
  hived_request_destroy(req);
  hived_free(want);
  hived_free(report);
  hived_free(state);
  free(buffer.data);
  hived_scheduler_destroy(recovered);
  hived_scheduler_destroy(follower);
  hived_scheduler_destroy(s);
  hived_config_destroy(config);
}

/* The example config without its `dev` VC: a running `dev` group would be stranded. */
static hived_config* WithoutDev(void) {
  FILE* f = fopen(kConfigPath, "rb");
  if (f == NULL) return NULL;
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char* dev = strstr(text, "  dev:");
  char* test = strstr(text, "  test:");
  if (dev == NULL || test == NULL || test < dev) return NULL;
  memmove(dev, test, strlen(test) + 1);
  hived_config* config = NULL;
  char* err = NULL;
  EXPECT(hived_config_load_yaml(text, strlen(text), &config, &err), HIVED_OK, NULL);
  return config;
}

static void TestApplyConfig(void) {
  char* err = NULL;
  hived_scheduler* s = NULL;
  EXPECT(hived_scheduler_create_from_file(kConfigPath, &s, &err), HIVED_OK, NULL);
  Run(s, "small", "dev", 2);
  hived_config* next = WithoutDev();
  CHECK(next != NULL);
  char* before = NULL;
  char* after = NULL;
  EXPECT(hived_save_state(s, &before, NULL, &err), HIVED_OK, NULL);
  uint64_t v0 = 0;
  uint64_t v1 = 0;
  EXPECT(hived_state_version(s, &v0, &err), HIVED_OK, NULL);
  char* report = NULL;
  EXPECT(hived_apply_config(s, next, 0, &report, &err), HIVED_FAILED_PRECONDITION,
         "group small would be downgraded");
  CHECK(report == NULL);
  EXPECT(hived_save_state(s, &after, NULL, &err), HIVED_OK, NULL);
  CHECK(strcmp(before, after) == 0);
  EXPECT(hived_apply_config(s, NULL, 0, &report, &err), HIVED_INVALID_ARGUMENT, "config is NULL");
  EXPECT(hived_apply_config(s, next, 1, &report, &err), HIVED_OK, NULL);
  CHECK(report != NULL && strstr(report, "\"outcome\":\"downgraded\"") != NULL);
  EXPECT(hived_state_version(s, &v1, &err), HIVED_OK, NULL);
  CHECK(v1 == v0 + 1);
  char* json = NULL;
  EXPECT(hived_changes_json(s, v0, &json, NULL, &err), HIVED_OUT_OF_RANGE, "config changed");
  EXPECT(hived_virtual_cluster_json(s, "dev", &json, NULL, &err), HIVED_NOT_FOUND, NULL);
  EXPECT(hived_check_invariants(s, &err), HIVED_OK, NULL);
  hived_free(report);
  hived_free(before);
  hived_free(after);
  hived_config_destroy(next);
  hived_scheduler_destroy(s);
}

int main(void) {
  TestPods();
  TestExpiry();
  TestJournal();
  TestApplyConfig();
  return CheckSummary("capi_pods_test");
}
