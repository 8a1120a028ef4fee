#include "hived/scheduler.h"

#include <memory>
#include <string>
#include <vector>

#include "hived/config.h"
#include "support/catch.h"
#include "unit/scheduler/testdata.h"

namespace hived {
namespace {

std::unique_ptr<Scheduler> Make(const char* yaml) {
  auto spec = LoadClusterSpecString(yaml, "test.yaml");
  REQUIRE(spec.ok());
  auto s = Scheduler::Create(*spec);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  REQUIRE((*s)->CheckInvariants().ok());
  return std::move(*s);
}

GroupRequest Req(std::string name, std::string vc, Priority prio, std::vector<GroupMember> members,
                 std::string leaf_type = "") {
  GroupRequest r;
  r.name = std::move(name);
  r.vc = std::move(vc);
  r.priority = prio;
  r.members = std::move(members);
  r.leaf_cell_type = std::move(leaf_type);
  return r;
}

void RequireOk(const Scheduler& s) {
  absl::Status st = s.CheckInvariants();
  INFO(st.ToString());
  REQUIRE(st.ok());
}

// Schedules and allocates; returns the placement.
Placement Run(Scheduler& s, const GroupRequest& r) {
  auto res = s.Schedule(r, Phase::kPreempting);
  INFO(res.status().ToString());
  REQUIRE(res.ok());
  INFO(res->reason);
  REQUIRE(res->outcome == Outcome::kPlaced);
  auto info = s.Allocate(r, res->placement);
  INFO(info.status().ToString());
  REQUIRE(info.ok());
  RequireOk(s);
  return res->placement;
}

std::vector<ChainLevelCapacity> Cap(const Scheduler& s) { return s.Capacity(); }

bool SameCapacity(const std::vector<ChainLevelCapacity>& a,
                  const std::vector<ChainLevelCapacity>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].free != b[i].free || a[i].obtainable != b[i].obtainable ||
        a[i].vc_unbound != b[i].vc_unbound || a[i].bad_free != b[i].bad_free) {
      return false;
    }
  }
  return true;
}

TEST_CASE("Scheduler: builds HiveD's design config with its capacity", "[scheduler][unit]") {
  auto s = Make(testdata::kDesignYaml);
  bool saw = false;
  for (const ChainLevelCapacity& c : s->Capacity()) {
    if (c.chain == "4-DGX2-V100-NODE" && c.level == 7) {
      saw = true;
      CHECK(c.total == 2);
      CHECK(c.obtainable == 1);  // the pinned 2-DGX2 cell split one 4-DGX2 cell
    }
  }
  CHECK(saw);
  auto vc1 = s->VirtualCluster("VC1");
  REQUIRE(vc1.ok());
  CHECK(vc1->size() == 10);
  CHECK((*vc1)[7].pinned_cell_id == "VC1-YQW-CT1");
  CHECK(!s->VirtualCluster("nope").ok());
}

TEST_CASE("Scheduler: a one-GPU group packs onto the same node and leaf pair",
          "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  auto before = Cap(*s);
  Placement a = Run(*s, Req("a", "alpha", 0, {{1, 1}}));
  Placement b = Run(*s, Req("b", "alpha", 0, {{1, 1}}));
  REQUIRE(a.pods.size() == 1);
  CHECK(a.chain == "G-RACK");
  CHECK(a.pods[0].node == "n0");
  CHECK(a.pods[0].leaf_cell_indices == std::vector<int32_t>{0});
  CHECK(a.pods[0].preassigned_cell_types == std::vector<std::string>{"G-NODE"});
  CHECK(b.pods[0].node == "n0");
  CHECK(b.pods[0].leaf_cell_indices == std::vector<int32_t>{1});
  // A 2-GPU pod takes the free switch of the same node.
  Placement c = Run(*s, Req("c", "alpha", 0, {{1, 2}}));
  CHECK(c.pods[0].node == "n0");
  CHECK(c.pods[0].leaf_cell_indices == std::vector<int32_t>{2, 3});
  CHECK(s->GetGroup("c").state == GroupState::kAllocated);
  REQUIRE(s->Release("a").ok());
  REQUIRE(s->Release("b").ok());
  REQUIRE(s->Release("c").ok());
  RequireOk(*s);
  CHECK(SameCapacity(before, Cap(*s)));
  CHECK(s->GetGroup("a").state == GroupState::kAbsent);
}

