/* hived/hived_c_journal.h: the C interface's the journal through a C callback and live config
 * change. Part of hived/hived_c.h, which is the header to include: its notes on errors, ownership
 * and thread safety apply here. Self-contained and C99-compatible (tests/capi compiles it
 * alone as C). */
#ifndef HIVED_HIVED_C_JOURNAL_H_
#define HIVED_HIVED_C_JOURNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "hived/export.h"
#include "hived/hived_c_core.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}  // extern "C"
#endif

#endif /* HIVED_HIVED_C_JOURNAL_H_ */
