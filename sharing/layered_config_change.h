// sharing/layered_config_change.h: a changed cluster config applied to a running scheduler (issue
// 29 item 6; `Scheduler::ApplyConfig`, hived/scheduler.h "Live config change").
//
// The new state is built off to the side, exactly as a restart onto the new config would
// build it: the current state saved (`SaveState`) and restored into a fresh scheduler for
// the new spec (`LayeredScheduler::Restore`, the recovery rules of rule 8, with
// `SpecMismatch::kRestoreAnyway`). The reservations (kReserved, kPreempting groups), which
// a saved state does not carry, are reported dropped. The new state is checked
// (`CheckInvariants`) before it is returned; the current one is only read.
//
// Invariants of a successful `BuildConfigChange`:
//  (1) the result's `SaveState` equals that of `Restore(new_spec, current.SaveState())`;
//  (2) with `Stranded::kRefuse`, every running group of `current` is kept (RestoreOutcome
//      kKept) in the result;
//  (3) `report` lists every running group of `current` (the saved document's order), then
//      every reservation dropped, by name.
//
// Thread safety: reads `current` only; the caller holds the scheduler's lock.
#ifndef HIVED_SHARING_LAYERED_CONFIG_CHANGE_H_
#define HIVED_SHARING_LAYERED_CONFIG_CHANGE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "sharing/layered.h"

namespace hived {

// Errors (the current state untouched in every case): kInvalidArgument for an invalid
// `new_spec` (as `Scheduler::Create`); kFailedPrecondition naming every running group the
// change would strand (its leaves gone: kPartial or kDropped; its VC removed or shrunk
// below what it holds: kDowngraded) and why, unless `options.stranded` is kApply;
// kInternal when the new state fails its invariants (a bug).
absl::StatusOr<std::unique_ptr<LayeredScheduler>> BuildConfigChange(
    const LayeredScheduler& current, const ClusterSpec& new_spec, const ApplyConfigOptions& options,
    RestoreReport* report);

}  // namespace hived

#endif  // HIVED_SHARING_LAYERED_CONFIG_CHANGE_H_
