// Property test of reservations and recovery (issue 12 item 3): random Schedule (both
// phases, priorities that preempt), Allocate (of the reserved placement, or of another one),
// Unreserve, Release, CancelPreemption and Recover (valid, corrupted or conflicting
// placements) against a reference model of who holds which leaf:
//  - a group is reserved (a Preempting-phase kPlaced result), preempting or running; a
//    reserved group's leaves are held by no other group, are never a victim's, and a
//    repeated Schedule returns them; Allocate takes only the reserved placement;
//  - every result (outcome, error code) is the one the model predicts from its own state,
//    and after every call `Groups()` shows exactly the model's groups, states and
//    placements, the chains' `reserved` counters count the reserved-and-unused leaves, and
//    `CheckInvariants` holds.
// Knobs: HIVED_PROPERTY_SEEDS, HIVED_PROPERTY_STEPS (support/property_knobs.h).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "unit/scheduler/testdata.h"

namespace hived {
namespace {

using Leaf = std::pair<std::string, int32_t>;  // node, leaf index

enum class Held { kReserved, kPreempting, kRunning };

struct ModelGroup {
  GroupRequest request;
  Placement placement;
  Held held = Held::kRunning;
};

std::set<Leaf> Leaves(const Placement& p) {
  std::set<Leaf> out;
  for (const PodPlacement& pod : p.pods) {
    for (int32_t i : pod.leaf_cell_indices) out.insert({pod.node, i});
  }
  return out;
}

bool SamePlacement(const Placement& a, const Placement& b) {
  if (a.chain != b.chain || a.pods.size() != b.pods.size()) return false;
  for (size_t k = 0; k < a.pods.size(); ++k) {
    if (a.pods[k].node != b.pods[k].node ||
        a.pods[k].leaf_cell_indices != b.pods[k].leaf_cell_indices) {
      return false;
    }
  }
  return true;
}

class Run {
 public:
  Run(const ClusterSpec& spec, uint64_t seed) : rng_(seed) {
    auto s = Scheduler::Create(spec);
    REQUIRE(s.ok());
    s_ = std::move(*s);
    for (const NodeStatus& n : s_->Nodes()) nodes_.emplace_back(n.name, n.total_leaf_cells);
  }

  int64_t reserved_allocations() const { return reserved_allocations_; }
  int64_t refused() const { return refused_; }
  int64_t unreserved() const { return unreserved_; }
  int64_t recovered() const { return recovered_; }

  void Step() {
    if (log_.size() > 16) log_.erase(log_.begin());
    log_.emplace_back();
    const int kind = Pick(100);
    if (kind < 40) {
      ScheduleNew();
    } else if (kind < 50) {
      ScheduleAgain();
    } else if (kind < 65) {
      AllocateSome();
    } else if (kind < 75) {
      UnreserveSome();
    } else if (kind < 88) {
      ReleaseSome();
    } else {
      RecoverSome();
    }
    INFO("last calls:\n" << absl::StrJoin(log_, "\n"));
    Compare();
  }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }

  // Who holds a leaf in the model: the reserver (reserved or preempting) and the user.
  const ModelGroup* Holder(const Leaf& leaf, bool reserver) const {
    for (const auto& [name, g] : groups_) {
      if ((g.held != Held::kRunning) == reserver && Leaves(g.placement).count(leaf)) return &g;
    }
    return nullptr;
  }

  std::string PickName(std::initializer_list<Held> states) {
    std::vector<std::string> names;
    for (const auto& [name, g] : groups_) {
      if (std::find(states.begin(), states.end(), g.held) != states.end()) names.push_back(name);
    }
    if (names.empty() || Pick(8) == 0) return absl::StrCat("g", next_);  // unknown
    return names[static_cast<size_t>(Pick(static_cast<int>(names.size())))];
  }

  GroupRequest RandomRequest() {
    static const char* const kVcs[] = {"VC1", "VC2", "VC3"};
    static const Priority kPriorities[] = {kOpportunisticPriority, 0, 1, 5, 1000};
    static const int32_t kSizes[] = {1, 2, 4, 8};
    GroupRequest r;
    r.name = absl::StrCat("g", next_++);
    r.vc = kVcs[Pick(3)];
    r.priority = kPriorities[Pick(5)];
    r.lazy_preemption = Pick(4) == 0;
    r.members = {{1 + Pick(3), kSizes[Pick(4)]}};
    return r;
  }

