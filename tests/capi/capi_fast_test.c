/* The C interface's fast path (include/hived/hived_c.h "The fast path"), compiled as C11:
 * hived_schedule_and_allocate into a reused hived_fast_result, its accessors, handles
 * (release, stale after release and after hived_apply_config, hived_handle_of,
 * hived_group_name), node and chain ids; the same state as the classic calls; and misuse
 * (NULL arguments, stale and forged handles, a GPU-sharing request, a started journal)
 * giving the documented code, a message and the state exactly as before. Run from the
 * source root (CTest's working directory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"
#include "hived/hived_c.h"

static char* SaveState(const hived_scheduler* s) {
  char* state = NULL;
  char* err = NULL;
  EXPECT(hived_save_state(s, &state, NULL, &err), HIVED_OK, NULL);
  return state;
}

static int IsNil(hived_group_handle h) { return h.slot == HIVED_GROUP_HANDLE_NIL; }
static int Same(hived_group_handle a, hived_group_handle b) {
  return a.slot == b.slot && a.generation == b.generation && a.config_epoch == b.config_epoch;
}

static int IsEmpty(const hived_fast_result* r) {
  return hived_fast_result_outcome(r) == HIVED_OUTCOME_WAITING &&
         IsNil(hived_fast_result_handle(r)) && hived_fast_result_chain(r) == -1 &&
         hived_fast_result_pod_count(r) == 0;
}

/* A 2-pod gang placed in one call; its accessors agree with the classic views. */
static void TestPlaceAndRelease(void) {
  char* err = NULL;
  hived_scheduler* s = MakeScheduler();
  hived_request* gang = MakeRequest("gang", "prod", 0, 2, 8, 0);
  hived_fast_result* r = hived_fast_result_create();
  CHECK(r != NULL && IsEmpty(r));
  CHECK(hived_node_count(s) == 8);

  EXPECT(hived_schedule_and_allocate(s, gang, r, &err), HIVED_OK, NULL);
  CHECK(hived_fast_result_outcome(r) == HIVED_OUTCOME_PLACED);
  CHECK(hived_fast_result_reason_code(r) == HIVED_REASON_NONE);
  const hived_group_handle h = hived_fast_result_handle(r);
  CHECK(!IsNil(h));
  CHECK(strcmp(hived_chain_name(s, hived_fast_result_chain(r)), "V100-RACK") == 0);
  CHECK(hived_fast_result_pod_count(r) == 2);
  int32_t nodes[2] = {-1, -1};
  for (size_t pod = 0; pod < 2; ++pod) {
    nodes[pod] = hived_fast_result_pod_node(r, pod);
    CHECK(nodes[pod] >= 0 && nodes[pod] < hived_node_count(s));
    CHECK(strncmp(hived_node_name(s, nodes[pod]), "rack", 4) == 0);
    CHECK(hived_fast_result_pod_leaf_count(r, pod) == 8);
    size_t count = 0;
    const int32_t* leaves = hived_fast_result_pod_leaves(r, pod, &count);
    CHECK(leaves != NULL && count == 8);
    if (leaves != NULL && count == 8) {
      CHECK(hived_fast_result_pod_first_leaf(r, pod) == leaves[0]);
      int seen = 0; /* the node's 8 leaves, each once */
      for (size_t i = 0; i < count; ++i) seen |= 1 << leaves[i];
      CHECK(seen == 0xff);
    }
  }
  CHECK(nodes[0] != nodes[1]);

  /* The group as the classic views see it. */
  char* json = NULL;
  EXPECT(hived_group_json(s, "gang", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(json != NULL && strstr(json, "\"state\":\"allocated\"") != NULL &&
        strstr(json, hived_node_name(s, nodes[0])) != NULL &&
        strstr(json, hived_node_name(s, nodes[1])) != NULL);
  hived_free(json);
  hived_group_handle of;
  EXPECT(hived_handle_of(s, "gang", &of, &err), HIVED_OK, NULL);
  CHECK(Same(of, h));
  char* name = NULL;
  size_t name_len = 0;
  EXPECT(hived_group_name(s, h, &name, &name_len, &err), HIVED_OK, NULL);
  CHECK(name != NULL && strcmp(name, "gang") == 0 && name_len == 4);
  hived_free(name);
  name = NULL;

  /* A running group again: already exists, the result emptied. */
  EXPECT(hived_schedule_and_allocate(s, gang, r, &err), HIVED_ALREADY_EXISTS, "gang");
  CHECK(IsEmpty(r));

  /* Release, then the handle is stale: refused, nothing changed. */
  EXPECT(hived_release_handle(s, h, &err), HIVED_OK, NULL);
  char* before = SaveState(s);
  EXPECT(hived_release_handle(s, h, &err), HIVED_NOT_FOUND, NULL);
  EXPECT(hived_group_name(s, h, &name, NULL, &err), HIVED_NOT_FOUND, NULL);
  CHECK(name == NULL);
  EXPECT(hived_handle_of(s, "gang", &of, &err), HIVED_NOT_FOUND, "gang");
  CHECK(IsNil(of));
  hived_group_handle nil = {HIVED_GROUP_HANDLE_NIL, 0, 0};
  EXPECT(hived_release_handle(s, nil, &err), HIVED_NOT_FOUND, NULL);
  hived_group_handle forged = {12345, 7, h.config_epoch};
  EXPECT(hived_release_handle(s, forged, &err), HIVED_NOT_FOUND, NULL);
  char* after = SaveState(s);
  CHECK(before != NULL && after != NULL && strcmp(before, after) == 0);
  hived_free(before);
  hived_free(after);

  /* A later group may reuse the slot, never the handle. */
  hived_request* next = MakeRequest("next", "prod", 0, 1, 8, 0);
  EXPECT(hived_schedule_and_allocate(s, next, r, &err), HIVED_OK, NULL);
  const hived_group_handle h2 = hived_fast_result_handle(r);
  CHECK(hived_fast_result_pod_count(r) == 1 && !IsNil(h2) && !Same(h2, h));
  EXPECT(hived_release_handle(s, h, &err), HIVED_NOT_FOUND, NULL);
  EXPECT(hived_group_json(s, "next", &json, NULL, &err), HIVED_OK, NULL);
  CHECK(json != NULL && strstr(json, "\"state\":\"allocated\"") != NULL);
  hived_free(json);
  EXPECT(hived_release_handle(s, h2, &err), HIVED_OK, NULL);
  EXPECT(hived_check_invariants(s, &err), HIVED_OK, NULL);

  hived_request_destroy(next);
  hived_request_destroy(gang);
  hived_fast_result_destroy(r);
  hived_scheduler_destroy(s);
}

/* "Cannot place now" is HIVED_OK with the outcome and reason, no handle, no pods. */
static void TestNotPlaced(void) {
  char* err = NULL;
  hived_scheduler* s = MakeScheduler();
  hived_request* big = MakeRequest("big", "dev", 0, 1, 8, 0);
  hived_fast_result* r = hived_fast_result_create();
  EXPECT(hived_schedule_and_allocate(s, big, r, &err), HIVED_OK, NULL);
  CHECK(hived_fast_result_outcome(r) != HIVED_OUTCOME_PLACED);
  CHECK(hived_fast_result_reason_code(r) != HIVED_REASON_NONE);
  CHECK(hived_fast_result_reason(r)[0] != '\0');
  CHECK(IsNil(hived_fast_result_handle(r)) && hived_fast_result_pod_count(r) == 0);
  hived_request_destroy(big);
  hived_fast_result_destroy(r);
  hived_scheduler_destroy(s);
}

/* The fast call leaves the state the classic Schedule + Allocate leave. */
static void TestSameAsClassic(void) {
  char* err = NULL;
  hived_scheduler* fast = MakeScheduler();
  hived_scheduler* classic = MakeScheduler();
  hived_fast_result* r = hived_fast_result_create();
  hived_result* result = hived_result_create();
  const char* names[3] = {"a", "b", "c"};
  const char* vcs[3] = {"prod", "research", "dev"};
  const int32_t gpus[3] = {8, 4, 2};
  for (int i = 0; i < 3; ++i) {
    hived_request* req = MakeRequest(names[i], vcs[i], 0, 1, gpus[i], 0);
    EXPECT(hived_schedule_and_allocate(fast, req, r, &err), HIVED_OK, NULL);
    CHECK(hived_fast_result_outcome(r) == HIVED_OUTCOME_PLACED);
    EXPECT(hived_schedule(classic, req, HIVED_PHASE_PREEMPTING, result, &err), HIVED_OK, NULL);
    EXPECT(hived_allocate(classic, req, result, NULL, &err), HIVED_OK, NULL);
    CHECK(strcmp(hived_node_name(fast, hived_fast_result_pod_node(r, 0)),
                 hived_result_pod_node(result, 0)) == 0);
    CHECK(strcmp(hived_chain_name(fast, hived_fast_result_chain(r)), hived_result_chain(result)) ==
          0);
    size_t n_fast = 0;
    size_t n_classic = 0;
    const int32_t* l_fast = hived_fast_result_pod_leaves(r, 0, &n_fast);
    const int32_t* l_classic = hived_result_pod_leaf_cell_indices(result, 0, &n_classic);
    CHECK(n_fast == n_classic && l_fast != NULL && l_classic != NULL &&
          memcmp(l_fast, l_classic, n_fast * sizeof(int32_t)) == 0);
    hived_request_destroy(req);
  }
  hived_group_handle b;
  EXPECT(hived_handle_of(fast, "b", &b, &err), HIVED_OK, NULL);
  EXPECT(hived_release_handle(fast, b, &err), HIVED_OK, NULL);
  EXPECT(hived_release(classic, "b", &err), HIVED_OK, NULL);
  char* s1 = SaveState(fast);
  char* s2 = SaveState(classic);
  CHECK(s1 != NULL && s2 != NULL && strcmp(s1, s2) == 0);
  hived_free(s1);
  hived_free(s2);
  hived_result_destroy(result);
  hived_fast_result_destroy(r);
  hived_scheduler_destroy(classic);
  hived_scheduler_destroy(fast);
}

static int Discard(void* user_data, const char* frame, size_t frame_len) {
  (void)user_data;
  (void)frame;
  (void)frame_len;
  return 0;
}

/* Misuse: a clear code and message, the result emptied, the state as before. */
static void TestMisuse(void) {
  char* err = NULL;
  hived_scheduler* s = MakeScheduler();
  hived_request* req = MakeRequest("job", "prod", 0, 1, 8, 0);
  hived_fast_result* r = hived_fast_result_create();
  EXPECT(hived_schedule_and_allocate(s, req, r, &err), HIVED_OK, NULL);
  const hived_group_handle h = hived_fast_result_handle(r);
  char* before = SaveState(s);

  EXPECT(hived_schedule_and_allocate(NULL, req, r, &err), HIVED_INVALID_ARGUMENT,
         "hived_schedule_and_allocate: scheduler is NULL");
  CHECK(IsEmpty(r));
  EXPECT(hived_schedule_and_allocate(s, NULL, r, &err), HIVED_INVALID_ARGUMENT, "request is NULL");
  EXPECT(hived_schedule_and_allocate(s, req, NULL, &err), HIVED_INVALID_ARGUMENT, "result is NULL");
  EXPECT(hived_release_handle(NULL, h, &err), HIVED_INVALID_ARGUMENT,
         "hived_release_handle: scheduler is NULL");
  hived_group_handle of = h;
  EXPECT(hived_handle_of(NULL, "job", &of, &err), HIVED_INVALID_ARGUMENT, "scheduler is NULL");
  CHECK(IsNil(of));
  EXPECT(hived_handle_of(s, NULL, &of, &err), HIVED_INVALID_ARGUMENT, "group is NULL");
  EXPECT(hived_handle_of(s, "job", NULL, &err), HIVED_INVALID_ARGUMENT, "out is NULL");
  EXPECT(hived_group_name(s, h, NULL, NULL, &err), HIVED_INVALID_ARGUMENT, "name is NULL");
  EXPECT(hived_group_name(NULL, h, NULL, NULL, &err), HIVED_INVALID_ARGUMENT, "scheduler is NULL");
  /* NULL error pointers are accepted. */
  CHECK(hived_schedule_and_allocate(s, NULL, r, NULL) == HIVED_INVALID_ARGUMENT);

  /* A request that shares GPUs is refused (use hived_schedule), nothing changed. */
  hived_request* shared = MakeRequest("shared", "prod", 0, 1, 1, 500);
  EXPECT(hived_schedule_and_allocate(s, shared, r, &err), HIVED_FAILED_PRECONDITION, "shares GPUs");
  CHECK(IsEmpty(r));
  hived_request_destroy(shared);

  /* While a journal is started the fast calls are refused. */
  char* state = NULL;
  uint64_t sequence = 0;
  EXPECT(hived_journal_start(s, Discard, NULL, &state, NULL, &sequence, &err), HIVED_OK, NULL);
  hived_free(state);
  hived_request* other = MakeRequest("other", "prod", 0, 1, 8, 0);
  EXPECT(hived_schedule_and_allocate(s, other, r, &err), HIVED_FAILED_PRECONDITION,
         "ScheduleAndAllocate");
  EXPECT(hived_release_handle(s, h, &err), HIVED_FAILED_PRECONDITION, NULL);
  EXPECT(hived_journal_stop(s, &err), HIVED_OK, NULL);

  char* after = SaveState(s);
  CHECK(before != NULL && after != NULL && strcmp(before, after) == 0);
  hived_free(after);

  /* Accessors with NULL or out of range. */
  CHECK(IsEmpty(NULL));
  CHECK(hived_fast_result_reason_code(NULL) == HIVED_REASON_NONE);
  CHECK(strcmp(hived_fast_result_reason(NULL), "") == 0);
  size_t count = 99;
  CHECK(hived_fast_result_pod_leaves(NULL, 0, &count) == NULL && count == 0);
  CHECK(hived_fast_result_pod_leaves(r, 5, NULL) == NULL);
  CHECK(hived_fast_result_pod_node(r, 5) == -1);
  CHECK(hived_fast_result_pod_first_leaf(r, 5) == -1);
  CHECK(hived_fast_result_pod_leaf_count(r, 5) == 0);
  CHECK(hived_node_count(NULL) == 0);
  CHECK(strcmp(hived_node_name(NULL, 0), "") == 0);
  CHECK(strcmp(hived_node_name(s, -1), "") == 0);
  CHECK(strcmp(hived_node_name(s, hived_node_count(s)), "") == 0);
  CHECK(strcmp(hived_chain_name(s, 99), "") == 0);
  CHECK(strcmp(hived_chain_name(NULL, 0), "") == 0);
  hived_fast_result_destroy(NULL);

  /* hived_apply_config makes every handle stale; hived_handle_of gives a new one. */
  hived_config* config = NULL;
  EXPECT(hived_config_load_file(kConfigPath, &config, &err), HIVED_OK, NULL);
  EXPECT(hived_apply_config(s, config, 0, NULL, &err), HIVED_OK, NULL);
  EXPECT(hived_release_handle(s, h, &err), HIVED_NOT_FOUND, "HandleOf");
  EXPECT(hived_group_name(s, h, &state, NULL, &err), HIVED_NOT_FOUND, NULL);
  hived_group_handle fresh;
  EXPECT(hived_handle_of(s, "job", &fresh, &err), HIVED_OK, NULL);
  CHECK(fresh.config_epoch > h.config_epoch);
  EXPECT(hived_release_handle(s, fresh, &err), HIVED_OK, NULL);
  EXPECT(hived_check_invariants(s, &err), HIVED_OK, NULL);

  hived_config_destroy(config);
  hived_free(before);
  hived_request_destroy(other);
  hived_request_destroy(req);
  hived_fast_result_destroy(r);
  hived_scheduler_destroy(s);
}

int main(void) {
  TestPlaceAndRelease();
  TestNotPlaced();
  TestSameAsClassic();
  TestMisuse();
  return CheckSummary("capi_fast_test");
}
