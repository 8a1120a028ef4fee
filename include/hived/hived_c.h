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
 */
#ifndef HIVED_HIVED_C_H_
#define HIVED_HIVED_C_H_

#include <stddef.h>
#include <stdint.h>

#include "hived/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* absl::StatusCode's values. */
typedef enum hived_code {
  HIVED_OK = 0,
  HIVED_CANCELLED = 1,
  HIVED_UNKNOWN = 2,
  HIVED_INVALID_ARGUMENT = 3,
  HIVED_DEADLINE_EXCEEDED = 4,
  HIVED_NOT_FOUND = 5,
  HIVED_ALREADY_EXISTS = 6,
  HIVED_PERMISSION_DENIED = 7,
  HIVED_RESOURCE_EXHAUSTED = 8,
  HIVED_FAILED_PRECONDITION = 9,
  HIVED_ABORTED = 10,
  HIVED_OUT_OF_RANGE = 11,
  HIVED_UNIMPLEMENTED = 12,
  HIVED_INTERNAL = 13,
  HIVED_UNAVAILABLE = 14,
  HIVED_DATA_LOSS = 15,
  HIVED_UNAUTHENTICATED = 16
} hived_code;

typedef enum hived_phase { HIVED_PHASE_FILTERING = 0, HIVED_PHASE_PREEMPTING = 1 } hived_phase;

typedef enum hived_outcome {
  HIVED_OUTCOME_PLACED = 0,
  HIVED_OUTCOME_PREEMPTING = 1,
  HIVED_OUTCOME_WAITING = 2,
  HIVED_OUTCOME_INFEASIBLE = 3
} hived_outcome;

/* hived::ReasonCode, in its order. */
typedef enum hived_reason_code {
  HIVED_REASON_NONE = 0,
  HIVED_REASON_INSUFFICIENT_CAPACITY = 1,
  HIVED_REASON_BAD_NODE = 2,
  HIVED_REASON_NON_SUGGESTED_NODE = 3,
  HIVED_REASON_BINDING_UNAVAILABLE = 4,
  HIVED_REASON_POD_TOO_LARGE = 5,
  HIVED_REASON_GROUP_TOO_LARGE = 6,
  HIVED_REASON_NO_CHAIN = 7,
  HIVED_REASON_RESERVATION_OVERLAP = 8,
  HIVED_REASON_RESERVATION_BLOCKED = 9,
  HIVED_REASON_LAZY_DOWNGRADE = 10
} hived_reason_code;

typedef struct hived_config hived_config;
typedef struct hived_scheduler hived_scheduler;
typedef struct hived_request hived_request;
typedef struct hived_result hived_result;

/* The library's version, "major.minor.patch" (static storage). */
HIVED_EXPORT const char* hived_version(void);
/* Frees a string the library returned (NULL is ignored). */
HIVED_EXPORT void hived_free(void* p);
/* "ok", "invalid-argument", "not-found", ... (static storage; "unknown" for other values). */
HIVED_EXPORT const char* hived_code_name(int code);
/* hived::OutcomeName ("placed", "preempting", "waiting", "infeasible") and
 * hived::ReasonCodeName ("none", "insufficient-capacity", ...); "unknown" for other values. */
HIVED_EXPORT const char* hived_outcome_name(int outcome);
HIVED_EXPORT const char* hived_reason_code_name(int code);

/* ---- Configs (config.h) ------------------------------------------------------------ */

/* Loads and validates a HiveD cluster config. Errors: HIVED_NOT_FOUND when the file cannot
 * be read; HIVED_INVALID_ARGUMENT with every located problem, one per line. */
HIVED_EXPORT hived_code hived_config_load_file(const char* path, hived_config** out, char** error);
HIVED_EXPORT hived_code hived_config_load_yaml(const char* yaml, size_t yaml_len,
                                               hived_config** out, char** error);
HIVED_EXPORT void hived_config_destroy(hived_config* config);

/* ---- Schedulers ---------------------------------------------------------------------- */

