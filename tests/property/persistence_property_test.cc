// Property test of persistence (issue 12): two schedulers receive the same random calls
// (schedule in both phases with lazy preemption, pinned cells, leaf types and suggested
// nodes; allocate, a kPlaced result sometimes left reserved; recover stale placements;
// release; cancel and unreserve; re-check reserved and preempting groups; bad and healthy
// nodes). At random points the reserved and preempting groups are unreserved (they are
// not persisted: the restart rule), one scheduler's state is saved and the other is
// replaced by `Restore` of it. Then:
//  - `SaveState` of the restored scheduler is byte-identical to the saved state, and the
//    report keeps every group;
//  - after every further call both return the same result (outcome, placement, victims,
//    reason, code, errors, allocate info) and show the same state (`SaveState`, groups,
//    virtual clusters, capacity, usage, nodes);
//  - `CheckInvariants` holds on both;
//  - restored into the spec without its last VC (sometimes), every group is reported, the
//    removed VC's guaranteed groups run downgraded and every other group is kept.
// Runs on a small cluster, on HiveD's design config (vendored) and on the sharing tests'
// cluster (tests/unit/sharing/sharing_cluster.h), where half the new groups are fractional
// (shares of one GPU with GPU memory, CPU and host memory, one or several allowed GPU
// models) mixed with whole-GPU groups, and the shares per GPU (holder, milli, memory,
// sharers) are part of the compared state; restored without its last VC, the removed VC's
// guaranteed shares are skipped (partial) and their holders downgraded or released.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "unit/sharing/sharing_cluster.h"

namespace {

using hived::GroupRequest;
using hived::GroupState;
using hived::Outcome;
using hived::Phase;
using hived::Scheduler;

std::string PlacementText(const hived::Placement& p) {
  std::string out = p.chain;
  for (const auto& pod : p.pods) {
    absl::StrAppend(&out, " ", pod.node, ":", absl::StrJoin(pod.leaf_cell_indices, ","), "[",
                    absl::StrJoin(pod.preassigned_cell_types, ","), "]");
  }
  return out;
}

std::string Text(const absl::StatusOr<hived::ScheduleResult>& r) {
  if (!r.ok()) return r.status().ToString();
  return absl::StrCat(hived::OutcomeName(r->outcome), " ", PlacementText(r->placement),
                      " v=", absl::StrJoin(r->victims, ","), " r=", r->reason,
                      " c=", static_cast<int>(r->code));
}

std::string Text(const absl::StatusOr<hived::AllocateInfo>& r) {
  if (!r.ok()) return r.status().ToString();
  return absl::StrCat("allocated ", r->downgraded, " ", r->reason);
}

void VirtualText(const std::vector<hived::VirtualCellStatus>& cells, std::string* out) {
  for (const auto& c : cells) {
    absl::StrAppend(out, c.address, "=", c.physical_cell, ":", hived::CellStateName(c.state), ":",
                    c.priority, ":", c.health == hived::CellHealth::kBad ? "bad" : "ok", " ");
    VirtualText(c.children, out);
  }
}

// The GPUs open for sharing: holder, shared milli and memory, sharers.
void SharesText(const hived::PhysicalCellStatus& c, std::string* out) {
  if (!c.sharing_holder.empty()) {
    absl::StrAppend(out, c.address, " ", c.sharing_holder, " ", c.shared_milli, " ",
                    c.shared_gpu_memory_mib, " ", absl::StrJoin(c.sharers, ","), "\n");
  }
  for (const auto& k : c.children) SharesText(k, out);
}

bool IsHolder(const std::string& name) { return name.rfind("hived-share/", 0) == 0; }

// Everything a client can observe, except the whole physical tree (the virtual trees and
// capacity cover its bindings; the shares of open GPUs are listed).
std::string StateText(const Scheduler& s) {
  std::string out = *s.SaveState();
  for (const auto& g : s.Groups()) {
    absl::StrAppend(&out, g.name, " ", hived::GroupStateName(g.state), " ", g.priority, " ",
                    g.preemptor, " ", g.downgrade_reason, " ", PlacementText(g.placement), "\n");
  }
  for (const auto& vc : s.spec().virtual_clusters) {
    auto cells = s.VirtualCluster(vc.name);
    if (cells.ok()) VirtualText(*cells, &out);
    out += "\n";
  }
  for (const auto& c : s.Capacity()) {
    absl::StrAppend(&out, c.chain, "/", c.level, " ", c.free, " ", c.obtainable, " ", c.bad_free,
                    " ", c.vc_unbound, "\n");
  }
  for (const auto& u : s.VcUsages()) {
    absl::StrAppend(&out, u.vc, "/", u.leaf_cell_type, " ", u.guaranteed_used_leaf_cells, " ",
                    u.opportunistic_used_leaf_cells, "\n");
  }
  for (const auto& n : s.Nodes()) {
    absl::StrAppend(&out, n.name, " ", n.free_leaf_cells, " ", n.healthy, "\n");
  }
  for (const auto& c : s.PhysicalCluster()) SharesText(c, &out);
  return out;
}

// "" when equal; else the first differing line of each.
std::string Difference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t start = i == 0 ? 0 : a.rfind('\n', i - 1) + 1;  // npos + 1 == 0
  auto line = [&](const std::string& s) { return s.substr(start, s.find('\n', i) - start); };
  return absl::StrCat("first difference:\n  ", line(a), "\n  ", line(b));
}

