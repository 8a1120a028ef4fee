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
  return s;
}

// `Groups()` and its pages are served from a snapshot brought up to date from the change log:
// each status must equal the group's own (`GetGroup`), and every group known alive be there.
void RequireGroupsCurrent(const Scheduler& s, const std::vector<std::string>& known) {
  std::vector<std::string> listed;
  for (const GroupStatus& g : s.Groups()) {
    REQUIRE(DescribeAll(g) == DescribeAll(s.GetGroup(g.name)));
    listed.push_back(g.name);
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
  for (const GroupStatus& g : s.Groups()) v.groups[g.name] = Describe(g);
  for (const NodeStatus& n : s.Nodes()) v.nodes.emplace_back(n.name, Describe(n));
  return v;
}

// `old` brought up to date by re-reading what `Changes(old.version)` names.
View Apply(const Scheduler& s, View old) {
  absl::StatusOr<StateChanges> ch = s.Changes(old.version);
  REQUIRE(ch.ok());
  for (const std::string& name : ch->groups) {
    const GroupStatus g = s.GetGroup(name);
    if (g.state == GroupState::kAbsent) {
      old.groups.erase(name);
    } else {
      old.groups[name] = Describe(g);
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

void RunChangesProperty(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(*spec);
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
    REQUIRE(s.CheckInvariants().ok());
    RequireGroupsCurrent(s, known);
    const View now = Take(s);
    if (now.version == before.version) {
      REQUIRE(now.groups == before.groups);
      REQUIRE(now.nodes == before.nodes);
    } else {
      REQUIRE(now.version > before.version);
    }
    for (const View& old : kept) {
      const View applied = Apply(s, old);
      REQUIRE(applied.version == now.version);
      REQUIRE(applied.groups == now.groups);
      REQUIRE(applied.nodes == now.nodes);
    }
    if (pick(8) == 0) kept.push_back(now);
    if (kept.size() > 6) kept.erase(kept.begin() + 1);  // keep version 0 and the last few
    if (step % 25 == 0) {
      std::vector<std::string> all;
      for (const GroupStatus& g : s.Groups()) all.push_back(g.name);
      REQUIRE(PagedNames(s, 1 + pick(5)) == all);
    }
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
