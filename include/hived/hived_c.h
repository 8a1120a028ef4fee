/* hived/hived_c.h: the C interface of the hived scheduler, for cluster managers written in
 * Go (cgo), Python (ctypes) or C. The same scheduler as `hived::Scheduler` (scheduler.h: its
 * placement rules, phases, reservations and recovery apply unchanged), behind opaque handles,
 * with no C++ type and no exception crossing the boundary. C99 or later; C++ callers may use
 * it too.
 *
 * Example (C11; compiled and run by tests/capi/capi_test.c):
 *   hived_scheduler* s = NULL;
 *   char* err = NULL;
 *   if (hived_scheduler_create_from_file("cluster.yaml", &s, &err) != HIVED_OK) {
 *     fprintf(stderr, "%s\n", err);
 *     hived_free(err);
 *     return 1;
 *   }
 *   hived_member member = {.pod_number = 1, .leaf_cell_number = 8};
 *   hived_request_desc desc = {.name = "g1", .vc = "prod", .members = &member,
 *                              .member_count = 1};
 *   hived_request* req = NULL;
 *   hived_result* result = hived_result_create();
 *   if (hived_request_create(&desc, &req, &err) == HIVED_OK &&
 *       hived_schedule(s, req, HIVED_PHASE_PREEMPTING, result, &err) == HIVED_OK &&
 *       hived_result_outcome(result) == HIVED_OUTCOME_PLACED) {
 *     if (hived_allocate(s, req, result, NULL, &err) == HIVED_OK)
 *       printf("g1 runs on %s\n", hived_result_pod_node(result, 0));
 *   }
 *   hived_free(err);  // NULL when nothing failed
 *   hived_result_destroy(result);
 *   hived_request_destroy(req);
 *   hived_scheduler_destroy(s);
 *
 * Errors. Every call that can fail returns a `hived_code` (absl::StatusCode's numbers:
 * HIVED_OK is 0) and takes `char** error` last. On failure, when `error` is not NULL,
 * `*error` receives the message (NUL-terminated, allocated; free it with `hived_free`),
 * and an earlier message there is freed first; on success `*error` is left alone. Codes as
 * in scheduler.h: HIVED_INVALID_ARGUMENT for a malformed request, document or argument (a
 * NULL handle or pointer included: the message names the function and the argument),
 * HIVED_NOT_FOUND for an unknown VC, group, node or config file, HIVED_ALREADY_EXISTS for a
 * group already live, HIVED_FAILED_PRECONDITION for a call that does not fit the group's
 * state, HIVED_RESOURCE_EXHAUSTED when memory ran out, HIVED_INTERNAL for a bug. "Cannot
 * place now" is not an error: `hived_schedule` returns HIVED_OK with the outcome in the
 * result. No call aborts or throws on bad input.
 *
 * Ownership.
 *  - Handles (`hived_config`, `hived_scheduler`, `hived_request`, `hived_result`) are created
 *    by the library and owned by the caller, who destroys each exactly once with its
 *    `_destroy` function (NULL is accepted and ignored). A scheduler copies what it needs
 *    from a config: destroy them in any order.
 *  - Strings the library returns through `char**` (JSON documents, messages) are the
 *    caller's: free them with `hived_free`. Their length is returned too where a `size_t*`
 *    is taken (NULL: not wanted).
 *  - `const char*` and `const int32_t*` returned by `hived_result_*` point into the result
 *    and stay valid until the next `hived_schedule` into it or `hived_result_destroy`.
 *  - Input strings and structs are read during the call only (a request copies its
 *    description): the caller may free them right after.
 *  - Names are NUL-terminated UTF-8; documents (YAML, JSON) are pointer and length and need
 *    no terminator.
 *
 * Thread safety: a `hived_scheduler` is safe to share between threads (scheduler.h, Thread
 * safety: views run concurrently, mutations one at a time). A `hived_request` is read-only
 * once created and may be shared; a `hived_result` is written by `hived_schedule` and must
 * not be used by two threads at once. `hived_config` is read-only once loaded.
 *
 * Views are JSON documents (UTF-8, compact), with the field names of docs/state-format.md
 * where the concept is persisted (groups: `name`, `virtualCluster`, `priority`, `state`,
 * `placement` as in a group record) and of status_view.h otherwise, in camelCase.
 *
 * The declarations are in topic headers, all included here (include this one):
 * hived_c_core.h (codes, handles, configs, schedulers, requests, scheduling, allocation,
 * release, health), hived_c_state.h (persistence and views), hived_c_pods.h (pods and
 * reservations with time), hived_c_journal.h (the journal and live config change) and
 * hived_c_fast.h (the fast path).
 */
#ifndef HIVED_HIVED_C_H_
#define HIVED_HIVED_C_H_

#include "hived/hived_c_core.h"    /* IWYU pragma: export */
#include "hived/hived_c_fast.h"    /* IWYU pragma: export */
#include "hived/hived_c_journal.h" /* IWYU pragma: export */
#include "hived/hived_c_pods.h"    /* IWYU pragma: export */
#include "hived/hived_c_state.h"   /* IWYU pragma: export */

#endif /* HIVED_HIVED_C_H_ */