class Lockstep {
 public:
  Lockstep(const hived::ClusterSpec& spec, uint64_t seed) : spec_(spec), rng_(seed) {
    a_ = std::move(*Scheduler::Create(spec));
    b_ = std::move(*Scheduler::Create(spec));
    for (const auto& n : a_->Nodes()) {
      nodes_.push_back(n.name);
      max_leaves_ = std::max(max_leaves_, n.total_leaf_cells);
      if (std::find(types_.begin(), types_.end(), n.leaf_cell_type) == types_.end())
        types_.push_back(n.leaf_cell_type);
    }
    for (const auto& t : spec.leaf_cell_types) {
      sharing_ = sharing_ || t.sharing != hived::SharingMode::kNone;
    }
  }

  int64_t restores() const { return restores_; }
  int64_t placed() const { return placed_; }
  int64_t placed_fractional() const { return placed_fractional_; }
  int64_t partial() const { return partial_; }

  void Step() {
    if (log_.size() > 12) log_.erase(log_.begin());
    log_.emplace_back();
    const int kind = Pick(100);
    if (kind < 45) {
      ScheduleNew();
    } else if (kind < 60) {
      ReleaseSome();
    } else if (kind < 66) {
      RecheckPreempting();
    } else if (kind < 70) {
      CancelSome();
    } else if (kind < 75) {
      FlipNode();
    } else if (kind < 79) {
      AllocateStale();
    } else if (kind < 85) {
      SaveAndRestore();
    } else {
      ScheduleNew();
    }
    INFO("last calls:\n" << absl::StrJoin(log_, "\n"));
    REQUIRE(a_->CheckInvariants().ok());
    REQUIRE(b_->CheckInvariants().ok());
    REQUIRE(Difference(StateText(*a_), StateText(*b_)) == "");
  }

  // The restart: reservations (reserved and preempting groups) are given up (not
  // persisted), then one side is rebuilt from the other's saved state.
  void SaveAndRestore() {
    for (const auto& g : a_->Groups()) {
      if (Reserving(g.state) && !IsHolder(g.name)) {  // a holder goes with its group
        REQUIRE(a_->Unreserve(g.name).ok());
        REQUIRE(b_->Unreserve(g.name).ok());
      }
    }
    const bool into_a = Pick(2) == 0;
    Scheduler& from = into_a ? *b_ : *a_;
    const std::string state = *from.SaveState();
    hived::RestoreReport report;
    auto restored = Scheduler::Restore(spec_, state, &report);
    REQUIRE(restored.ok());
    for (const auto& g : report.groups) {
      CAPTURE(g.name, g.reason);
      REQUIRE(g.outcome == hived::RestoreOutcome::kKept);
    }
    REQUIRE(report.unknown_nodes.empty());
    CAPTURE(report.notes);
    REQUIRE(Difference(*(*restored)->SaveState(), state) == "");
    (into_a ? a_ : b_) = std::move(*restored);
    absl::StrAppend(&log_.back(), "restore ", into_a ? "a" : "b");
    ++restores_;
    if (Pick(4) == 0) RestoreWithoutLastVc(state);
  }

