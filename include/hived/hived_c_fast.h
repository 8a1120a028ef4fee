/* hived/hived_c_fast.h: the C interface's the fast path (numeric group handles, node and leaf ids,
 * one call that schedules and allocates into a reused result). Part of hived/hived_c.h, which is
 * the header to include: its notes on errors, ownership and thread safety apply here.
 * Self-contained and C99-compatible (tests/capi compiles it alone as C). */
#ifndef HIVED_HIVED_C_FAST_H_
#define HIVED_HIVED_C_FAST_H_

#include <stddef.h>
#include <stdint.h>

#include "hived/export.h"
#include "hived/hived_c_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#endif /* HIVED_HIVED_C_FAST_H_ */
