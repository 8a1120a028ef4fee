// Property test of the public Scheduler API (issue 5): random schedule / allocate /
// release / cancel / node-health steps on three clusters, `CheckInvariants()` after every
// step, and against a simple reference model of each VC's reserved and used leaves:
//  - a guaranteed 1-leaf request of a VC that still has an unused reserved leaf of that type
//    (all nodes healthy) is never left waiting: other VCs cannot take the VC's cells;
//  - victims are whole groups, only lower-priority groups of the same VC or opportunistic
//    groups (src/scheduler_impl.h invariant 6);
//  - the Filtering phase changes no group;
//  - releasing everything returns the capacity view to its initial state (invariant 7).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/cluster_spec.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/property_knobs.h"

namespace {

using hived::GroupRequest;
using hived::GroupState;
using hived::GroupStatus;
using hived::Outcome;
using hived::Phase;
using hived::Scheduler;

// What the spec says about a VC: its non-pinned reserved leaves per leaf type and its
// pinned cell ids.
struct VcModel {
  std::string name;
  std::map<std::string, int32_t> reserved;  // leaf type -> non-pinned reserved leaves
  std::vector<std::string> pinned;
};

struct SpecModel {
  std::vector<VcModel> vcs;
  std::vector<std::string> leaf_types;             // every leaf type, config order
  std::map<std::string, int32_t> max_node_leaves;  // per leaf type
};

SpecModel BuildSpecModel(const hived::ClusterSpec& spec) {
  std::map<std::string, const hived::CellTypeSpec*> types;
  for (const auto& t : spec.cell_types) types[t.name] = &t;
  // Leaf count and leaf type of a cell type.
  std::function<std::pair<int32_t, std::string>(const std::string&)> leaves =
      [&](const std::string& type) -> std::pair<int32_t, std::string> {
    auto it = types.find(type);
    if (it == types.end()) return {1, type};
    auto [n, leaf] = leaves(it->second->child_cell_type);
    return {n * it->second->child_cell_number, leaf};
  };
  SpecModel model;
  for (const auto& t : spec.cell_types) {
    auto [n, leaf] = leaves(t.name);
    if (std::find(model.leaf_types.begin(), model.leaf_types.end(), leaf) ==
        model.leaf_types.end()) {
      model.leaf_types.push_back(leaf);
    }
    if (t.is_node_level) {
      model.max_node_leaves[leaf] = std::max(model.max_node_leaves[leaf], n);
    }
  }
  for (const auto& vc : spec.virtual_clusters) {
    VcModel v;
    v.name = vc.name;
    for (const auto& cell : vc.virtual_cells) {
      const std::string last = cell.cell_type.substr(cell.cell_type.rfind('.') + 1);
      auto [n, leaf] = leaves(last);
      v.reserved[leaf] += n * cell.cell_number;
    }
    for (const auto& p : vc.pinned_cells) v.pinned.push_back(p.pinned_cell_id);
    model.vcs.push_back(std::move(v));
  }
  return model;
}

int32_t LeafCount(const hived::Placement& placement) {
  int32_t n = 0;
  for (const auto& pod : placement.pods) n += static_cast<int32_t>(pod.leaf_cell_indices.size());
  return n;
}

struct Counters {
  int64_t placed = 0;
  int64_t preempting = 0;
  int64_t waiting = 0;
  int64_t guarantee_checks = 0;
  int64_t victims = 0;
  int64_t lazy_downgrades = 0;
};

class PropertyRun {
 public:
  PropertyRun(const hived::ClusterSpec& spec, uint64_t seed)
      : model_(BuildSpecModel(spec)), rng_(seed) {
    auto s = Scheduler::Create(spec);
    REQUIRE(s.ok());
    scheduler_ = std::move(*s);
    for (const auto& n : scheduler_->Nodes()) nodes_.push_back(n.name);
    initial_capacity_ = CapacityKey();
    initial_text_ = CapacityText();
  }

