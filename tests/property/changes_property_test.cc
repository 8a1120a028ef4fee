// Property test of the state version and `Changes(since)` (issue 29 item 3): random
// mutations (Schedule in both phases with preemption and lazy downgrades, Allocate,
// Unreserve, CancelPreemption, Release, Recover, SetNodeHealthy), with views taken at
// random versions. After every step, for each view kept: re-reading the groups and nodes
// `Changes(view's version)` names (GetGroup, GetNode) turns the old view into the current
// one, exactly (`Groups()` and `Nodes()`); a step that does not move the version leaves
// every view as it was. Also the paged `Groups(after, limit)` read page by page equals
// `Groups()`, and every status `Groups()` lists equals the group's `GetGroup` (the list is
// served from a snapshot kept up to date from the change log, src/groups_snapshot.h).
// Knobs: HIVED_PROPERTY_SEEDS, HIVED_PROPERTY_STEPS (support/property_knobs.h).
#include <algorithm>
#include <cstdint>
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
#include "support/catch.h"
#include "support/property_knobs.h"
#include "support/testdata.h"
#include "unit/sharing/mig_cluster.h"

namespace hived {
namespace {

std::string Describe(const GroupStatus& g) {
  std::string s = absl::StrCat(g.name, "|", g.vc, "|", static_cast<int>(g.state), "|", g.priority,
                               "|", g.request.priority, "|", g.preemptor, "|", g.downgrade_reason,
                               "|", g.placement.chain, "|");
  for (const PodPlacement& p : g.placement.pods) {
    absl::StrAppend(&s, p.node, ":", absl::StrJoin(p.leaf_cell_indices, ","), "/",
                    absl::StrJoin(p.preassigned_cell_types, ","), ";");
  }
  return s;
}

// Every field, for comparing the served group list (src/groups_snapshot.h) with GetGroup.
std::string DescribeAll(const GroupStatus& g) {
  std::string s =
      absl::StrCat(Describe(g), "|", g.request.vc, "|", g.request.members.size(), "|",
                   g.reserved_at.value_or(-1), "|", g.reservation_deadline.value_or(-1));
  for (const PodIdentity& p : g.pods) absl::StrAppend(&s, "|", p.index, ":", p.name, ":", p.uid);
  for (const PodPlacement& p : g.placement.pods)
    absl::StrAppend(&s, "|", p.mig_profile, "@", p.mig_start);
  return s;
}

// `Groups()` and its pages are served from a snapshot brought up to date from the change log:
// each status must equal the group's own (`GetGroup`), and every group known alive be there.
void RequireGroupsCurrent(const Scheduler& s, const std::vector<std::string>& known) {
  std::vector<std::string> listed;
  for (const GroupStatus& g : s.Groups()) {
    INFO(g.name);
    REQUIRE(DescribeAll(g) == DescribeAll(s.GetGroup(g.name)));
    // A holder (sharing/sharing.h: "hived-share/<n>") is listed as the core's group it is.
    if (g.name.rfind("hived-share/", 0) != 0) listed.push_back(g.name);
  }
  std::vector<std::string> alive;
  for (const std::string& name : known) {
    if (s.GetGroup(name).state != GroupState::kAbsent) alive.push_back(name);
  }
  std::sort(alive.begin(), alive.end());
  REQUIRE(listed == alive);
}

std::string Describe(const NodeStatus& n) {
  return absl::StrCat(n.name, "|", n.leaf_cell_type, "|", n.total_leaf_cells, "|",
                      n.free_leaf_cells, "|", n.healthy);
}

// A view as a client keeps it: groups by name, nodes in `Nodes()` order.
struct View {
  uint64_t version = 0;
  std::map<std::string, std::string> groups;
  std::vector<std::pair<std::string, std::string>> nodes;  // name, status
};

View Take(const Scheduler& s) {
  View v;
  v.version = s.version();
  for (const GroupStatus& g : s.Groups()) v.groups[g.name] = DescribeAll(g);
  for (const NodeStatus& n : s.Nodes()) v.nodes.emplace_back(n.name, Describe(n));
  return v;
}

// `old` brought up to date by re-reading what `Changes(old.version)` names. With a small
// change log (`out_of_range` not null) a kOutOfRange answer counts there and the full views
// are re-read, as a manager does.
View Apply(const Scheduler& s, View old, int64_t* out_of_range) {
  absl::StatusOr<StateChanges> ch = s.Changes(old.version);
  if (out_of_range != nullptr && ch.status().code() == absl::StatusCode::kOutOfRange) {
    ++*out_of_range;
    return Take(s);
  }
  REQUIRE(ch.ok());
  for (const std::string& name : ch->groups) {
    const GroupStatus g = s.GetGroup(name);
    if (g.state == GroupState::kAbsent) {
      old.groups.erase(name);
    } else {
      old.groups[name] = DescribeAll(g);
    }
  }
  for (const std::string& name : ch->nodes) {
    absl::StatusOr<std::vector<NodeStatus>> fresh = s.GetNode(name);
    REQUIRE(fresh.ok());
    size_t k = 0;
    for (auto& [n, status] : old.nodes) {
      if (n == name) status = Describe((*fresh)[k++]);
    }
    REQUIRE(k == fresh->size());
  }
  old.version = ch->version;
  return old;
}

std::vector<std::string> PagedNames(const Scheduler& s, int32_t limit) {
  std::vector<std::string> names;
  std::string after;
  while (true) {
    const std::vector<GroupStatus> page = s.Groups(after, limit);
    for (const GroupStatus& g : page) names.push_back(g.name);
    if (page.size() < static_cast<size_t>(limit)) break;
    after = page.back().name;
  }
  return names;
}

// After a step: the invariants, the served `Groups()` current, the version moved iff a
// view did, every kept view brought up to date by `Changes` (`keep`: the current view kept
// too), and the pages of `page` groups (> 0) equal to `Groups()`. `out_of_range`: Apply's.
void CheckStep(const Scheduler& s, const std::vector<std::string>& known, const View& before,
               std::vector<View>* kept, bool keep, int32_t page, int64_t* out_of_range = nullptr) {
  REQUIRE(s.CheckInvariants().ok());
  RequireGroupsCurrent(s, known);
  const View now = Take(s);
  if (now.version == before.version) {
    REQUIRE(now.groups == before.groups);
    REQUIRE(now.nodes == before.nodes);
  } else {
    REQUIRE(now.version > before.version);
  }
  for (const View& old : *kept) {
    const View applied = Apply(s, old, out_of_range);
    REQUIRE(applied.version == now.version);
    REQUIRE(applied.groups == now.groups);
    REQUIRE(applied.nodes == now.nodes);
  }
  if (keep) kept->push_back(now);
  if (kept->size() > 6) kept->erase(kept->begin() + 1);  // keep version 0 and the last few
  if (page > 0) {
    std::vector<std::string> all;
    for (const GroupStatus& g : s.Groups()) all.push_back(g.name);
    REQUIRE(PagedNames(s, page) == all);
  }
}

// `capacity`: SchedulerOptions::change_log_capacity; `out_of_range` (with a small one):
// how many kept views were too old for the ring (Apply).
void RunChangesProperty(uint64_t seed, int64_t capacity = int64_t{1} << 16,
                        int64_t* out_of_range = nullptr) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  SchedulerOptions options;
  options.change_log_capacity = capacity;
  absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(*spec, options);
  REQUIRE(created.ok());
  Scheduler& s = **created;
  REQUIRE(s.version() == 0);
  std::vector<std::string> nodes;
  for (const NodeStatus& n : s.Nodes()) nodes.push_back(n.name);