HIVED_EXPORT hived_code hived_scheduler_create(const hived_config* config, hived_scheduler** out,
                                               char** error);
/* Shorthands: load the config, then create. */
HIVED_EXPORT hived_code hived_scheduler_create_from_file(const char* config_path,
                                                         hived_scheduler** out, char** error);
HIVED_EXPORT hived_code hived_scheduler_create_from_yaml(const char* yaml, size_t yaml_len,
                                                         hived_scheduler** out, char** error);
HIVED_EXPORT void hived_scheduler_destroy(hived_scheduler* scheduler);

/* ---- Requests ------------------------------------------------------------------------ */

/* One kind of pod of a gang (hived::GroupMember). Zero-initialise and set what you need. */
typedef struct hived_member {
  int32_t pod_number;
  int32_t leaf_cell_number; /* 0: a CPU-only pod */
  int32_t gpu_milli;        /* 0: whole leaf cells; 1..1000: a share of one GPU */
  int64_t gpu_memory_mib;
  int64_t cpu_milli;
  int64_t memory_mib;
  const char* mig_profile; /* NULL or "": none */
} hived_member;

/* A request (hived::GroupRequest). NULL strings mean "". `suggested_nodes` is used only when
 * `has_suggested_nodes` is not 0 (then an empty list suggests no node). */
typedef struct hived_request_desc {
  const char* name;
  const char* vc;
  int32_t priority; /* -1 opportunistic, 0..1000 guaranteed */
  const char* leaf_cell_type;
  const char* pinned_cell_id;
  int lazy_preemption;
  const hived_member* members;
  size_t member_count;
  const char* const* leaf_cell_types; /* fractional groups: allowed GPU models, in order */
  size_t leaf_cell_type_count;
  int has_suggested_nodes;
  const char* const* suggested_nodes;
  size_t suggested_node_count;
} hived_request_desc;

/* Copies `desc` into a request that `hived_schedule`, `hived_allocate` and `hived_recover`
 * take, as often as needed. The request is checked by those calls, not here. Errors:
 * HIVED_INVALID_ARGUMENT for a NULL `desc` or `out`, or a count with a NULL array. */
HIVED_EXPORT hived_code hived_request_create(const hived_request_desc* desc, hived_request** out,
                                             char** error);
HIVED_EXPORT void hived_request_destroy(hived_request* request);

/* ---- Scheduling ---------------------------------------------------------------------- */

/* An empty result to schedule into; reuse it for many calls. NULL only when out of memory. */
HIVED_EXPORT hived_result* hived_result_create(void);
HIVED_EXPORT void hived_result_destroy(hived_result* result);

/* Scheduler::Schedule in `phase` (a `hived_phase`; an int, so that any value a caller passes
 * is defined: another one is HIVED_INVALID_ARGUMENT). On HIVED_OK, `result` holds the
 * outcome, placement, victims and reason; on an error it is emptied (outcome waiting, no
 * pods). */
HIVED_EXPORT hived_code hived_schedule(hived_scheduler* scheduler, const hived_request* request,
                                       int phase, hived_result* result, char** error);

/* The result's parts. With a NULL result: outcome waiting, counts 0, strings "". An index out
 * of range gives "" / 0 / NULL. */
HIVED_EXPORT hived_outcome hived_result_outcome(const hived_result* result);
HIVED_EXPORT hived_reason_code hived_result_reason_code(const hived_result* result);
HIVED_EXPORT const char* hived_result_reason(const hived_result* result);
HIVED_EXPORT const char* hived_result_chain(const hived_result* result);
HIVED_EXPORT size_t hived_result_victim_count(const hived_result* result);
HIVED_EXPORT const char* hived_result_victim(const hived_result* result, size_t i);
HIVED_EXPORT size_t hived_result_pod_count(const hived_result* result);
HIVED_EXPORT const char* hived_result_pod_node(const hived_result* result, size_t pod);
HIVED_EXPORT int32_t hived_result_pod_leaf_cell_number(const hived_result* result, size_t pod);
/* The pod's device indices: `*count` of them (count may be NULL). */
HIVED_EXPORT const int32_t* hived_result_pod_leaf_cell_indices(const hived_result* result,
                                                               size_t pod, size_t* count);