  void Run(int steps) {
    for (int step = 0; step < steps; ++step) {
      CAPTURE(step);
      const int op = Pick(100);
      if (op < 55) {
        ScheduleRandom();
      } else if (op < 75) {
        ReleaseRandom();
      } else if (op < 82) {
        CancelRandom();
      } else if (op < 92) {
        CompletePreempting();
      } else {
        FlipHealth();
      }
      const absl::Status inv = scheduler_->CheckInvariants();
      INFO(inv.ToString());
      REQUIRE(inv.ok());
    }
    // Heal, drop every group, and compare with the initial capacity view (invariant 7).
    for (const std::string& node : std::set<std::string>(bad_.begin(), bad_.end())) {
      REQUIRE(scheduler_->SetNodeHealthy(node, true).ok());
    }
    bad_.clear();
    for (const GroupStatus& g : scheduler_->Groups()) {
      if (g.state == GroupState::kPreempting) {
        REQUIRE(scheduler_->CancelPreemption(g.name).ok());
      }
    }
    for (const GroupStatus& g : scheduler_->Groups()) {
      REQUIRE(scheduler_->Release(g.name).ok());
    }
    REQUIRE(scheduler_->Groups().empty());
    REQUIRE(scheduler_->CheckInvariants().ok());
    if (CapacityKey() != initial_capacity_) {
      INFO("capacity at the start:\n"
           << initial_text_ << "after releasing everything:\n"
           << CapacityText());
      CHECK(CapacityKey() == initial_capacity_);
    }
    for (const auto& n : scheduler_->Nodes()) CHECK(n.free_leaf_cells == n.total_leaf_cells);
  }

  const Counters& counters() const { return counters_; }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string CapacityText() const {
    std::string rows;
    for (const auto& c : scheduler_->Capacity()) {
      absl::StrAppend(&rows, c.chain, " L", c.level, " total=", c.total, " free=", c.free,
                      " obtainable=", c.obtainable, " bad_free=", c.bad_free,
                      " vc_reserved=", c.vc_reserved, " vc_unbound=", c.vc_unbound, "\n");
    }
    return rows;
  }

  std::vector<int32_t> CapacityKey() const {
    std::vector<int32_t> key;
    for (const auto& c : scheduler_->Capacity()) {
      key.insert(key.end(),
                 {c.level, c.total, c.free, c.obtainable, c.bad_free, c.vc_reserved, c.vc_unbound});
    }
    return key;
  }

  // Leaves of `leaf_type` the VC's guaranteed work holds in its non-pinned cells, counted
  // generously (a being-preempted group and its preemptor may both count the same leaves):
  // the guarantee check below only fires when even this over-count leaves a free leaf.
  int32_t GuaranteedUse(const std::string& vc, const std::string& leaf_type) const {
    int32_t used = 0;
    for (const GroupStatus& g : snapshot_) {
      if (g.vc != vc) continue;
      auto req = requests_.find(g.name);
      if (req == requests_.end() || !req->second.pinned_cell_id.empty()) continue;
      if (g.priority < 0) continue;  // opportunistic or downgraded: no VC cells
      if (g.state == GroupState::kAbsent) continue;
      // Leaves of other types: the placement's node decides; count the group only when its
      // chain holds `leaf_type` leaves (the request's type, or every type when unset).
      if (!req->second.leaf_cell_type.empty() && req->second.leaf_cell_type != leaf_type) continue;
      used += LeafCount(g.placement);
    }
    return used;
  }