  std::vector<View> kept = {Take(s)};
  std::map<std::string, GroupRequest> live;  // requests of groups scheduled
  std::map<std::string, Placement> placed;   // kPlaced placements not yet allocated
  std::vector<std::string> known;            // every name ever scheduled or recovered
  const int64_t steps = testing::PropertySteps(300);
  int next = 0;
  for (int64_t step = 0; step < steps; ++step) {
    const View before = Take(s);
    const int dice = pick(100);
    if (dice < 40) {
      static const char* const kVcs[] = {"v1", "v2", "v3", "v4"};
      static const Priority kPriorities[] = {kOpportunisticPriority, 0, 1, 5, 100};
      GroupRequest req;
      req.name = absl::StrCat("g", next++);
      req.vc = kVcs[pick(4)];
      req.priority = kPriorities[pick(5)];
      req.lazy_preemption = pick(3) == 0;
      req.members = {{1 + pick(2), 1 << pick(4)}};
      known.push_back(req.name);
      const Phase phase = pick(4) == 0 ? Phase::kFiltering : Phase::kPreempting;
      absl::StatusOr<ScheduleResult> r = s.Schedule(req, phase);
      REQUIRE(r.ok());
      if (r->outcome == Outcome::kPlaced) placed[req.name] = r->placement;
      if (phase == Phase::kPreempting || r->outcome == Outcome::kPlaced) live[req.name] = req;
    } else if (dice < 60 && !placed.empty()) {
      auto it = placed.begin();
      std::advance(it, pick(static_cast<int>(placed.size())));
      (void)s.Allocate(live[it->first], it->second).ok();
      placed.erase(it);
    } else if (dice < 80 && !live.empty()) {
      auto it = live.begin();
      std::advance(it, pick(static_cast<int>(live.size())));
      const int how = pick(4);
      absl::Status st = how == 0   ? s.Unreserve(it->first)
                        : how == 1 ? s.CancelPreemption(it->first)
                                   : s.Release(it->first);
      st.IgnoreError();  // the state may not fit (kFailedPrecondition, kNotFound)
      if (how >= 2) live.erase(it);
    } else if (dice < 90) {
      REQUIRE(s.SetNodeHealthy(nodes[static_cast<size_t>(pick(8))], pick(3) != 0).ok());
    } else if (!live.empty()) {
      // Recover a live group's placement under a new name (often refused: leaves held).
      const GroupStatus g = s.GetGroup(live.begin()->first);
      GroupRequest req = g.request;
      req.name = absl::StrCat("r", next++);
      known.push_back(req.name);
      if (g.state != GroupState::kAbsent && s.Recover(req, g.placement).ok()) live[req.name] = req;
    }
    const bool keep = pick(8) == 0;  // one draw after the other: the same run on every compiler
    const int32_t page = step % 25 == 0 ? 1 + pick(5) : 0;
    CheckStep(s, known, before, &kept, keep, page, out_of_range);
  }
}

// Fractional, MIG and whole groups mixed (tests/unit/sharing/mig_cluster.h: A100s with MIG,
// `protected`, and V100s): a fractional or MIG group's status follows its GPUs' holders
// (being preempted with them) and bars (evicted by a protected guaranteed group), which
// change under calls naming other groups, so the change log must name it then.
void RunSharingChangesProperty(uint64_t seed, int64_t* placed_shared, int64_t* evicted) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(testdata::kMigYaml, "mig.yaml");
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(*spec);
  REQUIRE(created.ok());
  Scheduler& s = **created;
  const std::vector<std::string> nodes = {"m0", "m1", "v0"};
  static const char* const kProfiles[] = {"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "7g.40gb"};
  static const Priority kPriorities[] = {kOpportunisticPriority, 0, 1, 5};

  std::vector<View> kept = {Take(s)};
  std::map<std::string, GroupRequest> requests;  // every group scheduled, by name
  std::map<std::string, Placement> decided;      // Filtering kPlaced decisions not allocated
  std::vector<std::string> known;
  const int64_t steps = testing::PropertySteps(400);
  int next = 0;
  auto any = [&](auto&& want) {  // a random listed group (not a holder) with `want(status)`
    std::vector<GroupStatus> fit;
    for (GroupStatus& g : s.Groups()) {
      if (g.name.rfind("hived-share/", 0) != 0 && want(g)) fit.push_back(std::move(g));
    }
    return fit.empty() ? GroupStatus()
                       : fit[static_cast<size_t>(pick(static_cast<int>(fit.size())))];
  };
  for (int64_t step = 0; step < steps; ++step) {
    CAPTURE(step);
    const View before = Take(s);
    const int dice = pick(100);
    if (dice < 40) {  // a new MIG, fractional or whole group
      GroupRequest req;
      req.name = absl::StrCat("g", next++);
      req.vc = pick(2) == 0 ? "VC1" : "VC2";
      req.priority = kPriorities[pick(4)];
      GroupMember m;
      m.pod_number = 1 + pick(2);
      m.leaf_cell_number = 1;
      const int kind = pick(3);
      if (kind == 0) {
        m.mig_profile = kProfiles[pick(5)];
      } else if (kind == 1) {
        m.gpu_milli = 100 * (1 + pick(10));
        if (req.vc == "VC1" && pick(2) == 0) req.leaf_cell_types = {"V100"};
      } else {
        m.pod_number = 1;
        m.leaf_cell_number = 1 + pick(2);
      }
      req.members = {m};
      known.push_back(req.name);
      requests[req.name] = req;
      const Phase phase = pick(3) == 0 ? Phase::kFiltering : Phase::kPreempting;
      absl::StatusOr<ScheduleResult> r = s.Schedule(req, phase);
      REQUIRE(r.ok());
      if (r->outcome == Outcome::kPlaced && kind != 2) ++*placed_shared;
      if (r->outcome == Outcome::kPlaced && phase == Phase::kFiltering) {
        decided[req.name] = r->placement;
      }
    } else if (dice < 55) {  // allocate a Filtering decision or a reservation
      const GroupStatus g =
          any([](const GroupStatus& x) { return x.state == GroupState::kReserved; });
      if (!decided.empty() && (g.name.empty() || pick(2) == 0)) {
        auto it = decided.begin();
        std::advance(it, pick(static_cast<int>(decided.size())));
        (void)s.Allocate(requests[it->first], it->second).ok();  // may be stale: refused
        decided.erase(it);
      } else if (!g.name.empty()) {
        REQUIRE(s.Allocate(requests[g.name], g.placement).ok());
      }
    } else if (dice < 70) {  // release a running group
      const GroupStatus g = any([](const GroupStatus& x) {
        return x.state == GroupState::kAllocated || x.state == GroupState::kOpportunistic ||
               x.state == GroupState::kBeingPreempted;
      });
      if (!g.name.empty()) REQUIRE(s.Release(g.name).ok());
    } else if (dice < 82) {  // a preemption or reservation given up, or re-checked
      const GroupStatus g = any([](const GroupStatus& x) {
        return x.state == GroupState::kPreempting || x.state == GroupState::kReserved;
      });
      const int how = pick(3);
      if (g.name.empty()) {
      } else if (how == 0) {
        REQUIRE(s.Unreserve(g.name).ok());
      } else if (how == 1 && g.state == GroupState::kPreempting) {
        REQUIRE(s.CancelPreemption(g.name).ok());
      } else {
        REQUIRE(s.Schedule(requests[g.name], Phase::kPreempting).ok());
      }
    } else if (dice < 90) {
      REQUIRE(s.SetNodeHealthy(nodes[static_cast<size_t>(pick(3))], pick(3) != 0).ok());
    } else {  // a running group's placement recovered under a new name (often refused)
      const GroupStatus g = any([](const GroupStatus& x) {
        return x.state == GroupState::kAllocated || x.state == GroupState::kOpportunistic;
      });
      if (!g.name.empty()) {
        GroupRequest req = requests[g.name];
        req.name = absl::StrCat("r", next++);
        known.push_back(req.name);
        requests[req.name] = req;
        (void)s.Recover(req, g.placement).ok();
      }
    }
    for (const GroupStatus& g : s.Groups()) {
      if (g.state == GroupState::kBeingPreempted && requests.count(g.name) > 0 &&
          requests[g.name].members[0].leaf_cell_number == 1 &&
          (requests[g.name].members[0].gpu_milli > 0 ||
           !requests[g.name].members[0].mig_profile.empty())) {
        ++*evicted;
      }
    }
    const bool keep = pick(8) == 0;
    const int32_t page = step % 25 == 0 ? 1 + pick(5) : 0;
    CheckStep(s, known, before, &kept, keep, page);
  }
}

TEST_CASE("Changes: re-reading what changed since a view turns it into the current view",
          "[scheduler][property]") {
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 6);
       ++seed) {
    CAPTURE(seed);
    RunChangesProperty(seed);
  }
}