/* The whole result as JSON: {"outcome":"placed","code":"none","reason":"",
 * "victims":[...],"placement":{"cellChain":...,"pods":[...]}} (placement as in a record). */
HIVED_EXPORT hived_code hived_result_json(const hived_result* result, char** json, size_t* json_len,
                                          char** error);

/* What an allocation or recovery did (hived::AllocateInfo). `reason` is the caller's to free
 * with `hived_free` (NULL when not downgraded); every call taking an info sets both fields
 * first, so free `reason` before passing the same info again. */
typedef struct hived_allocate_info {
  int downgraded;
  char* reason;
} hived_allocate_info;

/* Scheduler::Allocate of `result`'s placement (the one `hived_schedule` decided for
 * `request`). `info` may be NULL. */
HIVED_EXPORT hived_code hived_allocate(hived_scheduler* scheduler, const hived_request* request,
                                       const hived_result* result, hived_allocate_info* info,
                                       char** error);

/* A placement from elsewhere, for `hived_recover`: one entry per pod. */
typedef struct hived_pod_placement {
  int32_t leaf_cell_number;
  const char* node;
  const int32_t* leaf_cell_indices;
  size_t leaf_cell_count;
  /* NULL, or `leaf_cell_count` types ("" for an opportunistic leaf). */
  const char* const* preassigned_cell_types;
} hived_pod_placement;
typedef struct hived_placement {
  const char* chain;
  const hived_pod_placement* pods;
  size_t pod_count;
} hived_placement;

/* Scheduler::Recover. */
HIVED_EXPORT hived_code hived_recover(hived_scheduler* scheduler, const hived_request* request,
                                      const hived_placement* placement, hived_allocate_info* info,
                                      char** error);

HIVED_EXPORT hived_code hived_release(hived_scheduler* scheduler, const char* group, char** error);
HIVED_EXPORT hived_code hived_unreserve(hived_scheduler* scheduler, const char* group,
                                        char** error);
HIVED_EXPORT hived_code hived_cancel_preemption(hived_scheduler* scheduler, const char* group,
                                                char** error);
HIVED_EXPORT hived_code hived_set_node_healthy(hived_scheduler* scheduler, const char* node,
                                               int healthy, char** error);
/* HIVED_INTERNAL naming the first broken invariant. */
HIVED_EXPORT hived_code hived_check_invariants(const hived_scheduler* scheduler, char** error);

/* ---- Persistence (docs/state-format.md) ----------------------------------------------- */

/* Scheduler::SaveState: the versioned JSON document. */
HIVED_EXPORT hived_code hived_save_state(const hived_scheduler* scheduler, char** state,
                                         size_t* state_len, char** error);
/* Scheduler::Restore into a new scheduler for `config`. `report_json` (may be NULL)
 * receives the RestoreReport: {"groups":[{"name","path","outcome","reason"}...],
 * "unknownNodes":[...],"notes":[...]}. */
HIVED_EXPORT hived_code hived_scheduler_restore(const hived_config* config, const char* state,
                                                size_t state_len, hived_scheduler** out,
                                                char** report_json, char** error);
/* Scheduler::GetGroupRecord as GroupRecordToJson's one-line object. */
HIVED_EXPORT hived_code hived_group_record(const hived_scheduler* scheduler, const char* group,
                                           char** record_json, size_t* record_len, char** error);
/* GroupRecordFromJson, then Scheduler::AllocateRecord. */
HIVED_EXPORT hived_code hived_allocate_record(hived_scheduler* scheduler, const char* record_json,
                                              size_t record_len, hived_allocate_info* info,
                                              char** error);
/* ImportHivedBindInfo: HiveD's pod-bind-info (and optional pod-scheduling-spec, NULL/0 for
 * none) annotations as a group record (JSON, for `hived_allocate_record`). */
