// Sharing's decisions: Schedule (holders, evictions, the cancellation notes) and Allocate
// (sharing/sharing.h); the bookkeeping and Release are in sharing_release.cc.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sharing/sharing.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

CellId Sharing::PlaceLive(const GroupRequest& r, const Parsed& p, const PodAsk& a, Tentative* t,
                          bool evict, std::string* preferred) const {
  while (true) {
    const CellId leaf = Place(r, p, a, *t, evict, preferred);
    if (leaf.IsNil()) return leaf;
    const std::string& holder = leaf_use_.at(leaf.value()).holder;
    if (CoreState(holder) != GroupState::kBeingPreempted) return leaf;
    for (CellId l : holders_.at(holder).leaves) t->excluded.push_back(l.value());
  }
}

absl::Status Sharing::CancelHolder(Group* g) {
  if (g->holder.empty()) return absl::OkStatus();
  const std::string holder = std::move(g->holder);
  g->holder.clear();
  const GroupState state = CoreState(holder);
  if (state != GroupState::kPreempting && state != GroupState::kReserved) return absl::OkStatus();
  return whole_.Unreserve(holder);
}

void Sharing::Bar(const std::string& group, bool on) {
  for (CellId leaf : groups_.at(group).barred) {
    auto it = leaf_use_.find(leaf.value());
    if (it == leaf_use_.end()) continue;
    if (on && it->second.barred_by != group) {
      it->second.barred_by = group;
      bars_changed_.push_back(leaf.value());
    } else if (!on && it->second.barred_by == group) {
      it->second.barred_by.clear();
      bars_changed_.push_back(leaf.value());
    }
  }
}

absl::StatusOr<ScheduleResult> Sharing::ScheduleHolder(
    const GroupRequest& r, const Parsed& p, int32_t pods, Phase phase, const std::string& preferred,
    const hived::NodeRoom* room, std::string* name, GroupRequest* holder_request) {
  auto git = groups_.find(r.name);
  if (git != groups_.end() && !git->second.holder.empty()) {
    if (git->second.holder_request.members[0].pod_number == pods) {  // the re-check
      *name = git->second.holder;
      *holder_request = git->second.holder_request;
      return ScheduleWhole(*holder_request, phase, room);
    }
    // Room opened on shared GPUs since: fewer new leaves; the reservation is replaced.
    if (phase == Phase::kPreempting) HIVED_RETURN_IF_ERROR(CancelHolder(&git->second));
  }
  *name = absl::StrCat(kHolderPrefix, next_holder_);
  std::vector<std::string> types = p.types;
  if (types.empty()) types.push_back("");
  absl::StatusOr<ScheduleResult> first;
  bool have_first = false;
  for (const std::string& type : types) {
    GroupRequest h = HolderRequest(r, p, *name, type, pods);
    if (pods == 1 && !preferred.empty()) {  // the stranded rule's node first
      // One decision there, applied only when it places (else nothing changed: all nodes).
      GroupRequest there = h;
      there.suggested_nodes = std::vector<std::string>{preferred};
      absl::StatusOr<ScheduleResult> try_there =
          ScheduleWhole(there, phase, room, /*only_placed=*/true);
      if (try_there.ok() && try_there->outcome == Outcome::kPlaced) {
        *holder_request = std::move(there);
        return try_there;
      }
    }
    absl::StatusOr<ScheduleResult> res = ScheduleWhole(h, phase, room);
    if (res.ok() && (res->outcome == Outcome::kPlaced || res->outcome == Outcome::kPreempting)) {
      *holder_request = std::move(h);
      return res;
    }
    // A type the VC lacks is an error for that type only: the answer is the first type's
    // that is not an error (a wait), and the first error only when every type is one.
    if (!have_first || (res.ok() && !first.ok())) {
      first = std::move(res);
      have_first = true;
    }
  }
  return first;
}