  GroupRequest RandomRequest() {
    const VcModel& vc =
        model_.vcs[static_cast<std::size_t>(Pick(static_cast<int>(model_.vcs.size())))];
    GroupRequest req;
    req.name = absl::StrCat("g", next_id_++);
    req.vc = vc.name;
    const int prio = Pick(10);
    req.priority = prio < 3 ? hived::kOpportunisticPriority : prio < 9 ? Pick(4) : 1000;
    req.lazy_preemption = Pick(3) == 0;
    // A leaf type the VC holds (or any type for opportunistic groups); sometimes none.
    std::vector<std::string> types;
    for (const auto& [t, n] : vc.reserved) types.push_back(t);
    if (req.priority < 0 || types.empty()) types = model_.leaf_types;
    const std::string type = types[static_cast<std::size_t>(Pick(static_cast<int>(types.size())))];
    if (Pick(4) != 0) req.leaf_cell_type = type;
    if (req.priority >= 0 && !vc.pinned.empty() && Pick(6) == 0) {
      req.pinned_cell_id =
          vc.pinned[static_cast<std::size_t>(Pick(static_cast<int>(vc.pinned.size())))];
      req.leaf_cell_type.clear();
    }
    const int32_t max_leaves =
        model_.max_node_leaves.count(type) ? model_.max_node_leaves.at(type) : 1;
    std::vector<int32_t> sizes;
    for (int32_t s = 1; s <= max_leaves; s *= 2) sizes.push_back(s);
    const int kinds = Pick(5) == 0 ? 2 : 1;
    for (int k = 0; k < kinds; ++k) {
      const int32_t size = sizes[static_cast<std::size_t>(Pick(static_cast<int>(sizes.size())))];
      bool dup = false;
      for (const auto& m : req.members) dup = dup || m.leaf_cell_number == size;
      if (dup) continue;
      req.members.push_back({1 + (Pick(4) == 0 ? Pick(3) : 0), size});
    }
    if (Pick(10) == 0) {
      std::vector<std::string> suggested;
      for (const std::string& n : nodes_) {
        if (Pick(2) == 0) suggested.push_back(n);
      }
      req.suggested_nodes = suggested;
    }
    return req;
  }