  void ScheduleNew() {
    ScheduleOn(RandomRequest(), Pick(4) == 0 ? Phase::kFiltering : Phase::kPreempting);
  }

  void ScheduleAgain() {
    const std::string name = PickName({Held::kReserved, Held::kPreempting});
    auto it = groups_.find(name);
    if (it == groups_.end()) return;
    ScheduleOn(it->second.request, Pick(3) == 0 ? Phase::kFiltering : Phase::kPreempting);
  }

  void ScheduleOn(const GroupRequest& r, Phase phase) {
    auto res = s_->Schedule(r, phase);
    absl::StrAppend(&log_.back(), "schedule ", r.name, " ", r.vc, " p", r.priority,
                    phase == Phase::kFiltering ? " F" : " P", ": ",
                    res.ok() ? OutcomeName(res->outcome) : res.status().ToString());
    REQUIRE(res.ok());
    for (const PodPlacement& pod : res->placement.pods)
      absl::StrAppend(&log_.back(), " ", pod.node, ":", absl::StrJoin(pod.leaf_cell_indices, ","));
    auto existing = groups_.find(r.name);
    if (existing != groups_.end()) {
      // A repeated Schedule returns the reservation (no health changes in this test).
      REQUIRE(SamePlacement(res->placement, existing->second.placement));
      if (existing->second.held == Held::kReserved) REQUIRE(res->outcome == Outcome::kPlaced);
      if (existing->second.held == Held::kPreempting) {
        bool victims = false;
        for (const Leaf& l : Leaves(existing->second.placement))
          victims |= Holder(l, false) != nullptr;
        REQUIRE(res->outcome == (victims ? Outcome::kPreempting : Outcome::kPlaced));
        // A Preempting-phase kPlaced reserves, whatever path led to it (issue 27).
        if (!victims && phase == Phase::kPreempting) existing->second.held = Held::kReserved;
      }
      REQUIRE(res->cancelled.empty());
      return;
    }
    if (res->outcome != Outcome::kPlaced && res->outcome != Outcome::kPreempting) {
      REQUIRE(res->cancelled.empty());
      return;
    }
    const std::set<Leaf> leaves = Leaves(res->placement);
    // Never a reserved group's leaf, never a victim that holds a reservation.
    std::set<std::string> cancelled;
    std::set<std::string> victims;
    for (const Leaf& l : leaves) {
      const ModelGroup* rv = Holder(l, true);
      if (rv != nullptr) {
        REQUIRE(rv->held != Held::kReserved);
        cancelled.insert(rv->request.name);
      }
      const ModelGroup* u = Holder(l, false);
      if (u != nullptr) victims.insert(u->request.name);
    }
    for (const std::string& v : res->victims) REQUIRE(groups_.at(v).held == Held::kRunning);
    const std::set<std::string> reported(res->victims.begin(), res->victims.end());
    if (phase == Phase::kFiltering) {
      // Nothing is reserved or cancelled: a reservation on the leaves would be kWaiting;
      // groups that would be lazily downgraded are reported as victims too.
      REQUIRE(cancelled.empty());
      REQUIRE(res->cancelled.empty());
      REQUIRE(std::includes(reported.begin(), reported.end(), victims.begin(), victims.end()));
      REQUIRE((res->outcome == Outcome::kPlaced) == reported.empty());
      return;
    }
    REQUIRE(reported == victims);
    REQUIRE((res->outcome == Outcome::kPlaced) == victims.empty());
    // Every cancellation is listed in the result that made it (issue 27).
    REQUIRE(std::set<std::string>(res->cancelled.begin(), res->cancelled.end()) == cancelled);
    for (const std::string& c : cancelled) groups_.erase(c);
    ModelGroup g;
    g.request = r;
    g.placement = res->placement;
    g.held = res->outcome == Outcome::kPlaced ? Held::kReserved : Held::kPreempting;
    groups_[r.name] = g;
  }

