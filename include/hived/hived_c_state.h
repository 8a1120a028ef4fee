/* hived/hived_c_state.h: the C interface's persistence (saved state, group records, HiveD
 * bind-info) and the JSON views. Part of hived/hived_c.h, which is the header to include: its notes
 * on errors, ownership and thread safety apply here. Self-contained and C99-compatible (tests/capi
 * compiles it alone as C). */
#ifndef HIVED_HIVED_C_STATE_H_
#define HIVED_HIVED_C_STATE_H_

#include <stddef.h>
#include <stdint.h>

#include "hived/export.h"
#include "hived/hived_c_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* HIVED_HIVED_C_STATE_H_ */