TEST_CASE("Scheduler: rejects misuse with HiveD's meaning", "[scheduler][unit]") {
  auto s = Make(testdata::kDesignYaml);
  auto code = [&](const GroupRequest& r) {
    return s->Schedule(r, Phase::kPreempting).status().code();
  };
  CHECK(code(Req("g", "nope", 0, {{1, 1}})) == absl::StatusCode::kNotFound);
  CHECK(code(Req("g", "VC1", 1001, {{1, 1}})) == absl::StatusCode::kInvalidArgument);
  CHECK(code(Req("g", "VC1", -2, {{1, 1}})) == absl::StatusCode::kInvalidArgument);
  CHECK(code(Req("g", "VC1", 0, {})) == absl::StatusCode::kInvalidArgument);
  CHECK(code(Req("g", "VC1", 0, {{0, 1}})) == absl::StatusCode::kInvalidArgument);
  CHECK(code(Req("g", "VC1", 0, {{1, -1}})) == absl::StatusCode::kInvalidArgument);
  CHECK(code(Req("g", "VC1", 0, {{1, 1}}, "K80")) == absl::StatusCode::kNotFound);
  CHECK(code(Req("g", "VC1", 0, {{1, 1}}, "DGX1-P100")) == absl::StatusCode::kInvalidArgument);
  CHECK(code(Req("g", "VC1", 0, {{1, 17}}, "DGX2-V100")) == absl::StatusCode::kInvalidArgument);
  GroupRequest pinned = Req("g", "VC2", 0, {{1, 1}});
  pinned.pinned_cell_id = "VC1-YQW-CT1";
  CHECK(code(pinned) == absl::StatusCode::kNotFound);
  pinned.vc = "VC1";
  pinned.priority = -1;
  CHECK(code(pinned) == absl::StatusCode::kInvalidArgument);
  // Duplicate live group.
  Run(*s, Req("x", "VC1", 0, {{1, 1}}, "DGX2-V100"));
  CHECK(code(Req("x", "VC1", 0, {{1, 1}}, "DGX2-V100")) == absl::StatusCode::kAlreadyExists);
  // Allocate with pods that do not match the members: not what was scheduled
  // (kFailedPrecondition); recovered, an invalid placement (kInvalidArgument).
  auto res = s->Schedule(Req("y", "VC1", 0, {{2, 1}}, "DGX2-V100"), Phase::kFiltering);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  CHECK(s->Allocate(Req("y", "VC1", 0, {{1, 1}}, "DGX2-V100"), res->placement).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(s->Recover(Req("y", "VC1", 0, {{1, 1}}, "DGX2-V100"), res->placement).status().code() ==
        absl::StatusCode::kInvalidArgument);
  RequireOk(*s);
}

TEST_CASE("Scheduler: a gang that can never fit its VC is infeasible with a reason",
          "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  // gamma owns two 2-GPU switches: a 4-GPU pod never fits.
  auto r = s->Schedule(Req("g", "gamma", 0, {{1, 4}}), Phase::kPreempting);
  REQUIRE(r.ok());
  CHECK(r->outcome == Outcome::kInfeasible);
  CHECK(r->reason.find("gamma") != std::string::npos);
  // beta owns 4 GPUs: 2 x 4 never fits.
  r = s->Schedule(Req("g", "beta", 0, {{2, 4}}), Phase::kPreempting);
  REQUIRE(r.ok());
  CHECK(r->outcome == Outcome::kInfeasible);
}

TEST_CASE("Scheduler: waits with the VC, chain and level when the VC is full",
          "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  Run(*s, Req("a", "beta", 0, {{1, 4}}));
  auto r = s->Schedule(Req("b", "beta", 0, {{1, 1}}), Phase::kPreempting);
  REQUIRE(r.ok());
  CHECK(r->outcome == Outcome::kWaiting);
  CHECK(r->reason.find("insufficient capacity") != std::string::npos);
  CHECK(r->reason.find("VC beta") != std::string::npos);
  CHECK(r->reason.find("G-RACK") != std::string::npos);
  // Another VC is unaffected: alpha still gets its 2 nodes.
  Run(*s, Req("c", "alpha", 0, {{2, 4}}));
  RequireOk(*s);
}

// A Filtering decision was matched by group name, pods and leaves only: an Allocate of the
// same placement in another VC bound the first VC's virtual cells to a group of the second.
TEST_CASE("Scheduler: a Filtering decision is not run by an Allocate in another VC or priority",
          "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  const GroupRequest g = Req("g", "alpha", 0, {{1, 1}});
  auto r = s->Schedule(g, Phase::kFiltering);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPlaced);
  const uint64_t version = s->version();
  for (const GroupRequest& other :
       {Req("g", "gamma", 0, {{1, 1}}), Req("g", "alpha", 1, {{1, 1}})}) {
    auto info = s->Allocate(other, r->placement);
    CHECK(info.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(s->GetGroup("g").state == GroupState::kAbsent);
    CHECK(s->version() == version);
    RequireOk(*s);
  }
  auto info = s->Allocate(g, r->placement);  // the request it was decided for
  INFO(info.status().ToString());
  CHECK(info.ok());
  RequireOk(*s);
}

TEST_CASE("Scheduler: opportunistic groups use idle cells and are preempted by guarantees",
          "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  // Fill all 16 GPUs opportunistically (from VC gamma).
  for (int i = 0; i < 4; ++i) Run(*s, Req("o" + std::to_string(i), "gamma", -1, {{1, 4}}));
  CHECK(s->GetGroup("o0").state == GroupState::kOpportunistic);
  auto r = s->Schedule(Req("o9", "gamma", -1, {{1, 1}}), Phase::kPreempting);
  REQUIRE(r.ok());
  CHECK(r->outcome == Outcome::kWaiting);
  // A guaranteed group of beta preempts one whole opportunistic group.
  GroupRequest g = Req("g", "beta", 0, {{1, 2}});
  r = s->Schedule(g, Phase::kFiltering);
  REQUIRE(r.ok());
  CHECK(r->outcome == Outcome::kPreempting);
  CHECK(s->GetGroup("g").state == GroupState::kAbsent);  // filtering creates nothing
  r = s->Schedule(g, Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPreempting);
  REQUIRE(r->victims.size() == 1);
  RequireOk(*s);
  CHECK(s->GetGroup("g").state == GroupState::kPreempting);
  CHECK(s->GetGroup(r->victims[0]).state == GroupState::kBeingPreempted);
  // Allocate before the victim is gone fails; after releasing it succeeds.
  CHECK(s->Allocate(g, r->placement).status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->Release(r->victims[0]).ok());
  RequireOk(*s);
  auto again = s->Schedule(g, Phase::kPreempting);
  REQUIRE(again.ok());
  CHECK(again->outcome == Outcome::kPlaced);
  REQUIRE(s->Allocate(g, again->placement).ok());
  CHECK(s->GetGroup("g").state == GroupState::kAllocated);
  RequireOk(*s);
}

TEST_CASE("Scheduler: cancelling a preemption gives the cells back", "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  Run(*s, Req("low", "alpha", 1, {{2, 4}}));
  auto r = s->Schedule(Req("high", "alpha", 5, {{1, 4}}), Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPreempting);
  CHECK(r->victims == std::vector<std::string>{"low"});
  RequireOk(*s);
  REQUIRE(s->CancelPreemption("high").ok());
  RequireOk(*s);
  CHECK(s->GetGroup("low").state == GroupState::kAllocated);
  CHECK(s->GetGroup("high").state == GroupState::kAbsent);
  // Same priority never preempts.
  auto same = s->Schedule(Req("peer", "alpha", 1, {{1, 4}}), Phase::kPreempting);
  REQUIRE(same.ok());
  CHECK(same->outcome == Outcome::kWaiting);
}

TEST_CASE("Scheduler: lazy preemption downgrades the victim instead of killing it",
          "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  GroupRequest low = Req("low", "beta", 1, {{1, 4}});
  low.lazy_preemption = true;
  Run(*s, low);
  // beta's only node is used; a higher-priority request downgrades `low` and binds beta's
  // virtual node to another free physical node.
  auto r = s->Schedule(Req("high", "beta", 5, {{1, 4}}), Phase::kPreempting);
  REQUIRE(r.ok());
  INFO(r->reason);
  REQUIRE(r->outcome == Outcome::kPlaced);
  CHECK(s->GetGroup("low").state == GroupState::kOpportunistic);
  CHECK(s->GetGroup("low").preemptor == "high");
  REQUIRE(s->Allocate(Req("high", "beta", 5, {{1, 4}}), r->placement).ok());
  RequireOk(*s);
  CHECK(r->placement.pods[0].node != s->GetGroup("low").placement.pods[0].node);
}

bool SamePlacement(const Placement& a, const Placement& b) {
  if (a.chain != b.chain || a.pods.size() != b.pods.size()) return false;
  for (size_t k = 0; k < a.pods.size(); ++k) {
    const PodPlacement& x = a.pods[k];
    const PodPlacement& y = b.pods[k];
    if (x.leaf_cell_number != y.leaf_cell_number || x.node != y.node ||
        x.leaf_cell_indices != y.leaf_cell_indices ||
        x.preassigned_cell_types != y.preassigned_cell_types || x.mig_profile != y.mig_profile ||
        x.mig_start != y.mig_start) {
      return false;
    }
  }
  return true;
}

// Regression: groups hold no copy of a decided placement (it is derived again from their
// leaves when asked); every view must still show the one the group was placed with.
TEST_CASE("Scheduler: a group's status and record show the placement it was placed with",
          "[scheduler][unit]") {
  auto shows = [](const Scheduler& s, const std::string& name, const Placement& want) {
    INFO(name);
    CHECK(SamePlacement(s.GetGroup(name).placement, want));
    absl::StatusOr<GroupRecord> rec = s.GetGroupRecord(name);
    REQUIRE(rec.ok());
    CHECK(SamePlacement(rec->placement, want));
  };
  auto s = Make(testdata::kTwoRacksYaml);
  // Scheduled and allocated: the decision's placement, preassigned types included.
  GroupRequest low = Req("low", "beta", 1, {{1, 4}});
  low.lazy_preemption = true;
  const Placement low_placed = Run(*s, low);
  REQUIRE(!low_placed.pods.empty());
  CHECK(!low_placed.pods[0].preassigned_cell_types[0].empty());
  shows(*s, "low", low_placed);
  // Lazily downgraded: it loses its virtual cells but keeps showing its types.
  auto r = s->Schedule(Req("high", "beta", 5, {{1, 4}}), Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPlaced);
  REQUIRE(s->GetGroup("low").state == GroupState::kOpportunistic);
  shows(*s, "low", low_placed);
  REQUIRE(s->Allocate(Req("high", "beta", 5, {{1, 4}}), r->placement).ok());
  shows(*s, "high", r->placement);
  shows(*s, "low", low_placed);
  RequireOk(*s);
  // Filtered and allocated with no preassigned types: the caller's placement, as given;
  // with them, the decision's.
  auto t = Make(testdata::kTwoRacksYaml);
  const GroupRequest bare_req = Req("bare", "alpha", 2, {{1, 2}});
  auto f = t->Schedule(bare_req, Phase::kFiltering);
  REQUIRE(f.ok());
  REQUIRE(f->outcome == Outcome::kPlaced);
  Placement bare = f->placement;
  for (PodPlacement& pod : bare.pods) pod.preassigned_cell_types.clear();
  REQUIRE(t->Allocate(bare_req, bare).ok());
  shows(*t, "bare", bare);
  const GroupRequest typed_req = Req("typed", "alpha", 2, {{1, 2}});
  auto g = t->Schedule(typed_req, Phase::kFiltering);
  REQUIRE(g.ok());
  REQUIRE(g->outcome == Outcome::kPlaced);
  REQUIRE(t->Allocate(typed_req, g->placement).ok());
  shows(*t, "typed", g->placement);
  RequireOk(*t);
}

TEST_CASE("Scheduler: the filtering phase never changes state", "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  GroupRequest low = Req("low", "beta", 1, {{1, 4}});
  low.lazy_preemption = true;
  Run(*s, low);
  auto before = Cap(*s);
  auto r = s->Schedule(Req("high", "beta", 5, {{1, 4}}), Phase::kFiltering);
  REQUIRE(r.ok());
  CHECK(s->GetGroup("low").state == GroupState::kAllocated);
  CHECK(SameCapacity(before, Cap(*s)));
  RequireOk(*s);
}

TEST_CASE("Scheduler: bad nodes are avoided and explained", "[scheduler][unit]") {
  auto s = Make(testdata::kTwoRacksYaml);
  CHECK(s->SetNodeHealthy("nope", false).code() == absl::StatusCode::kNotFound);
  REQUIRE(s->SetNodeHealthy("n0", false).ok());
  RequireOk(*s);
  Placement p = Run(*s, Req("a", "alpha", 0, {{1, 1}}));
  CHECK(p.pods[0].node != "n0");
  // Three healthy nodes of four back alpha (2) + beta (1): only gamma's switches would need
  // n0, so gamma sees a doomed bad cell once the others are bound.
  CHECK(Run(*s, Req("b", "alpha", 0, {{1, 4}})).pods[0].node != "n0");
  CHECK(Run(*s, Req("c", "beta", 0, {{1, 4}})).pods[0].node != "n0");
  RequireOk(*s);
  auto r = s->Schedule(Req("d", "gamma", 0, {{1, 2}}), Phase::kPreempting);
  REQUIRE(r.ok());
  INFO(r->reason);
  CHECK(r->outcome == Outcome::kWaiting);
  CHECK(r->reason ==
        "have to use at least one bad node n0 (virtual cell gamma/0) when scheduling in VC "
        "gamma, chain G-RACK");
  auto gamma = s->VirtualCluster("gamma");
  REQUIRE(gamma.ok());
  REQUIRE(!gamma->empty());
  CHECK((*gamma)[0].address == "gamma/0");
  CHECK((*gamma)[0].health == CellHealth::kBad);
  REQUIRE(s->SetNodeHealthy("n0", true).ok());
  RequireOk(*s);
  // Healthy again: gamma's cell is no longer bad and the same request is placed on n0.
  CHECK(Run(*s, Req("d", "gamma", 0, {{1, 2}})).pods[0].node == "n0");
  for (const char* g : {"a", "b", "c", "d"}) REQUIRE(s->Release(g).ok());
  RequireOk(*s);
}

TEST_CASE("Scheduler: recovery replays placements in any order to the same state",
          "[scheduler][unit]") {
  auto s = Make(testdata::kFourRacksYaml);
  std::vector<std::pair<GroupRequest, Placement>> running;
  std::vector<GroupRequest> reqs = {Req("a", "VC1", 0, {{1, 1}}),  Req("b", "VC1", 3, {{2, 8}}),
                                    Req("c", "VC2", 0, {{1, 4}}),  Req("d", "VC3", 0, {{1, 8}}),
                                    Req("e", "VC2", -1, {{1, 2}}), Req("f", "VC1", 0, {{3, 2}})};
  for (const GroupRequest& r : reqs) running.emplace_back(r, Run(*s, r));
  auto spec = LoadClusterSpecString(testdata::kFourRacksYaml, "t.yaml");
  REQUIRE(spec.ok());
  auto fresh = Scheduler::Create(*spec);
  REQUIRE(fresh.ok());
  for (auto it = running.rbegin(); it != running.rend(); ++it) {
    auto info = (*fresh)->Recover(it->first, it->second);
    INFO(info.status().ToString());
    REQUIRE(info.ok());
    CHECK(!info->downgraded);
    RequireOk(**fresh);
  }
  CHECK(SameCapacity(s->Capacity(), (*fresh)->Capacity()));
  for (const GroupStatus& g : s->Groups()) {
    CHECK((*fresh)->GetGroup(g.name).state == g.state);
  }
}

TEST_CASE("Scheduler: recovery downgrades a group that no longer fits its VC",
          "[scheduler][unit]") {
  auto s = Make(testdata::kFourRacksYaml);
  Placement p1 = Run(*s, Req("a", "VC3", 0, {{1, 8}}));
  Placement p2 = Run(*s, Req("b", "VC3", 0, {{1, 8}}));
  // VC3 shrinks to one node.
  auto spec = LoadClusterSpecString(testdata::kFourRacksYaml, "t.yaml");
  REQUIRE(spec.ok());
  spec->virtual_clusters[2].virtual_cells[0].cell_number = 1;
  auto fresh = Scheduler::Create(*spec);
  REQUIRE(fresh.ok());
  auto i1 = (*fresh)->Recover(Req("a", "VC3", 0, {{1, 8}}), p1);
  auto i2 = (*fresh)->Recover(Req("b", "VC3", 0, {{1, 8}}), p2);
  REQUIRE(i1.ok());
  REQUIRE(i2.ok());
  CHECK(!i1->downgraded);
  CHECK(i2->downgraded);
  CHECK(!i2->reason.empty());
  CHECK((*fresh)->GetGroup("b").state == GroupState::kOpportunistic);
  CHECK((*fresh)->GetGroup("b").downgrade_reason == i2->reason);
  RequireOk(**fresh);
}

}  // namespace
}  // namespace hived