  void ScheduleRandom() {
    snapshot_ = scheduler_->Groups();
    GroupRequest req = RandomRequest();
    // Often a plain 1-leaf guaranteed request, the case the guarantee check covers.
    const bool simple = Pick(3) == 0;
    if (simple) {
      const VcModel& vc =
          model_.vcs[static_cast<std::size_t>(Pick(static_cast<int>(model_.vcs.size())))];
      if (!vc.reserved.empty()) {
        auto it = vc.reserved.begin();
        std::advance(it, Pick(static_cast<int>(vc.reserved.size())));
        req.vc = vc.name;
        req.priority = Pick(3);
        req.leaf_cell_type = it->first;
        req.pinned_cell_id.clear();
        req.members = {{1, 1}};
        req.suggested_nodes.reset();
      }
    }
    const Phase phase = Pick(10) == 0 ? Phase::kFiltering : Phase::kPreempting;

    // The reference model's verdict before the call.
    bool must_not_wait = false;
    if (phase == Phase::kPreempting && bad_.empty() && req.priority >= 0 &&
        req.pinned_cell_id.empty() && !req.suggested_nodes && req.members.size() == 1 &&
        req.members[0].pod_number == 1 && req.members[0].leaf_cell_number == 1 &&
        !req.leaf_cell_type.empty()) {
      for (const VcModel& vc : model_.vcs) {
        if (vc.name != req.vc) continue;
        auto r = vc.reserved.find(req.leaf_cell_type);
        if (r != vc.reserved.end() && r->second - GuaranteedUse(vc.name, req.leaf_cell_type) >= 1) {
          must_not_wait = true;
        }
      }
    }
    // Running priority and VC of every group before the call, for the victim rule.
    std::map<std::string, const GroupStatus*> before;
    for (const GroupStatus& g : snapshot_) before.emplace(g.name, &g);

    absl::StatusOr<hived::ScheduleResult> result = scheduler_->Schedule(req, phase);
    if (trace_) {
      std::string where;
      if (result.ok()) {
        for (const auto& pod : result->placement.pods) {
          absl::StrAppend(&where, " ", pod.node, ":", absl::StrJoin(pod.leaf_cell_indices, ","));
        }
      }
      std::fprintf(
          stderr, "%s    # -> %s%s\n", StepYaml(req, phase).c_str(),
          result.ok() ? std::to_string(static_cast<int>(result->outcome)).c_str() : "error",
          where.c_str());
    }
    if (!result.ok()) {
      INFO(result.status().ToString());
      CHECK(result.status().code() != absl::StatusCode::kInternal);
      CHECK(!must_not_wait);
      return;
    }
    if (phase == Phase::kFiltering) {
      for (const GroupStatus& g : snapshot_) {
        const GroupStatus now = scheduler_->GetGroup(g.name);
        CHECK(now.state == g.state);
        CHECK(now.priority == g.priority);
      }
      CHECK(scheduler_->GetGroup(req.name).state == GroupState::kAbsent);
      return;
    }
    requests_[req.name] = req;
    if (must_not_wait) {
      ++counters_.guarantee_checks;
      INFO("VC " << req.vc << " has a free reserved " << req.leaf_cell_type
                 << " leaf, yet: " << result->reason);
      CHECK((result->outcome == Outcome::kPlaced || result->outcome == Outcome::kPreempting));
    }
    switch (result->outcome) {
      case Outcome::kPlaced: {
        ++counters_.placed;
        CHECK(result->victims.empty());
        absl::StatusOr<hived::AllocateInfo> info = scheduler_->Allocate(req, result->placement);
        INFO(info.status().ToString());
        REQUIRE(info.ok());
        CHECK(!info->downgraded);
        CHECK(scheduler_->GetGroup(req.name).state ==
              (req.priority < 0 ? GroupState::kOpportunistic : GroupState::kAllocated));
        break;
      }
      case Outcome::kPreempting: {
        ++counters_.preempting;
        CHECK(req.priority >= 0);  // opportunistic groups never preempt
        REQUIRE(!result->victims.empty());
        std::set<std::string> unique(result->victims.begin(), result->victims.end());
        CHECK(unique.size() == result->victims.size());
        for (const std::string& v : result->victims) {
          ++counters_.victims;
          auto it = before.find(v);
          REQUIRE(it != before.end());
          const GroupStatus& old = *it->second;
          INFO("victim " << v << " of " << req.name);
          // Invariant 6: a lower-priority group of the same VC, or an opportunistic one.
          CHECK(old.state != GroupState::kPreempting);
          CHECK((old.priority < 0 || (old.vc == req.vc && old.priority < req.priority)));
          // A victim is a whole group: it keeps every pod until released.
          const GroupStatus now = scheduler_->GetGroup(v);
          CHECK(now.state == GroupState::kBeingPreempted);
          CHECK(LeafCount(now.placement) == LeafCount(old.placement));
        }
        CHECK(scheduler_->GetGroup(req.name).state == GroupState::kPreempting);
        break;
      }
      case Outcome::kWaiting:
      case Outcome::kInfeasible:
        ++counters_.waiting;
        CHECK(!result->reason.empty());
        CHECK(scheduler_->GetGroup(req.name).state == GroupState::kAbsent);
        break;
    }
    // Lazy downgrades happen only to lower-priority lazily preemptible groups of the VC.
    for (const auto& [name, old_ptr] : before) {
      const GroupStatus& old = *old_ptr;
      if (old.priority < 0 || old.state != GroupState::kAllocated) continue;
      const GroupStatus now = scheduler_->GetGroup(name);
      if (now.state == GroupState::kOpportunistic) {
        ++counters_.lazy_downgrades;
        INFO("downgraded " << name << " by " << req.name);
        CHECK(requests_.at(name).lazy_preemption);
        CHECK(old.vc == req.vc);
        CHECK(old.priority < req.priority);
      }
    }
  }