  void AllocateSome() {
    const std::string name = PickName({Held::kReserved, Held::kPreempting, Held::kRunning});
    auto it = groups_.find(name);
    GroupRequest r;
    Placement p;
    if (it == groups_.end()) {
      r = RandomRequest();
    } else {
      r = it->second.request;
      p = it->second.placement;
    }
    // Sometimes another placement than reserved: one leaf index moved.
    const bool other = !p.pods.empty() && Pick(4) == 0;
    if (other) p.pods[0].leaf_cell_indices[0] = (p.pods[0].leaf_cell_indices[0] + 1) % 8;
    auto info = s_->Allocate(r, p);
    absl::StrAppend(&log_.back(), "allocate ", r.name, other ? " (other)" : "", ": ",
                    info.status().ToString());
    if (it == groups_.end()) {  // no reservation
      REQUIRE(info.status().code() == absl::StatusCode::kFailedPrecondition);
      return;
    }
    ModelGroup& g = it->second;
    if (g.held == Held::kRunning) {
      REQUIRE(info.status().code() == absl::StatusCode::kAlreadyExists);
      return;
    }
    const bool same = SamePlacement(p, g.placement);
    bool victims = false;
    for (const Leaf& l : Leaves(g.placement)) victims |= Holder(l, false) != nullptr;
    if (!same || victims) {
      REQUIRE(info.status().code() == absl::StatusCode::kFailedPrecondition);
      ++refused_;
      return;
    }
    REQUIRE(info.ok());
    if (g.held == Held::kReserved) ++reserved_allocations_;
    g.held = Held::kRunning;
  }

  void UnreserveSome() {
    const std::string name = PickName({Held::kReserved, Held::kPreempting, Held::kRunning});
    const bool cancel = Pick(4) == 0;
    absl::Status st = cancel ? s_->CancelPreemption(name) : s_->Unreserve(name);
    absl::StrAppend(&log_.back(), cancel ? "cancel " : "unreserve ", name, ": ", st.ToString());
    auto it = groups_.find(name);
    if (it == groups_.end()) {
      REQUIRE(st.code() == absl::StatusCode::kNotFound);
      return;
    }
    const bool ok =
        it->second.held == Held::kPreempting || (!cancel && it->second.held == Held::kReserved);
    REQUIRE(st.ok() == ok);
    if (!ok) {
      REQUIRE(st.code() == absl::StatusCode::kFailedPrecondition);
      return;
    }
    ++unreserved_;
    groups_.erase(it);
  }

  void ReleaseSome() {
    const std::string name = PickName({Held::kReserved, Held::kPreempting, Held::kRunning});
    absl::Status st = s_->Release(name);
    absl::StrAppend(&log_.back(), "release ", name, ": ", st.ToString());
    auto it = groups_.find(name);
    if (it == groups_.end()) {
      REQUIRE(st.code() == absl::StatusCode::kNotFound);
    } else if (it->second.held != Held::kRunning) {
      REQUIRE(st.code() == absl::StatusCode::kFailedPrecondition);
    } else {
      REQUIRE(st.ok());
      groups_.erase(it);
    }
  }

  // A placement from elsewhere: random free-or-not leaves of one node, sometimes corrupted.
  void RecoverSome() {
    GroupRequest r = RandomRequest();
    r.members = {{1, 1 + Pick(2)}};
    const auto& [node, total] = nodes_[static_cast<size_t>(Pick(static_cast<int>(nodes_.size())))];
    Placement p;
    PodPlacement pod;
    pod.node = node;
    pod.leaf_cell_number = r.members[0].leaf_cell_number;
    for (int32_t i = 0; i < pod.leaf_cell_number; ++i) pod.leaf_cell_indices.push_back(Pick(total));
    const int corrupt = Pick(6);
    if (corrupt == 0) pod.leaf_cell_indices.back() = 99;
    if (corrupt == 1) pod.node = "no-such-node";
    p.pods = {pod};
    auto info = s_->Recover(r, p);
    absl::StrAppend(&log_.back(), "recover ", r.name, " ", pod.node, ":",
                    absl::StrJoin(pod.leaf_cell_indices, ","), ": ", info.status().ToString());
    const std::set<Leaf> leaves = Leaves(p);
    if (corrupt <= 1 || leaves.size() != pod.leaf_cell_indices.size()) {
      REQUIRE(info.status().code() == absl::StatusCode::kInvalidArgument);
      REQUIRE(info.status().message().find("group " + r.name + ", pod 0") != std::string::npos);
      return;
    }
    bool held = false;
    for (const Leaf& l : leaves) held |= Holder(l, true) != nullptr || Holder(l, false) != nullptr;
    if (held) {
      REQUIRE(info.status().code() == absl::StatusCode::kFailedPrecondition);
      return;
    }
    REQUIRE(info.ok());
    ++recovered_;
    ModelGroup g;
    g.request = r;
    g.placement = p;
    g.placement.chain = s_->GetGroup(r.name).placement.chain;
    groups_[r.name] = g;
  }

