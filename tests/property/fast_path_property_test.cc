// Property test of the fast path (hived/fast_path.h, issue 29 item 8): two schedulers on
// one cluster take the same random sequence, one through `ScheduleAndAllocate` and
// `Release(handle)`, the other through `Schedule(kPreempting)` + `Allocate` and
// `Release(name)`: new groups of every VC and priority (preemption, lazy downgrades,
// opportunistic runs), Preempting groups allocated once their victims are gone, releases,
// node failures. After every step the two give the same outcomes, placements, views
// (`Groups()`, `Nodes()`) and `SaveState` text. Bad input (nil, stale and forged handles,
// a double release, a sharing request, a started journal) is a status with nothing changed.
// Knobs: HIVED_PROPERTY_SEEDS, HIVED_PROPERTY_STEPS (support/property_knobs.h).
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
#include "hived/fast_path.h"
#include "hived/journal.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "support/testdata.h"

namespace hived {
namespace {

std::string Describe(const Placement& p) {
  std::string s = absl::StrCat(p.chain, "|");
  for (const PodPlacement& pod : p.pods) {
    absl::StrAppend(&s, pod.node, ":", absl::StrJoin(pod.leaf_cell_indices, ","), "/",
                    absl::StrJoin(pod.preassigned_cell_types, ","), ";");
  }
  return s;
}

std::string Describe(const GroupStatus& g) {
  return absl::StrCat(g.name, "|", g.vc, "|", static_cast<int>(g.state), "|", g.priority, "|",
                      g.request.priority, "|", g.preemptor, "|", g.downgrade_reason, "|",
                      Describe(g.placement));
}

std::string Describe(const ScheduleResult& r) {
  return absl::StrCat(OutcomeName(r.outcome), "|", Describe(r.placement), "|",
                      absl::StrJoin(r.victims, ","), "|", r.reason, "|", ReasonCodeName(r.code),
                      "|", absl::StrJoin(r.cancelled, ","), "|", r.cancelled_by);
}

// The fast result's placement with names, without preassigned types (the ids carry none).
std::string DescribeFast(const Scheduler& s, const FastResult& r) {
  std::string out = std::string(s.ChainName(r.chain)) + "|";
  for (const FastPod& pod : r.pods) {
    std::vector<int32_t> leaves(r.leaves.begin() + pod.leaf_begin,
                                r.leaves.begin() + pod.leaf_begin + pod.leaf_count);
    absl::StrAppend(&out, std::string(s.NodeName(pod.node)), ":", absl::StrJoin(leaves, ","), ";");
  }
  return out;
}
std::string DescribeNamesOnly(const Placement& p) {
  std::string s = absl::StrCat(p.chain, "|");
  for (const PodPlacement& pod : p.pods) {
    absl::StrAppend(&s, pod.node, ":", absl::StrJoin(pod.leaf_cell_indices, ","), ";");
  }
  return s;
}

struct Snapshot {
  std::vector<std::string> groups;
  std::vector<std::string> nodes;
  std::string state;
  bool operator==(const Snapshot& o) const {
    return groups == o.groups && nodes == o.nodes && state == o.state;
  }
};

Snapshot Take(const Scheduler& s) {
  Snapshot v;
  for (const GroupStatus& g : s.Groups()) v.groups.push_back(Describe(g));
  for (const NodeStatus& n : s.Nodes()) {
    v.nodes.push_back(absl::StrCat(n.name, "|", n.free_leaf_cells, "|", n.healthy));
  }
  absl::StatusOr<std::string> state = s.SaveState();
  REQUIRE(state.ok());
  v.state = *std::move(state);
  return v;
}

std::unique_ptr<Scheduler> Make() {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  return *std::move(s);
}

// Bad input on the fast scheduler: each a status, nothing changed.
void CheckBadInput(Scheduler& fast, GroupHandle stale) {
  const Snapshot before = Take(fast);
  const uint64_t version = fast.version();
  CHECK(fast.Release(GroupHandle()).code() == absl::StatusCode::kNotFound);
  CHECK(fast.Release(GroupHandle{12345, 1}).code() == absl::StatusCode::kNotFound);
  if (!stale.IsNil()) {
    const absl::Status s = fast.Release(stale);
    CHECK(s.code() == absl::StatusCode::kNotFound);
    CHECK(s.message().find("names no live group") != std::string_view::npos);
    CHECK(fast.GroupName(stale).status().code() == absl::StatusCode::kNotFound);
  }
  CHECK(fast.HandleOf("no-such-group").status().code() == absl::StatusCode::kNotFound);
  CHECK(fast.version() == version);
  CHECK(Take(fast) == before);
}

// Outcomes seen by the fast calls, so the test shows it covered each path.
struct Tally {
  int placed = 0;
  int preempting = 0;
  int waiting = 0;
  int recheck_placed = 0;
};

void RunFastPathProperty(uint64_t seed, Tally* tally) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  std::unique_ptr<Scheduler> fast_owner = Make();
  std::unique_ptr<Scheduler> classic_owner = Make();
  Scheduler& fast = *fast_owner;
  Scheduler& classic = *classic_owner;
  std::vector<std::string> nodes;
  for (const NodeStatus& n : fast.Nodes()) nodes.push_back(n.name);
  REQUIRE(fast.NodeCount() == static_cast<int32_t>(nodes.size()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    REQUIRE(fast.NodeName(static_cast<int32_t>(i)) == nodes[i]);
  }

  struct Live {
    GroupRequest request;
    GroupHandle handle;  // the fast scheduler's, once running
    Placement pending;   // a Preempting group's placement
    bool running = false;
  };
  std::map<std::string, Live> live;
  FastResult fr;  // reused, as a caller does
  GroupHandle stale;
  const int64_t steps = testing::PropertySteps(300);
  int next = 0;
  for (int64_t step = 0; step < steps; ++step) {
    const int dice = pick(100);
    if (dice < 45) {
      static const char* const kVcs[] = {"v1", "v2", "v3", "v4"};
      static const Priority kPriorities[] = {kOpportunisticPriority, 0, 1, 5, 100};
      GroupRequest req;
      req.name = absl::StrCat("g", next++);
      req.vc = kVcs[pick(4)];
      req.priority = kPriorities[pick(5)];
      req.lazy_preemption = pick(3) == 0;
      req.members = {{1 + pick(2), 1 << pick(4)}};
      if (pick(6) == 0) req.pinned_cell_id = "v3-pin";
      const absl::Status fs = fast.ScheduleAndAllocate(req, &fr);
      absl::StatusOr<ScheduleResult> cr = classic.Schedule(req, Phase::kPreempting);
      REQUIRE(fs.code() == cr.status().code());
      if (!fs.ok()) continue;
      REQUIRE(fr.outcome == cr->outcome);
      tally->placed += fr.outcome == Outcome::kPlaced;
      tally->preempting += fr.outcome == Outcome::kPreempting;
      tally->waiting += fr.outcome == Outcome::kWaiting;
      if (cr->outcome == Outcome::kPlaced) {
        REQUIRE(classic.Allocate(req, cr->placement).ok());
        REQUIRE(DescribeFast(fast, fr) == DescribeNamesOnly(cr->placement));
        REQUIRE(fr.detail.cancelled == cr->cancelled);
        REQUIRE(fr.detail.cancelled_by == cr->cancelled_by);
        absl::StatusOr<std::string> name = fast.GroupName(fr.handle);
        REQUIRE(name.ok());
        REQUIRE(*name == req.name);
        live[req.name] = Live{req, fr.handle, {}, true};
      } else {
        REQUIRE(Describe(fr.detail) == Describe(*cr));
        if (cr->outcome == Outcome::kPreempting)
          live[req.name] = Live{req, {}, cr->placement, false};
      }
    } else if (dice < 60 && !live.empty()) {
      // A Preempting group: Allocate (classic on both), or its re-check through the fast call.
      auto it = live.begin();
      std::advance(it, pick(static_cast<int>(live.size())));
      Live& l = it->second;
      if (l.running) continue;
      if (pick(2) == 0) {
        const absl::Status fa = fast.Allocate(l.request, l.pending).status();
        const absl::Status ca = classic.Allocate(l.request, l.pending).status();
        REQUIRE(fa.code() == ca.code());
        if (fa.ok()) {
          absl::StatusOr<GroupHandle> h = fast.HandleOf(it->first);
          REQUIRE(h.ok());
          l.handle = *h;
          l.running = true;
        }
      } else {
        const absl::Status fs = fast.ScheduleAndAllocate(l.request, &fr);
        absl::StatusOr<ScheduleResult> cr = classic.Schedule(l.request, Phase::kPreempting);
        REQUIRE(fs.code() == cr.status().code());
        if (!fs.ok()) continue;
        REQUIRE(fr.outcome == cr->outcome);
        if (cr->outcome == Outcome::kPlaced) {
          REQUIRE(classic.Allocate(l.request, cr->placement).ok());
          REQUIRE(DescribeFast(fast, fr) == DescribeNamesOnly(cr->placement));
          ++tally->recheck_placed;
          l.handle = fr.handle;
          l.running = true;
        } else {
          REQUIRE(Describe(fr.detail) == Describe(*cr));
          if (cr->outcome == Outcome::kPreempting) l.pending = cr->placement;
        }
      }
    } else if (dice < 85 && !live.empty()) {
      // Release a group (victims included); a reservation is given up instead.
      auto it = live.begin();
      std::advance(it, pick(static_cast<int>(live.size())));
      const std::string name = it->first;
      const GroupStatus g = classic.GetGroup(name);
      if (g.state == GroupState::kAbsent) {  // a cancelled reservation
        live.erase(it);
        continue;
      }
      if (g.state == GroupState::kReserved || g.state == GroupState::kPreempting) {
        REQUIRE(fast.Unreserve(name).code() == classic.Unreserve(name).code());
        live.erase(it);
        continue;
      }
      absl::StatusOr<GroupHandle> h = fast.HandleOf(name);
      REQUIRE(h.ok());
      if (it->second.running) REQUIRE(*h == it->second.handle);
      const Snapshot before = Take(fast);
      REQUIRE(fast.Release(*h).ok());
      REQUIRE(classic.Release(name).ok());
      // A second release of the same handle: kNotFound, nothing changed.
      const Snapshot after = Take(fast);
      REQUIRE(fast.Release(*h).code() == absl::StatusCode::kNotFound);
      REQUIRE(Take(fast) == after);
      REQUIRE(!(after == before));
      stale = *h;
      live.erase(it);
    } else if (dice < 93) {
      const std::string& node = nodes[static_cast<size_t>(pick(static_cast<int>(nodes.size())))];
      const bool healthy = pick(3) != 0;
      REQUIRE(fast.SetNodeHealthy(node, healthy).ok());
      REQUIRE(classic.SetNodeHealthy(node, healthy).ok());
    } else {
      CheckBadInput(fast, stale);
    }
    REQUIRE(fast.CheckInvariants().ok());
    const Snapshot f = Take(fast);
    const Snapshot c = Take(classic);
    REQUIRE(f.groups == c.groups);
    REQUIRE(f.nodes == c.nodes);
    REQUIRE(f.state == c.state);
  }
}

TEST_CASE("FastPath: random sequences decide as Schedule and Allocate and Release",
          "[scheduler][property]") {
  Tally tally;
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 8);
       ++seed) {
    CAPTURE(seed);
    RunFastPathProperty(seed, &tally);
  }
  CHECK(tally.placed > 0);
  CHECK(tally.preempting > 0);
  CHECK(tally.waiting > 0);
  CHECK(tally.recheck_placed > 0);
}