  // The step as a scenario step (hived/scenario.h), for HIVED_PROPERTY_TRACE.
  static std::string StepYaml(const GroupRequest& req, Phase phase) {
    std::string out = absl::StrCat("  - schedule: {group: ", req.name, ", vc: ", req.vc,
                                   ", priority: ", req.priority);
    if (!req.leaf_cell_type.empty()) absl::StrAppend(&out, ", leafCellType: ", req.leaf_cell_type);
    if (!req.pinned_cell_id.empty()) absl::StrAppend(&out, ", pinnedCellId: ", req.pinned_cell_id);
    if (req.lazy_preemption) absl::StrAppend(&out, ", lazyPreemption: true");
    absl::StrAppend(&out, ", members: [");
    for (std::size_t i = 0; i < req.members.size(); ++i) {
      absl::StrAppend(&out, i ? ", " : "", "{podNumber: ", req.members[i].pod_number,
                      ", leafCellNumber: ", req.members[i].leaf_cell_number, "}");
    }
    absl::StrAppend(&out, "]");
    if (req.suggested_nodes) {
      absl::StrAppend(&out, ", suggestedNodes: [", absl::StrJoin(*req.suggested_nodes, ", "), "]");
    }
    if (phase == Phase::kFiltering)
      absl::StrAppend(&out, ", phase: filtering}\n    allocate: false\n");
    else
      absl::StrAppend(&out, "}\n");
    return out;
  }

  std::optional<GroupStatus> RandomGroup(bool preempting) {
    std::vector<GroupStatus> candidates;
    for (const GroupStatus& g : snapshot_) {
      if ((g.state == GroupState::kPreempting) == preempting) candidates.push_back(g);
    }
    if (candidates.empty()) return std::nullopt;
    GroupStatus g = candidates[static_cast<std::size_t>(Pick(static_cast<int>(candidates.size())))];
    // The snapshot is from the last schedule step: check that the group is still as seen.
    const GroupState now = scheduler_->GetGroup(g.name).state;
    if (now == GroupState::kAbsent || (now == GroupState::kPreempting) != preempting) {
      return std::nullopt;
    }
    return g;
  }

  void ReleaseRandom() {
    // Prefer victims so that preemptions complete.
    std::optional<GroupStatus> g;
    if (Pick(2) == 0) {
      for (const GroupStatus& x : snapshot_) {
        if (x.state == GroupState::kBeingPreempted &&
            scheduler_->GetGroup(x.name).state == GroupState::kBeingPreempted) {
          g = x;
          break;
        }
      }
    }
    if (!g) g = RandomGroup(/*preempting=*/false);
    if (!g) return;
    if (trace_) std::fprintf(stderr, "  - release: %s\n", g->name.c_str());
    REQUIRE(scheduler_->Release(g->name).ok());
    CHECK(scheduler_->GetGroup(g->name).state == GroupState::kAbsent);
    CHECK(!scheduler_->Release(g->name).ok());
  }

  void CancelRandom() {
    std::optional<GroupStatus> g = RandomGroup(/*preempting=*/true);
    if (!g) return;
    if (trace_) std::fprintf(stderr, "  - cancel: %s\n", g->name.c_str());
    REQUIRE(scheduler_->CancelPreemption(g->name).ok());
    CHECK(scheduler_->GetGroup(g->name).state == GroupState::kAbsent);
    for (const GroupStatus& x : scheduler_->Groups()) {
      // Its victims run on (lazily downgraded ones keep naming it as their preemptor); a
      // group still being preempted names a live preemptor.
      if (x.state == GroupState::kBeingPreempted) {
        std::string others;
        for (const GroupStatus& y : scheduler_->Groups()) {
          if (y.state == GroupState::kPreempting) absl::StrAppend(&others, " ", y.name);
        }
        INFO("victim " << x.name << " names preemptor " << x.preemptor << " after cancelling "
                       << g->name << "; preempting groups:" << others);
        CHECK(scheduler_->GetGroup(x.preemptor).state == GroupState::kPreempting);
      }
    }
  }

