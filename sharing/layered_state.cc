// The layer's persistence (sharing/layered.h, docs/state-format.md): the core's records and
// Sharing's composed into one saved state, and a scheduler restored from one.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sharing/layered.h"
#include "sharing/sharing.h"
#include "src/internal/status_macros.h"
#include "src/internal/strings.h"
#include "src/persistence_json.h"
#include "src/persistence_json_reader.h"
#include "src/scheduler_impl.h"

namespace hived {

std::string LayeredScheduler::SaveState() const {
  internal::SavedState state;
  whole_->SaveStateTo(&state);
  // A whole host group's CPU and memory (the core's record lacks them); then the
  // fractional, MIG and CPU-only groups (holders are whole groups above), the next holder's
  // number, and every MIG GPU's layout.
  for (GroupRecord& rec : state.groups) sharing_->CompleteHostRecord(&rec);
  sharing_->AppendRecords(&state.groups);
  sharing_->AppendMigLayouts(&state.mig_layouts);
  state.next_holder = static_cast<int64_t>(sharing_->next_holder());
  state.share_shapes = sharing_->LearnedShapes();
  std::sort(
      state.groups.begin(), state.groups.end(),
      [](const GroupRecord& a, const GroupRecord& b) { return a.request.name < b.request.name; });
  return internal::SavedStateToJson(state);
}

absl::StatusOr<GroupRecord> LayeredScheduler::GetGroupRecord(std::string_view name) const {
  if (GroupRecord rec; sharing_->CpuOnlyRecord(name, &rec)) return rec;
  if (sharing_->HasGroup(name)) return sharing_->GetRecord(name);
  if (sharing_->IsHolder(name)) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", ToAbsl(name), " holds GPUs for sharing: it has no record of its ",
                     "own (SaveState saves it with the groups on its GPUs)"));
  }
  HIVED_ASSIGN_OR_RETURN(GroupRecord rec, whole_->GetGroupRecord(name));
  sharing_->CompleteHostRecord(&rec);
  return rec;
}

absl::StatusOr<AllocateInfo> LayeredScheduler::RestoreGroup(const GroupRecord& rec,
                                                            int32_t* ignored_leaves) {
  if (!rec.pods.empty() && sharing_->Handles(rec.request)) {  // src/pods.cc
    return absl::InvalidArgumentError(
        absl::StrCat("group ", rec.request.name, ": a group sharing GPUs has no per-pod record"));
  }
  if (IsFractional(rec.request)) {  // runs as asked: never downgraded, no virtual cells
    if ((rec.state == GroupState::kAllocated) != (rec.request.priority >= kMinGuaranteedPriority)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", rec.request.name, ": a fractional group runs as asked (allocated exactly ",
          "when its priority is at least 0), not ", GroupStateName(rec.state)));
    }
    return Synced(sharing_->Recover(rec.request, rec.placement));
  }
  if (!sharing_->Handles(rec.request)) return whole_->RestoreGroup(rec, ignored_leaves);
  // A host group (or a holder's name, which Sharing refuses): the core prepares the record
  // (its recorded virtual cells, a recorded downgrade) and Sharing recovers it.
  return Synced(whole_->RestoreGroup(
      rec, ignored_leaves, [this](const GroupRequest& request, const Placement& placement) {
        return sharing_->Recover(request, placement);
      }));
}