absl::StatusOr<Sharing::Parsed> Sharing::ParseFor(const GroupRequest& r) const {
  if (IsHolderName(r.name)) return Parse(r);  // the reserved name's error first
  auto git = groups_.find(r.name);
  if (git != groups_.end() && git->second.stage == Stage::kRunning) {
    return absl::AlreadyExistsError(absl::StrCat("group ", r.name, " is already running"));
  }
  if (git == groups_.end() && CoreState(r.name) != GroupState::kAbsent) {
    return absl::AlreadyExistsError(absl::StrCat("group ", r.name, " already exists"));
  }
  return Parse(r);
}

void Sharing::NoteAdmitted(const GroupRequest& r, uint64_t types) {
  // The tally of shapes (share_choice.h) counts the pods of every group that starts to run
  // (Allocate, Recover): never a Schedule, so a Filtering call changes nothing and a group
  // retried while it waits is counted once. MIG pods are placed by their layouts, not by the
  // stranded rule, so they are not counted.
  const bool host = IsHostRequest(r);
  for (const GroupMember& m : r.members) {
    if (!m.mig_profile.empty()) continue;
    if (host) {
      choice_.Note({m.cpu_milli, m.memory_mib, m.leaf_cell_number > 0 ? cellalloc::kGpuMilli : 0,
                    m.leaf_cell_number, ~uint64_t{0}},
                   m.pod_number);
    } else {
      choice_.Note({m.cpu_milli, m.memory_mib, m.gpu_milli, 1, types}, m.pod_number);
    }
  }
}

absl::StatusOr<ScheduleResult> Sharing::Schedule(const GroupRequest& r, Phase phase) {
  if (IsHostRequest(r)) return ScheduleHost(r, phase);
  // A preempting group whose holder an overlapping preemptor cancelled is told so, once, by
  // the Preempting phase (the Filtering phase changes nothing).
  std::string by;
  auto git = groups_.find(r.name);
  if (git != groups_.end() && git->second.stage == Stage::kPreempting &&
      !git->second.holder.empty()) {
    if (phase == Phase::kPreempting) {
      by = whole_.TakeCancelled(git->second.holder);
    } else if (const std::string* b = whole_.CancelledBy(git->second.holder)) {
      by = *b;
    }
  }
  absl::StatusOr<ScheduleResult> result = ScheduleShares(r, phase);
  git = groups_.find(r.name);
  if (result.ok() && git != groups_.end() && git->second.stage == Stage::kPreempting &&
      (result->outcome == Outcome::kWaiting || result->outcome == Outcome::kInfeasible)) {
    // A preempting group that can neither place nor preempt now holds nothing: its bars and
    // its holder are given up in the Preempting phase (as a whole group's blocked
    // reservation is re-placed), and the Filtering phase, which changes nothing, says that
    // it still preempts.
    if (phase == Phase::kPreempting) {
      HIVED_RETURN_IF_ERROR(CancelHolder(&git->second));
      Bar(r.name, false);
      groups_.erase(git);
      pending_ = Pending();
      absl::StrAppend(&result->reason, "; its preemption is given up");
    } else {
      result->code = ReasonCode::kReservationBlocked;
      result->reason =
          absl::StrCat("preempting group ", r.name, " cannot be placed now (", result->reason,
                       "); it keeps its reservation until a Preempting-phase "
                       "Schedule re-places it or CancelPreemption");
    }
  }
  if (result.ok()) {
    result->cancelled_by = std::move(by);
    // The scheduler noted the holder that cancelled them; the group it placed is named.
    for (const std::string& c : result->cancelled) {
      auto cit = groups_.find(c);
      whole_.NoteCancelled(
          cit != groups_.end() && !cit->second.holder.empty() ? cit->second.holder : c, r.name);
    }
  }
  return result;
}

