/* hived/hived_c_core.h: the C interface's codes, phases, outcomes and reasons; the opaque handles;
 * configs, schedulers, requests, scheduling, allocation, recovery, release and health. Part of
 * hived/hived_c.h, which is the header to include: its notes on errors, ownership and thread safety
 * apply here. Self-contained and C99-compatible (tests/capi compiles it alone as C). */
#ifndef HIVED_HIVED_C_CORE_H_
#define HIVED_HIVED_C_CORE_H_

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

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* HIVED_HIVED_C_CORE_H_ */