  // The same state restored into the spec without its last VC (a reconfiguration): every
  // group is reported, the removed VC's guaranteed groups run downgraded, the others are
  // kept, nothing is dropped, and the invariants hold.
  void RestoreWithoutLastVc(const std::string& state) {
    hived::ClusterSpec smaller = spec_;
    const std::string gone = smaller.virtual_clusters.back().name;
    smaller.virtual_clusters.pop_back();
    hived::RestoreReport report;
    auto restored = Scheduler::Restore(smaller, state, &report,
                                       hived::RestoreOptions{hived::SpecMismatch::kRestoreAnyway});
    REQUIRE(restored.ok());
    REQUIRE((*restored)->CheckInvariants().ok());
    const std::vector<hived::GroupStatus> before = a_->Groups();
    REQUIRE(report.groups.size() == before.size());
    for (size_t i = 0; i < before.size(); ++i) {
      const hived::GroupStatus& g = before[i];
      const hived::RestoreOutcome outcome = report.groups[i].outcome;
      CAPTURE(g.name, report.groups[i].reason);
      REQUIRE(report.groups[i].name == g.name);
      const bool downgrade = g.vc == gone && g.state == GroupState::kAllocated;
      if (IsFractional(g.request) && downgrade) {
        // Its shares sat on holders of the gone VC, now opportunistic: not accounted.
        REQUIRE(outcome == hived::RestoreOutcome::kPartial);
        ++partial_;
        continue;
      }
      if (IsHolder(g.name) && downgrade && outcome == hived::RestoreOutcome::kDropped) {
        REQUIRE((*restored)->GetGroup(g.name).state == GroupState::kAbsent);  // released
        continue;
      }
      REQUIRE(outcome ==
              (downgrade ? hived::RestoreOutcome::kDowngraded : hived::RestoreOutcome::kKept));
      REQUIRE((*restored)->GetGroup(g.name).state ==
              (downgrade ? GroupState::kOpportunistic : g.state));
    }
    ++reconfigured_;
  }

  int64_t reconfigured() const { return reconfigured_; }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

  static bool IsFractional(const GroupRequest& r) {
    return !r.members.empty() && r.members[0].gpu_milli > 0;
  }

  // A share of one GPU per pod (openb's shapes: small shares, whole-GPU shares, memory, CPU),
  // of one or several allowed GPU models.
  void MakeFractional(GroupRequest* r) {
    r->lazy_preemption = false;
    r->pinned_cell_id.clear();
    r->leaf_cell_type.clear();
    hived::GroupMember m;
    m.pod_number = 1 + Pick(Pick(4) == 0 ? 3 : 1);
    m.leaf_cell_number = 1;
    m.gpu_milli = Pick(5) == 0 ? 1000 : 50 * (1 + Pick(18));
    m.gpu_memory_mib = Pick(3) == 0 ? 0 : 1000 * Pick(12);
    m.cpu_milli = Pick(2) == 0 ? 0 : 500 * Pick(6);
    m.memory_mib = Pick(2) == 0 ? 0 : 4000 * Pick(4);
    r->members = {m};
    const int k = Pick(static_cast<int>(types_.size()) + 2);
    if (k < static_cast<int>(types_.size())) {
      r->leaf_cell_types = {types_[static_cast<size_t>(k)]};
    } else if (k == static_cast<int>(types_.size())) {
      r->leaf_cell_types = types_;  // any of them, in this order
    }
  }