TEST_CASE("Changes: exact or kOutOfRange with a small change log", "[scheduler][property]") {
  // A ring of 48 entries holds a few steps: recent views are brought up to date exactly,
  // older ones (version 0 among them) are told kOutOfRange.
  int64_t out_of_range = 0;
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 6);
       ++seed) {
    CAPTURE(seed);
    RunChangesProperty(seed, /*capacity=*/48, &out_of_range);
  }
  CHECK(out_of_range > 0);  // not vacuous: the ring wrapped
}

TEST_CASE("Changes: exact with fractional MIG and whole groups mixed",
          "[scheduler][property][sharing]") {
  int64_t placed_shared = 0, evicted = 0;
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 6);
       ++seed) {
    CAPTURE(seed);
    RunSharingChangesProperty(seed, &placed_shared, &evicted);
  }
  // Not vacuous: shared groups placed, and some were being preempted with their GPUs.
  CHECK(placed_shared > 50);
  CHECK(evicted > 0);
}

TEST_CASE("Changes: a version the scheduler has not reached is kInvalidArgument",
          "[scheduler][unit]") {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  absl::StatusOr<StateChanges> ch = (*s)->Changes(1);
  REQUIRE(ch.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ch.status().message().find("ahead") != std::string_view::npos);
  ch = (*s)->Changes(0);
  REQUIRE(ch.ok());
  CHECK(ch->version == 0);
  CHECK(ch->groups.empty());
  CHECK(ch->nodes.empty());
  // A Filtering decision changes nothing; a refused call neither.
  GroupRequest req;
  req.name = "a";
  req.vc = "v1";
  req.members = {{1, 8}};
  REQUIRE((*s)->Schedule(req, Phase::kFiltering).ok());
  CHECK((*s)->version() == 0);
  CHECK(!(*s)->Release("nobody").ok());
  CHECK((*s)->version() == 0);
  absl::StatusOr<ScheduleResult> r = (*s)->Schedule(req, Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPlaced);
  CHECK((*s)->version() == 1);
  ch = (*s)->Changes(0);
  REQUIRE(ch.ok());
  CHECK(ch->groups == std::vector<std::string>{"a"});
  CHECK(ch->nodes.size() == 1);
  CHECK((*s)->Groups("", 0).empty());
  CHECK((*s)->Groups("a", 10).empty());
  CHECK((*s)->Groups("", 10).size() == 1);
}

}  // namespace
}  // namespace hived