absl::StatusOr<ScheduleResult> Sharing::ScheduleShares(const GroupRequest& r, Phase phase) {
  pending_ = Pending();
  auto rit = groups_.find(r.name);
  if (rit != groups_.end() && rit->second.stage == Stage::kReserved) {
    HIVED_RETURN_IF_ERROR(Parse(r).status());
    HIVED_ASSIGN_OR_RETURN(std::optional<ScheduleResult> kept, RecheckReserved(r, phase));
    if (kept.has_value()) return *std::move(kept);  // else dropped: placed anew below
  }
  auto git = groups_.find(r.name);
  HIVED_ASSIGN_OR_RETURN(Parsed p, ParseFor(r));
  std::string preferred;  // the stranded rule's node for a fresh leaf (PlaceStranded)
  const bool preempting = git != groups_.end();
  // A preempting group's bars are lifted while it is re-decided, and set again (its GPUs
  // may have changed) if it still preempts when this returns.
  if (preempting) Bar(r.name, false);
  struct Rebar {
    Sharing* self;
    const std::string& name;
    ~Rebar() {
      auto it = self->groups_.find(name);
      if (it != self->groups_.end() && it->second.stage == Stage::kPreempting) {
        self->Bar(name, true);
      }
    }
  } rebar{this, r.name};
  Tentative t;
  std::vector<CellId> leaves(p.pods.size());
  int32_t fresh = 0;
  for (size_t i = 0; i < p.pods.size(); ++i) {
    leaves[i] = PlaceLive(r, p, p.pods[i], &t, /*evict=*/false, &preferred);
    if (leaves[i].IsNil()) {
      ++fresh;
    } else {
      Take(leaves[i], p.pods[i], &t);
    }
  }
  ScheduleResult result;
  auto fill = [&](const std::vector<CellId>& chosen, const Placement* holder) {
    result.placement = Placement();
    size_t next = 0;
    for (size_t i = 0; i < chosen.size(); ++i) {
      PodPlacement pod;
      if (!chosen[i].IsNil()) {
        FillPlacementPod(chosen[i], &pod);
      } else if (holder != nullptr && next < holder->pods.size()) {
        pod = holder->pods[next++];
      }
      if (result.placement.chain.empty() && !pod.node.empty()) {
        result.placement.chain = holder != nullptr && chosen[i].IsNil()
                                     ? holder->chain
                                     : forest_.chain_info(forest_.chain(chosen[i])).name;
      }
      result.placement.pods.push_back(std::move(pod));
    }
  };
  // A kPlaced result: reserved (Preempting phase) or kept for the Allocate right after it.
  auto keep = [&](const std::string& holder, const GroupRequest* holder_request,
                  const Placement* holder_placement) {
    Decision d;
    d.placement = result.placement;
    size_t next = 0;
    for (size_t i = 0; i < p.pods.size(); ++i) {
      const PodAsk& a = p.pods[i];
      PodShare share{leaves[i], a.milli, a.memory, a.cpu, a.host_memory, true, a.mig};
      if (leaves[i].IsNil()) {
        share.leaf = FindLeaf(holder_placement->pods[next++], Parsed());
        share.open = false;
        HIVED_CHECK(!share.leaf.IsNil()) << holder;
      }
      d.pods.push_back(share);
    }
    if (holder_request != nullptr) {
      d.holder = holder;
      d.holder_request = *holder_request;
      d.holder_placement = *holder_placement;
    }
    if (phase == Phase::kPreempting) {
      Reserve(r, p, std::move(d));
    } else {
      pending_ = Pending{r.name, r, std::move(d), whole_.epoch()};
    }
  };
  if (fresh == 0) {
    if (preempting && phase == Phase::kPreempting) {
      HIVED_RETURN_IF_ERROR(CancelHolder(&git->second));
    }
    result.outcome = Outcome::kPlaced;
    fill(leaves, nullptr);
    keep("", nullptr, nullptr);
    return result;
  }
  std::string name;
  GroupRequest holder_request;
  // The node choice itself counts the nodes' CPU and host memory (src/node_room.h): the
  // suggested nodes have room for one pod each, the room for the new pods together.
  const hived::NodeRoom room = FreshRoom(p, leaves, t);
  absl::StatusOr<ScheduleResult> core = ScheduleHolder(
      r, p, fresh, phase, preferred, nodes_declare_ ? &room : nullptr, &name, &holder_request);
  if (!core.ok()) return core.status();
  if (core->outcome == Outcome::kPlaced || core->outcome == Outcome::kPreempting) {
    result.outcome = core->outcome;
    result.victims = core->victims;      // already translated by the scheduler's hook
    result.cancelled = core->cancelled;  // likewise
    result.reason = core->reason;
    result.code = core->code;
    fill(leaves, &core->placement);
    if (core->outcome == Outcome::kPlaced) {
      const bool own = preempting && git->second.holder == name;
      if (phase == Phase::kPreempting && !own) ++next_holder_;
      keep(name, &holder_request, &core->placement);
    } else if (phase == Phase::kPreempting) {
      Group& g = groups_[r.name];
      if (g.holder.empty()) ++next_holder_;
      g.request = r;
      g.guaranteed = p.guaranteed;
      g.holder = name;
      g.holder_request = holder_request;
      g.holder_request.suggested_nodes.reset();  // re-checks are not bound to today's nodes
    }
    return result;
  }
  // No new leaf. A guaranteed group of a `protected` type may evict the opportunistic
  // guests from its own GPUs.
  std::vector<CellId> evicted = leaves;
  Tentative te = t;
  std::vector<std::string> victims;
  bool all = p.guaranteed;
  for (size_t i = 0; i < p.pods.size() && all; ++i) {
    if (!evicted[i].IsNil()) continue;
    evicted[i] = PlaceLive(r, p, p.pods[i], &te, /*evict=*/true, nullptr);
    all = !evicted[i].IsNil();
    if (all) {
      Take(evicted[i], p.pods[i], &te);
      for (std::string& v : Guests(evicted[i])) victims.push_back(std::move(v));
    }
  }
  if (all && !victims.empty()) {
    std::sort(victims.begin(), victims.end());
    victims.erase(std::unique(victims.begin(), victims.end()), victims.end());
    result.outcome = Outcome::kPreempting;
    result.victims = std::move(victims);
    fill(evicted, nullptr);
    if (phase == Phase::kPreempting) {
      Group& g = groups_[r.name];
      g.request = r;
      g.guaranteed = true;
      g.barred.clear();
      for (size_t i = 0; i < evicted.size(); ++i) {
        if (leaves[i].IsNil()) g.barred.push_back(evicted[i]);
      }
    }
    return result;
  }
  result.outcome = core->outcome;
  result.code = core->code;
  result.reason = absl::StrCat("group ", r.name, ": ", fresh, " pod(s) fit no GPU open for sharing",
                               " and no new leaf cell: ", core->reason);
  return result;
}