  void Compare() {
    REQUIRE(s_->CheckInvariants().ok());
    const std::vector<GroupStatus> live = s_->Groups();
    REQUIRE(live.size() == groups_.size());
    int32_t reserved_free = 0;
    for (const GroupStatus& g : live) {
      CAPTURE(g.name, GroupStateName(g.state));
      auto it = groups_.find(g.name);
      REQUIRE(it != groups_.end());
      const ModelGroup& m = it->second;
      REQUIRE(SamePlacement(g.placement, m.placement));
      switch (m.held) {
        case Held::kReserved:
          REQUIRE(g.state == GroupState::kReserved);
          break;
        case Held::kPreempting:
          REQUIRE(g.state == GroupState::kPreempting);
          break;
        case Held::kRunning: {
          bool preempted = false;
          for (const Leaf& l : Leaves(m.placement)) preempted |= Holder(l, true) != nullptr;
          REQUIRE(g.state == (preempted         ? GroupState::kBeingPreempted
                              : g.priority >= 0 ? GroupState::kAllocated
                                                : GroupState::kOpportunistic));
          break;
        }
      }
      if (m.held != Held::kRunning) {
        for (const Leaf& l : Leaves(m.placement)) reserved_free += Holder(l, false) ? 0 : 1;
      }
    }
    // Leaves are held exactly once per role.
    std::map<Leaf, int> users, reservers;
    for (const auto& [name, g] : groups_) {
      for (const Leaf& l : Leaves(g.placement)) ++(g.held == Held::kRunning ? users : reservers)[l];
    }
    for (const auto& [l, n] : users) REQUIRE(n == 1);
    for (const auto& [l, n] : reservers) REQUIRE(n == 1);
    int32_t summary_reserved = 0;
    for (const ChainSummary& c : s_->ChainSummaries()) summary_reserved += c.leaves.reserved;
    REQUIRE(summary_reserved == reserved_free);
  }

  std::mt19937_64 rng_;
  std::unique_ptr<Scheduler> s_;
  std::vector<std::pair<std::string, int32_t>> nodes_;
  std::map<std::string, ModelGroup> groups_;
  std::vector<std::string> log_;
  int64_t next_ = 0;
  int64_t reserved_allocations_ = 0, refused_ = 0, unreserved_ = 0, recovered_ = 0;
};

TEST_CASE("Property: reservations and recovery agree with a model of who holds which leaf",
          "[property][scheduler]") {
  auto spec = LoadClusterSpecString(testdata::kFourRacksYaml, "four-racks.yaml");
  REQUIRE(spec.ok());
  const int64_t steps = testing::PropertySteps(1500);
  int64_t reserved = 0, refused = 0, unreserved = 0, recovered = 0;
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 6);
       ++seed) {
    CAPTURE(seed);
    Run run(*spec, seed);
    for (int64_t i = 0; i < steps; ++i) run.Step();
    reserved += run.reserved_allocations();
    refused += run.refused();
    unreserved += run.unreserved();
    recovered += run.recovered();
  }
  // The sequences exercised what the test claims.
  CAPTURE(reserved, refused, unreserved, recovered);
  CHECK(reserved > 0);
  CHECK(refused > 0);
  CHECK(unreserved > 0);
  CHECK(recovered > 0);
}

}  // namespace
}  // namespace hived