HIVED_EXPORT hived_code hived_import_hived_bind_info(const char* bind_info_yaml,
                                                     size_t bind_info_len,
                                                     const char* scheduling_spec_yaml,
                                                     size_t scheduling_spec_len, char** record_json,
                                                     size_t* record_len, char** error);

/* ---- Views (JSON) --------------------------------------------------------------------- */

/* One group (GetGroup: state "absent" when not live):
 * {"name","virtualCluster","state","priority","request":{...},"placement":{...},
 *  "preemptor","downgradeReason"}; `hived_groups_json` is the array of all, by name. */
HIVED_EXPORT hived_code hived_group_json(const hived_scheduler* scheduler, const char* group,
                                         char** json, size_t* json_len, char** error);
HIVED_EXPORT hived_code hived_groups_json(const hived_scheduler* scheduler, char** json,
                                          size_t* json_len, char** error);
/* One page of `hived_groups_json` (`Scheduler::Groups(after, limit)`): the first `limit`
 * groups whose name is greater than `after` (NULL or "": the first page); a page shorter
 * than `limit` is the last. It holds the scheduler's lock for one page, not for all. */
HIVED_EXPORT hived_code hived_groups_page_json(const hived_scheduler* scheduler, const char* after,
                                               int32_t limit, char** json, size_t* json_len,
                                               char** error);
/* The state version (`Scheduler::version`): 0 when created or restored, increased by every
 * call that changes what a view shows. */
HIVED_EXPORT hived_code hived_state_version(const hived_scheduler* scheduler, uint64_t* version,
                                            char** error);
/* What changed after version `since` (`Scheduler::Changes`):
 * {"version":N,"groups":[names...],"nodes":[names...]}, sorted; re-read each group with
 * `hived_group_json` (state "absent": gone) and the nodes with `hived_nodes_json`.
 * HIVED_OUT_OF_RANGE when `since` is older than the changes kept (re-read the full views),
 * HIVED_INVALID_ARGUMENT for a version the scheduler has not reached. */
HIVED_EXPORT hived_code hived_changes_json(const hived_scheduler* scheduler, uint64_t since,
                                           char** json, size_t* json_len, char** error);
/* [{"name","leafCellType","totalLeafCells","freeLeafCells","healthy"}...], config order. */
HIVED_EXPORT hived_code hived_nodes_json(const hived_scheduler* scheduler, char** json,
                                         size_t* json_len, char** error);
/* [{"vc","leafCellType","reservedLeafCells","guaranteedUsedLeafCells",
 *   "opportunisticUsedLeafCells"}...] */
HIVED_EXPORT hived_code hived_vc_usages_json(const hived_scheduler* scheduler, char** json,
                                             size_t* json_len, char** error);
/* [{"chain","leafCellType","nodes","badNodes","leaves":{"total","free","used","reserved",
 *   "opportunistic","bad"}}...] */
HIVED_EXPORT hived_code hived_chain_summaries_json(const hived_scheduler* scheduler, char** json,
                                                   size_t* json_len, char** error);
/* [{"vc","chain","leafCellType","leaves":{...},"opportunisticUsedLeafCells"}...] */
HIVED_EXPORT hived_code hived_vc_summaries_json(const hived_scheduler* scheduler, char** json,
                                                size_t* json_len, char** error);
/* The VC's virtual cells as a tree: [{"cellType","address","level","state","health",
 * "priority","physicalCell","pinnedCellId","children":[...]}...]. HIVED_NOT_FOUND for an
 * unknown VC. */
HIVED_EXPORT hived_code hived_virtual_cluster_json(const hived_scheduler* scheduler, const char* vc,
                                                   char** json, size_t* json_len, char** error);

/* ---- Pods (scheduler.h "Pods") --------------------------------------------------------- */

/* A pod of a gang (hived::Pod). NULL strings mean "". `node` NULL or "" (and
 * `first_leaf_index` -1): the first free slot of `leaf_cell_number`; otherwise the slot that
 * starts at that node and leaf index (the pod's bind info after a restart). */