  GroupRequest RandomRequest() {
    GroupRequest r;
    r.name = absl::StrCat("g", next_++);
    const auto& vc = spec_.virtual_clusters[static_cast<size_t>(
        Pick(static_cast<int>(spec_.virtual_clusters.size())))];
    r.vc = vc.name;
    static constexpr int kPriorities[] = {-1, 0, 0, 1, 2, 5};
    r.priority = kPriorities[Pick(6)];
    r.lazy_preemption = Pick(3) == 0;
    if (r.priority >= 0 && !vc.pinned_cells.empty() && Pick(5) == 0) {
      r.pinned_cell_id =
          vc.pinned_cells[static_cast<size_t>(Pick(static_cast<int>(vc.pinned_cells.size())))]
              .pinned_cell_id;
    } else if (Pick(3) == 0) {
      r.leaf_cell_type = types_[static_cast<size_t>(Pick(static_cast<int>(types_.size())))];
    }
    const int kinds = 1 + Pick(2);
    for (int k = 0; k < kinds; ++k) {
      int leaves = 1 << Pick(4);
      leaves = std::min(leaves, max_leaves_);
      r.members.push_back({1 + Pick(k == 0 ? 3 : 2), leaves});
    }
    if (sharing_ && Pick(2) == 0) MakeFractional(&r);
    if (Pick(6) == 0) {
      std::vector<std::string> suggested;
      for (const std::string& n : nodes_) {
        if (Pick(4) != 0) suggested.push_back(n);
      }
      r.suggested_nodes = suggested;
    }
    return r;
  }

  // Schedules on both; allocates a kPlaced result on both (mostly).
  void ScheduleOn(const GroupRequest& r, Phase phase) {
    auto ra = a_->Schedule(r, phase);
    auto rb = b_->Schedule(r, phase);
    absl::StrAppend(&log_.back(), "schedule ", r.name, " ", r.vc, " p", r.priority,
                    phase == Phase::kFiltering ? " filtering" : " preempting", ": ", Text(ra),
                    "; ");
    CAPTURE(r.name);
    REQUIRE(Text(ra) == Text(rb));
    if (!ra.ok()) return;
    if (ra->outcome == Outcome::kPlaced && Pick(10) != 0) {
      auto ia = a_->Allocate(r, ra->placement);
      auto ib = b_->Allocate(r, rb->placement);
      REQUIRE(Text(ia) == Text(ib));
      absl::StrAppend(&log_.back(), "allocate: ", Text(ia));
      if (ia.ok()) {
        ++placed_;
        placed_fractional_ += IsFractional(r) ? 1 : 0;
        placements_.emplace_back(r, ra->placement);
      }
    }
  }

  void ScheduleNew() {
    GroupRequest r = RandomRequest();
    requests_[r.name] = r;
    ScheduleOn(r, Pick(4) == 0 ? Phase::kFiltering : Phase::kPreempting);
  }

  static bool Reserving(GroupState s) {
    return s == GroupState::kPreempting || s == GroupState::kReserved;
  }

  // A random live group that holds (or does not hold) a reservation: reserved or
  // Preempting; empty when there is none.
  std::string PickGroup(bool preempting) {
    std::vector<std::string> names;
    for (const auto& g : a_->Groups()) {
      if (Reserving(g.state) == preempting) names.push_back(g.name);
    }
    return names.empty() ? std::string()
                         : names[static_cast<size_t>(Pick(static_cast<int>(names.size())))];
  }

  void ReleaseSome() {
    const std::string name = PickGroup(/*preempting=*/false);
    if (name.empty()) return;
    absl::StrAppend(&log_.back(), "release ", name);
    REQUIRE(a_->Release(name).ToString() == b_->Release(name).ToString());
  }

  void CancelSome() {
    const std::string name = PickGroup(/*preempting=*/true);
    if (name.empty()) return;
    // CancelPreemption of a reserved group is kFailedPrecondition on both sides.
    const int how = Pick(3);
    absl::StrAppend(&log_.back(), how == 0 ? "cancel " : "unreserve ", name);
    if (how == 0) {
      REQUIRE(a_->CancelPreemption(name).ToString() == b_->CancelPreemption(name).ToString());
    } else {
      REQUIRE(a_->Unreserve(name).ToString() == b_->Unreserve(name).ToString());
    }
  }