hived::NodeRoom Sharing::FreshRoom(const Parsed& p, const std::vector<CellId>& leaves,
                                   const Tentative& t) const {
  hived::NodeRoom room{&node_cpu_, &node_cpu_used_, &node_memory_, &node_memory_used_, &t.node, {},
                       {}};
  if (!nodes_declare_) return room;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].IsNil()) continue;
    room.pod_cpu.push_back(p.pods[i].cpu);
    room.pod_memory.push_back(p.pods[i].host_memory);
  }
  return room;
}

CellId Sharing::FindLeaf(const PodPlacement& pod, const Parsed& p) const {
  const NodeId n = forest_.FindNode(pod.node);
  if (n.IsNil() || pod.leaf_cell_indices.size() != 1) return CellId();
  for (CellId c : forest_.node_cells(n)) {
    const CellId leaf = forest_.FindLeaf(forest_.chain(c), n, pod.leaf_cell_indices[0]);
    if (!leaf.IsNil() && TypeAllowed(p, leaf)) return leaf;
  }
  return CellId();
}

absl::StatusOr<AllocateInfo> Sharing::Allocate(const GroupRequest& r, const Placement& placement) {
  if (IsHostRequest(r)) return AllocateHost(r, placement, /*recover=*/false);
  auto git = groups_.find(r.name);
  if (git == groups_.end() || git->second.stage != Stage::kReserved) {
    HIVED_ASSIGN_OR_RETURN(Parsed p, ParseFor(r));
    return AllocateDecided(r, p, placement);
  }
  HIVED_RETURN_IF_ERROR(Parse(r).status());
  std::string diff = Reservations::RequestDifference(git->second.request, r);
  if (diff.empty()) diff = Reservations::PlacementDifference(git->second.placement, placement);
  if (!diff.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("group ", r.name, " is reserved for another request or placement: ", diff,
                     " (Allocate the reserved placement, or Unreserve and Schedule again)"));
  }
  return CommitReserved(r.name, /*holder_allocated=*/false);
}

}  // namespace hived