typedef struct hived_pod_desc {
  const char* name; /* required, unique within its group */
  const char* uid;
  int32_t leaf_cell_number;
  const char* node;
  int32_t first_leaf_index;
} hived_pod_desc;

/* What `hived_allocate_pod` / `hived_recover_pod` did (hived::PodAllocation): the pod's slot
 * (its pod in the placement), whether the call started the gang, and then the gang's
 * allocate info (`info.reason` is the caller's to free, as for `hived_allocate`). */
typedef struct hived_pod_allocation {
  int32_t slot;
  int started_gang;
  hived_allocate_info info;
} hived_pod_allocation;

/* Scheduler::AllocatePod of `result`'s placement (the one `hived_schedule` decided for
 * `request`); the first pod of a gang runs the whole gang. `out` may be NULL. */
HIVED_EXPORT hived_code hived_allocate_pod(hived_scheduler* scheduler, const hived_request* request,
                                           const hived_result* result, const hived_pod_desc* pod,
                                           hived_pod_allocation* out, char** error);
/* Scheduler::ReleasePod; `*gang_released` (may be NULL) is 1 when it was the gang's last
 * pod (the gang is released), else 0. */
HIVED_EXPORT hived_code hived_release_pod(hived_scheduler* scheduler, const char* group,
                                          const char* pod, int* gang_released, char** error);
/* Scheduler::GetPod: {"group","name","uid","index","placement":{"leafCellNumber",
 * "physicalNode","physicalLeafCellIndices","preassignedCellTypes"}}. HIVED_NOT_FOUND for an
 * unknown group or pod. */
HIVED_EXPORT hived_code hived_pod_json(const hived_scheduler* scheduler, const char* group,
                                       const char* pod, char** json, size_t* json_len,
                                       char** error);
/* GroupRecordFromJson, then Scheduler::RecoverPod: rebuilds a gang from one pod's record
 * (e.g. `hived_import_hived_bind_info` of the pod's annotations) and attaches the pod. */
HIVED_EXPORT hived_code hived_recover_pod(hived_scheduler* scheduler, const char* record_json,
                                          size_t record_len, const hived_pod_desc* pod,
                                          hived_pod_allocation* out, char** error);

/* ---- Reservations with time (scheduler.h "Reservations with time") --------------------- */

/* Scheduler::Schedule with the caller's time `now` and, when `has_deadline` is not 0, the
 * reservation's `deadline` (same unit). Otherwise as `hived_schedule`. */
HIVED_EXPORT hived_code hived_schedule_timed(hived_scheduler* scheduler,
                                             const hived_request* request, int phase, int64_t now,
                                             int has_deadline, int64_t deadline,
                                             hived_result* result, char** error);
/* Scheduler::ExpireReservations(now): gives up every reservation whose deadline is at or
 * before `now`. `json` (may be NULL: not wanted) receives what expired, in order of deadline
 * then name: [{"group","state","reservedAt","deadline"}...]. */
HIVED_EXPORT hived_code hived_expire_reservations(hived_scheduler* scheduler, int64_t now,
                                                  char** json, size_t* json_len, char** error);

/* ---- The journal (hived/journal.h) ------------------------------------------------------ */

/* A journal sink: called once per record with one whole frame, under the scheduler's lock
 * (from the thread making the change; do not call the scheduler from it). Return 0 when
 * the frame is stored; anything else stops the journal (hived_journal_status then fails,
 * and so does every later mutation until the journal is started again or stopped). */
typedef int (*hived_journal_append_fn)(void* user_data, const char* frame, size_t frame_len);

/* Scheduler::StartJournal with `append` as the sink (`user_data` passed back; it must stay
 * valid until `hived_journal_stop`, another start or `hived_scheduler_destroy`). The
 * checkpoint: `*state` (SaveState; free with `hived_free`) at `*sequence`. */