GroupRequest OneGpu(const std::string& name) {
  GroupRequest req;
  req.name = name;
  req.vc = "v1";
  req.members = {{1, 1}};
  return req;
}

TEST_CASE("FastPath: a sharing request is refused with nothing changed", "[scheduler][unit]") {
  std::unique_ptr<Scheduler> s = Make();
  const Snapshot before = Take(*s);
  GroupRequest req = OneGpu("frac");
  req.members[0].gpu_milli = 500;
  FastResult r;
  const absl::Status st = s->ScheduleAndAllocate(req, &r);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(st.message().find("whole-GPU requests only") != std::string_view::npos);
  CHECK(s->version() == 0);
  CHECK(Take(*s) == before);
}

TEST_CASE("FastPath: a started journal refuses the fast calls with nothing changed",
          "[scheduler][unit]") {
  std::unique_ptr<Scheduler> s = Make();
  FastResult r;
  REQUIRE(s->ScheduleAndAllocate(OneGpu("a"), &r).ok());
  REQUIRE(r.outcome == Outcome::kPlaced);
  const GroupHandle a = r.handle;
  MemoryJournalSink sink;
  REQUIRE(s->StartJournal(&sink).ok());
  const Snapshot before = Take(*s);
  const uint64_t version = s->version();
  absl::Status st = s->ScheduleAndAllocate(OneGpu("b"), &r);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(st.message().find("ScheduleAndAllocate") != std::string_view::npos);
  st = s->Release(a);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s->version() == version);
  CHECK(Take(*s) == before);
  CHECK(sink.data().empty());
  s->StopJournal();
  CHECK(s->Release(a).ok());
}