  void RecheckPreempting() {
    const std::string name = PickGroup(/*preempting=*/true);
    if (!name.empty()) {
      ScheduleOn(requests_[name], Pick(3) == 0 ? Phase::kFiltering : Phase::kPreempting);
    }
  }

  void FlipNode() {
    const std::string& node = nodes_[static_cast<size_t>(Pick(static_cast<int>(nodes_.size())))];
    const bool healthy = Pick(2) == 0;
    absl::StrAppend(&log_.back(), "node ", node, healthy ? " healthy" : " bad");
    REQUIRE(a_->SetNodeHealthy(node, healthy).ToString() ==
            b_->SetNodeHealthy(node, healthy).ToString());
  }

  // Recovery: an old placement of a group that is gone (under a new name).
  void AllocateStale() {
    if (placements_.empty()) return;
    auto [r, placement] =
        placements_[static_cast<size_t>(Pick(static_cast<int>(placements_.size())))];
    r.name = absl::StrCat("g", next_++, "-stale");
    r.suggested_nodes.reset();
    auto ia = a_->Recover(r, placement);
    auto ib = b_->Recover(r, placement);
    absl::StrAppend(&log_.back(), "recover stale ", r.name, " ", PlacementText(placement), ": ",
                    Text(ia));
    REQUIRE(Text(ia) == Text(ib));
  }

  const hived::ClusterSpec& spec_;
  std::mt19937_64 rng_;
  std::unique_ptr<Scheduler> a_, b_;
  std::vector<std::string> nodes_;
  std::vector<std::string> types_;
  int32_t max_leaves_ = 1;
  std::map<std::string, GroupRequest> requests_;
  std::vector<std::pair<GroupRequest, hived::Placement>> placements_;
  std::vector<std::string> log_;  // the last calls, for failure messages
  int64_t next_ = 0;
  int64_t restores_ = 0;
  int64_t reconfigured_ = 0;
  int64_t placed_ = 0;
  int64_t placed_fractional_ = 0;
  int64_t partial_ = 0;
  bool sharing_ = false;  // some leaf type is shared: half the new groups are fractional
};

void RunSpec(const std::string& path, const hived::ClusterSpec* spec, int64_t default_steps) {
  const int64_t steps = hived::testing::PropertySteps(default_steps);
  const uint64_t end = hived::testing::PropertySeedEnd(1, 4);
  for (uint64_t seed = hived::testing::PropertyFirstSeed(1); seed < end; ++seed) {
    CAPTURE(path, seed);
    Lockstep run(*spec, seed);
    for (int64_t step = 0; step < steps; ++step) {
      CAPTURE(step);
      run.Step();
    }
    run.SaveAndRestore();
    // Not vacuous: groups ran and restores happened.
    CHECK(run.placed() > steps / 20);
    CHECK(run.restores() > steps / 50);
    CHECK(run.reconfigured() > 0);
    if (path == "sharing") {
      CHECK(run.placed_fractional() > steps / 20);
      CHECK(run.partial() > 0);
    }
  }
}

void RunConfig(const std::string& path, int64_t default_steps) {
  auto spec = hived::LoadClusterSpecFile(path);
  REQUIRE(spec.ok());
  RunSpec(path, &*spec, default_steps);
}

TEST_CASE("Persistence: a restored scheduler decides every further call as the saved one",
          "[persistence][property]") {
  RunConfig(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-two-racks-4vc.yaml", 1000);
}

TEST_CASE("Persistence: restore fidelity on two leaf types", "[persistence][property]") {
  RunConfig(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-hetero-2types.yaml", 800);
}

TEST_CASE("Persistence: restore fidelity on HiveD's design config", "[persistence][property]") {
  RunConfig(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/hived-configs/design.yaml", 800);
}

TEST_CASE("Persistence: restore fidelity with fractional and whole-GPU groups mixed",
          "[persistence][property][sharing]") {
  auto spec = hived::LoadClusterSpecString(hived::testdata::kSharingYaml, "sharing.yaml");
  REQUIRE(spec.ok());
  RunSpec("sharing", &*spec, 3000);
}

}  // namespace
