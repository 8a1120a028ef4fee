/* hived/hived_c_pods.h: the C interface's pods within gangs and reservations with time.
 * Part of hived/hived_c.h, which is the header to include: its notes on errors, ownership
 * and thread safety apply here. Self-contained and C99-compatible (tests/capi compiles it
 * alone as C). */
#ifndef HIVED_HIVED_C_PODS_H_
#define HIVED_HIVED_C_PODS_H_

#include <stddef.h>
#include <stdint.h>

#include "hived/export.h"
#include "hived/hived_c_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* HIVED_HIVED_C_PODS_H_ */