HIVED_EXPORT hived_code hived_journal_start(hived_scheduler* scheduler,
                                            hived_journal_append_fn append, void* user_data,
                                            char** state, size_t* state_len, uint64_t* sequence,
                                            char** error);
HIVED_EXPORT hived_code hived_journal_stop(hived_scheduler* scheduler, char** error);
/* HIVED_OK, or HIVED_FAILED_PRECONDITION naming the sink's error (the journal stopped). */
HIVED_EXPORT hived_code hived_journal_status(const hived_scheduler* scheduler, char** error);
/* The sequence number of the last change (Scheduler::JournalSequence). */
HIVED_EXPORT hived_code hived_journal_sequence(const hived_scheduler* scheduler, uint64_t* sequence,
                                               char** error);
/* Replays journal bytes (whole frames, as a sink received them; e.g. a follower's feed):
 * each record with Scheduler::ApplyJournalRecord, in order, stopping at the first refused
 * one (out of sequence, another cluster: HIVED_FAILED_PRECONDITION, that record's state
 * exactly as before). A replayed call's own error does not stop it: `*call_errors` (may be
 * NULL) receives them, one per line ("" when none), whenever the bytes were read (also
 * when a record was refused: free it with `hived_free`). Errors: HIVED_INVALID_ARGUMENT for bytes
 * that are not whole frames (nothing applied). */
HIVED_EXPORT hived_code hived_apply_journal(hived_scheduler* scheduler, const char* journal,
                                            size_t journal_len, char** call_errors, char** error);
/* Scheduler::RecoverFromJournal: a new scheduler for `config` from the checkpoint (`state`
 * at `sequence`, as `hived_journal_start` gave them) and the journal bytes after it.
 * `report_json` (may be NULL): {"lastSequence","recordsApplied","tornTailBytes",
 * "failed":[...],"restore":{...as hived_scheduler_restore...}}. */
HIVED_EXPORT hived_code hived_recover_from_journal(const hived_config* config, const char* state,
                                                   size_t state_len, uint64_t sequence,
                                                   const char* journal, size_t journal_len,
                                                   hived_scheduler** out, char** report_json,
                                                   char** error);

/* ---- Live config change (scheduler.h "Live config change") ------------------------------ */

/* Scheduler::ApplyConfig(config): the scheduler moves onto `config` (nodes added or
 * removed, VCs resized), atomically. A change that strands a running group is refused
 * (HIVED_FAILED_PRECONDITION naming the groups, nothing changed) unless `apply_stranded` is
 * not 0. `report_json` (may be NULL) as `hived_scheduler_restore`'s; a reservation given up
 * is a group with "path":"" and "outcome":"dropped". */
HIVED_EXPORT hived_code hived_apply_config(hived_scheduler* scheduler, const hived_config* config,
                                           int apply_stranded, char** report_json, char** error);

/* ---- The fast path (hived/fast_path.h: its contract applies) ------------------------- */

/* A running group's numeric name (hived::GroupHandle): issued when the group runs, stale
 * once it ends (a later group in the same slot has a new generation) and after
 * `hived_apply_config` (an older `config_epoch`). Nil: `slot` is HIVED_GROUP_HANDLE_NIL. */
#define HIVED_GROUP_HANDLE_NIL 0xffffffffu
typedef struct hived_group_handle {
  uint32_t slot;
  uint32_t generation;
  uint32_t config_epoch;
} hived_group_handle;

/* What `hived_schedule_and_allocate` writes (hived::FastResult): create one, reuse it for
 * every call (it keeps its capacity), destroy it once. NULL only when out of memory. */
typedef struct hived_fast_result hived_fast_result;
HIVED_EXPORT hived_fast_result* hived_fast_result_create(void);
HIVED_EXPORT void hived_fast_result_destroy(hived_fast_result* result);