absl::StatusOr<std::unique_ptr<LayeredScheduler>> LayeredScheduler::Restore(
    const ClusterSpec& spec, std::string_view text, RestoreReport* report, RestoreOptions options) {
  HIVED_ASSIGN_OR_RETURN(internal::SavedState state, internal::SavedStateFromJson(text));
  HIVED_ASSIGN_OR_RETURN(std::unique_ptr<LayeredScheduler> s, Create(spec));
  // Strict restore (issue 29): a state of another cluster only when asked for, reported.
  RestoreReport match;
  match.saved_fingerprint = state.config;
  match.cluster_fingerprint = s->whole_->ConfigFingerprint();
  match.spec_match = state.config.empty()                        ? SpecMatch::kUnknown
                     : state.config == match.cluster_fingerprint ? SpecMatch::kSame
                                                                 : SpecMatch::kDifferent;
  if (match.spec_match == SpecMatch::kDifferent && options.spec_mismatch == SpecMismatch::kRefuse) {
    return absl::FailedPreconditionError(absl::StrCat(
        "$.config: the state was saved on another cluster (spec fingerprint ",
        internal::Quote(state.config), ", this cluster's ", match.cluster_fingerprint,
        "): refused (RestoreOptions::spec_mismatch = kRestoreAnyway restores it, reported)"));
  }
  // MIG instances and host use that cannot be (overlaps, starts or profiles the GPU lacks,
  // nodes over their CPU or memory) reject the document, naming the JSON path.
  HIVED_RETURN_IF_ERROR(s->sharing_->CheckSavedState(state));
  RestoreReport local;
  RestoreReport& out = report != nullptr ? *report : local;
  out = std::move(match);
  if (out.spec_match == SpecMatch::kDifferent) {
    out.notes.push_back(absl::StrCat("$.config: saved on another cluster (spec fingerprint ",
                                     internal::Quote(out.saved_fingerprint), ", this cluster's ",
                                     out.cluster_fingerprint, "): restored as asked"));
  } else if (out.spec_match == SpecMatch::kUnknown) {
    out.notes.push_back("$.config: the state names no cluster (an old document): restored");
  }
  // Groups first, in the saved (name) order, then the bindings history decided (pinned,
  // bad, doomed cells), then the bad nodes, then the doomed marks: with the bindings in
  // place, marking the nodes bad binds nothing more; marking them first could bind
  // virtual cells to bad cells (doomed) that a recorded group holds. Fractional groups
  // come after the whole ones (their GPUs are opened by the holders among those).
  out.groups.resize(state.groups.size());
  std::vector<size_t> fractional;
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const GroupRecord& rec = state.groups[i];
    RestoreReport::Group& entry = out.groups[i];
    entry.name = rec.request.name;
    entry.path = absl::StrCat("$.groups[", i, "]");
    if (IsFractional(rec.request)) {
      fractional.push_back(i);
      continue;
    }
    int32_t ignored = 0;
    std::vector<std::string> gone;  // a holder's GPUs the cluster no longer has
    absl::StatusOr<AllocateInfo> info = IsHolderName(rec.request.name)
                                            ? s->sharing_->RestoreHolder(rec, &gone)
                                            : s->RestoreGroup(rec, &ignored);
    // A whole group none of whose leaves is in this cluster comes back as an error from
    // `RestoreGroup` (src/allocate.cc, Recover), decided before anything changes.
    if (!info.ok()) {
      entry.outcome = RestoreOutcome::kDropped;
      entry.reason = std::string(info.status().message());
    } else {
      if (!gone.empty()) {
        ignored = static_cast<int32_t>(gone.size());
        info->reason =
            absl::StrCat("leaf cells not in the cluster are ignored: ", absl::StrJoin(gone, ", "));
      }
      const bool was_guaranteed = rec.state == GroupState::kAllocated;
      if (was_guaranteed && info->downgraded) {
        entry.outcome = RestoreOutcome::kDowngraded;
      } else if (ignored > 0) {
        entry.outcome = RestoreOutcome::kPartial;
      }
      if (entry.outcome != RestoreOutcome::kKept) entry.reason = info->reason;
      if (ignored > 0 && entry.reason.empty()) entry.reason = info->reason;
    }
  }
  // The MIG GPUs' layouts, before the MIG groups take their instances in them.
  s->sharing_->RestoreMigLayouts(state, &out.notes);
  for (size_t i : fractional) {
    RestoreReport::Group& entry = out.groups[i];
    std::vector<std::string> skipped;
    const absl::Status st = s->sharing_->RestoreShared(state.groups[i], &skipped);
    if (!st.ok()) {
      entry.outcome = RestoreOutcome::kDropped;
      entry.reason = std::string(st.message());
    } else if (!skipped.empty()) {
      entry.outcome = RestoreOutcome::kPartial;
      entry.reason = absl::StrCat("pods not accounted: ", absl::StrJoin(skipped, "; "));
    }
  }
  // Holders left without a share (every pod on their GPUs skipped) are released.
  std::vector<std::string> released =
      s->sharing_->FinishRestore(static_cast<uint64_t>(state.next_holder));
  // The shapes the stranded rule learnt (share_choice.h): exactly as saved, so the decisions
  // after a restart are the ones the saved scheduler would have made; their leaf-type masks
  // mean nothing in another cluster, so a changed one learns them again from its requests.
  if (state.config == s->whole_->ConfigFingerprint()) {
    HIVED_RETURN_IF_ERROR(s->sharing_->LearnShapes(state.share_shapes));
  } else if (!state.share_shapes.tally.empty()) {
    out.notes.push_back(
        "$.shareShapes: the cluster's cells or VCs changed since the state was saved: the pod "
        "shapes the sharing choice learnt are not restored (it learns them again)");
  }
  for (RestoreReport::Group& entry : out.groups) {
    if (entry.outcome != RestoreOutcome::kDropped &&
        std::find(released.begin(), released.end(), entry.name) != released.end()) {
      entry.outcome = RestoreOutcome::kDropped;
      entry.reason = "a sharing holder left without a restored share on its GPUs: released";
    }
  }
  // The core's part after the groups: bindings, bad nodes, doomed marks.
  s->SyncShields();
  HIVED_RETURN_IF_ERROR(s->whole_->RestoreCells(state, &out));
  return s;
}

}  // namespace hived