TEST_CASE("FastPath: handles are stale once their group ends and never name its slot's next group",
          "[scheduler][unit]") {
  std::unique_ptr<Scheduler> s = Make();
  FastResult r;
  REQUIRE(s->ScheduleAndAllocate(OneGpu("a"), &r).ok());
  const GroupHandle a = r.handle;
  REQUIRE(s->Release("a").ok());  // ended by name: the handle goes stale too
  REQUIRE(s->ScheduleAndAllocate(OneGpu("b"), &r).ok());
  const GroupHandle b = r.handle;
  CHECK(b.slot == a.slot);  // the slot is reused ...
  CHECK(b != a);            // ... by a new generation
  CHECK(s->Release(a).code() == absl::StatusCode::kNotFound);
  CHECK(s->GetGroup("b").state == GroupState::kAllocated);
  absl::StatusOr<std::string> name = s->GroupName(b);
  REQUIRE(name.ok());
  CHECK(*name == "b");
  CHECK(s->NodeName(-1).empty());
  CHECK(s->NodeName(s->NodeCount()).empty());
  CHECK(s->ChainName(r.chain) == "GRACK");
  CHECK(s->ChainName(99).empty());
  // A running group's second ScheduleAndAllocate: Schedule's kAlreadyExists, nothing changed.
  const uint64_t version = s->version();
  CHECK(s->ScheduleAndAllocate(OneGpu("b"), &r).code() == absl::StatusCode::kAlreadyExists);
  CHECK(s->version() == version);
  CHECK(s->Release(b).ok());
  CHECK(s->GetGroup("b").state == GroupState::kAbsent);
}

}  // namespace
}  // namespace hived