/* Scheduler::ScheduleAndAllocate: Schedule(request, preempting) and, when placed, Allocate,
 * in one call. HIVED_OK with outcome placed: the group runs (its handle, chain id and pods
 * in `result`); HIVED_OK with another outcome: what `hived_schedule` would have answered
 * (reason code and reason here; use `hived_schedule` for victims). Errors: as
 * `hived_schedule` and `hived_allocate`, plus HIVED_FAILED_PRECONDITION for a request that
 * shares GPUs (fractional, MIG, CPU-only) or while a journal is started (nothing changed);
 * `result` is then emptied (outcome waiting, nil handle, no pods). A steady-state placed
 * call allocates no memory (fast_path.h, contract 6), in the binding either. */
HIVED_EXPORT hived_code hived_schedule_and_allocate(hived_scheduler* scheduler,
                                                    const hived_request* request,
                                                    hived_fast_result* result, char** error);
/* Scheduler::Release(handle). HIVED_NOT_FOUND for a stale, nil or forged handle,
 * HIVED_FAILED_PRECONDITION for a group holding a reservation; nothing changed then. */
HIVED_EXPORT hived_code hived_release_handle(hived_scheduler* scheduler, hived_group_handle handle,
                                             char** error);
/* Scheduler::HandleOf: the handle of running whole-GPU group `group` (HIVED_NOT_FOUND when
 * none runs: unknown, reserved, preempting or sharing GPUs). `*out` is nil on an error. */
HIVED_EXPORT hived_code hived_handle_of(const hived_scheduler* scheduler, const char* group,
                                        hived_group_handle* out, char** error);
/* Scheduler::GroupName: the live group `handle` names (free `*name` with `hived_free`);
 * HIVED_NOT_FOUND for a handle that names no live group. */
HIVED_EXPORT hived_code hived_group_name(const hived_scheduler* scheduler,
                                         hived_group_handle handle, char** name, size_t* name_len,
                                         char** error);
/* Node ids are [0, hived_node_count) in config order, chain ids the config order of the
 * top-level cell types. The names (NUL-terminated) stay valid until `hived_apply_config` or
 * `hived_scheduler_destroy`; "" for an id out of range or a NULL scheduler (count 0). */
HIVED_EXPORT int32_t hived_node_count(const hived_scheduler* scheduler);
HIVED_EXPORT const char* hived_node_name(const hived_scheduler* scheduler, int32_t node);
HIVED_EXPORT const char* hived_chain_name(const hived_scheduler* scheduler, int32_t chain);

/* The fast result's parts, valid until the next call into it. With a NULL result: outcome
 * waiting, nil handle, chain -1, counts 0. Pods in the placement's order; per pod its node
 * id, its leaves (leaf indices within the node, as hived_result_pod_leaf_cell_indices), their
 * count and the first of them; a pod index out of range gives node -1, first leaf -1, leaf
 * count 0, leaves NULL. Reason code and reason: for an outcome other than placed. */
HIVED_EXPORT hived_outcome hived_fast_result_outcome(const hived_fast_result* result);
HIVED_EXPORT hived_reason_code hived_fast_result_reason_code(const hived_fast_result* result);
HIVED_EXPORT const char* hived_fast_result_reason(const hived_fast_result* result);
HIVED_EXPORT hived_group_handle hived_fast_result_handle(const hived_fast_result* result);
HIVED_EXPORT int32_t hived_fast_result_chain(const hived_fast_result* result);
HIVED_EXPORT size_t hived_fast_result_pod_count(const hived_fast_result* result);
HIVED_EXPORT int32_t hived_fast_result_pod_node(const hived_fast_result* result, size_t pod);
HIVED_EXPORT int32_t hived_fast_result_pod_first_leaf(const hived_fast_result* result, size_t pod);
HIVED_EXPORT int32_t hived_fast_result_pod_leaf_count(const hived_fast_result* result, size_t pod);
/* The pod's leaves: `*count` of them (count may be NULL). */
HIVED_EXPORT const int32_t* hived_fast_result_pod_leaves(const hived_fast_result* result,
                                                         size_t pod, size_t* count);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* HIVED_HIVED_C_H_ */