  // Re-schedules a preempting group; allocates it when its victims are gone.
  void CompletePreempting() {
    std::optional<GroupStatus> g = RandomGroup(/*preempting=*/true);
    if (!g) return;
    const GroupRequest& req = requests_.at(g->name);
    absl::StatusOr<hived::ScheduleResult> r = scheduler_->Schedule(req, Phase::kPreempting);
    if (trace_) {
      std::fprintf(stderr, "%s    # -> %d\n", StepYaml(req, Phase::kPreempting).c_str(),
                   r.ok() ? static_cast<int>(r->outcome) : -1);
    }
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    if (r->outcome == Outcome::kPlaced) {
      absl::StatusOr<hived::AllocateInfo> info = scheduler_->Allocate(req, r->placement);
      INFO(info.status().ToString());
      REQUIRE(info.ok());
      CHECK(scheduler_->GetGroup(req.name).state == GroupState::kAllocated);
    }
  }

  void FlipHealth() {
    if (!bad_.empty() && Pick(2) == 0) {
      const std::size_t i = static_cast<std::size_t>(Pick(static_cast<int>(bad_.size())));
      if (trace_) std::fprintf(stderr, "  - setNodeHealthy: %s\n", bad_[i].c_str());
      REQUIRE(scheduler_->SetNodeHealthy(bad_[i], true).ok());
      bad_.erase(bad_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
    if (bad_.size() >= 3) return;
    const std::string& node =
        nodes_[static_cast<std::size_t>(Pick(static_cast<int>(nodes_.size())))];
    if (std::find(bad_.begin(), bad_.end(), node) != bad_.end()) return;
    if (trace_) std::fprintf(stderr, "  - setNodeBad: %s\n", node.c_str());
    REQUIRE(scheduler_->SetNodeHealthy(node, false).ok());
    bad_.push_back(node);
  }

  SpecModel model_;
  std::mt19937_64 rng_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<std::string> nodes_;
  std::vector<std::string> bad_;
  std::map<std::string, GroupRequest> requests_;
  std::vector<GroupStatus> snapshot_;  // Groups() at the start of the last schedule step
  std::vector<int32_t> initial_capacity_;
  std::string initial_text_;
  int64_t next_id_ = 0;
  // HIVED_PROPERTY_TRACE=1 prints every step to stderr, to turn a failure into a scenario.
  bool trace_ = std::getenv("HIVED_PROPERTY_TRACE") != nullptr;
  Counters counters_;
};

void RunProperty(const std::string& config) {
  absl::StatusOr<hived::ClusterSpec> spec = hived::LoadClusterSpecFile(config);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  // Every check below is per seed, so fewer seeds under a sanitizer only shorten the walk.
  constexpr int64_t kSeeds = ::hived::testing::kSanitizedBuild ? 5 : 20;
  const uint64_t seed = GENERATE(
      range(::hived::testing::PropertyFirstSeed(1), ::hived::testing::PropertySeedEnd(1, kSeeds)));
  CAPTURE(config, seed);
  PropertyRun run(*spec, seed);
  run.Run(static_cast<int>(::hived::testing::PropertySteps(5000)));
  // The random walk must exercise what it checks.
  CHECK(run.counters().placed > 100);
  CHECK(run.counters().guarantee_checks > 20);
  CHECK(run.counters().preempting > 0);
}

}  // namespace

TEST_CASE("Scheduler: invariants, VC guarantee and victim rules hold on random steps (design.yaml)",
          "[scheduler][property]") {
  RunProperty(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/hived-configs/design.yaml");
}

TEST_CASE(
    "Scheduler: invariants, VC guarantee and victim rules hold on random steps (2 racks, 4 VCs)",
    "[scheduler][property]") {
  RunProperty(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-two-racks-4vc.yaml");
}

TEST_CASE("Scheduler: invariants, VC guarantee and victim rules hold on random steps (2 GPU types)",
          "[scheduler][property]") {
  RunProperty(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-hetero-2types.yaml");
}
