// MIG pods in the library (docs/gpu-sharing.md, "MIG"), hand-checked through the public API
// on tests/unit/sharing/mig_cluster.h: config keys, bad requests, the placement rule across
// GPUs, guarantees and preemption, reconfiguration counted, reservations, strict Recover,
// SaveState recording MIG groups, MIG pods asking node CPU and host memory, Recover and
// AllocateRecord taking the recorded instance.
#include <memory>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/mig_host_cluster.h"
#include "unit/sharing/mig_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived::testdata {
namespace {

using V = std::vector<std::string>;

TEST_CASE("MIG config keys: built-in and explicit geometries load and write back", "[mig]") {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kMigYaml, "mig.yaml");
  REQUIRE(spec.ok());
  REQUIRE(spec->leaf_cell_types.size() == 1);
  CHECK(spec->leaf_cell_types[0].mig_geometry == "A100-40GB");
  const ResolvedMigGeometry g = ResolveMigGeometry(spec->leaf_cell_types[0]);
  CHECK(g.compute_slices == 7);
  CHECK(g.memory_slices == 8);
  REQUIRE(g.profiles.size() == 6);
  CHECK(g.profiles[3].name == "3g.20gb");
  CHECK(g.profiles[3].starts == std::vector<int32_t>{0, 4});
  std::string yaml = kMigYaml;
  const std::string from = "      migGeometry: A100-40GB\n";
  yaml.replace(
      yaml.find(from), from.size(),
      "      migComputeSlices: 4\n      migProfiles:\n"
      "      - {name: half, computeSlices: 2, memorySlices: 4, starts: [0, 4]}\n"
      "      - {name: quarter, computeSlices: 1, memorySlices: 2, starts: [0, 2, 4, 6]}\n");
  absl::StatusOr<ClusterSpec> own = LoadClusterSpecString(yaml, "own.yaml");
  INFO(own.status().message());
  REQUIRE(own.ok());
  const ResolvedMigGeometry o = ResolveMigGeometry(own->leaf_cell_types[0]);
  CHECK(o.compute_slices == 4);
  CHECK(o.memory_slices == 8);
  REQUIRE(o.profiles.size() == 2);
  CHECK(o.profiles[1].starts == std::vector<int32_t>{0, 2, 4, 6});
  for (const ClusterSpec* s : {&*spec, &*own}) {
    absl::StatusOr<ClusterSpec> back = LoadClusterSpecString(ClusterSpecToYaml(*s), "back.yaml");
    REQUIRE(back.ok());
    CHECK(ClusterSpecToYaml(*back) == ClusterSpecToYaml(*s));
    CHECK(back->leaf_cell_types[0].mig_profiles.size() ==
          s->leaf_cell_types[0].mig_profiles.size());
  }
  CHECK(BuiltinMigProfiles("H100-80GB") != nullptr);
  CHECK(BuiltinMigProfiles("B200") == nullptr);
}

TEST_CASE("MIG requests: bad ones are kInvalidArgument naming the group and pod", "[mig]") {
  auto s = MakeMig();
  auto invalid = [&](const GroupRequest& r, const std::string& what) {
    absl::StatusOr<ScheduleResult> res = s->Schedule(r, Phase::kPreempting);
    REQUIRE(!res.ok());
    INFO(res.status().message());
    CHECK(res.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(res.status().message()).find(what) != std::string::npos);
  };
  invalid(Mig("bad1", "VC1", 0, "3g.40gb"), "group bad1: no GPU type in the cluster has MIG");
  invalid(Mig("bad2", "VC1", 0, "1g.5gb", 1, {"V100"}), "V100 declares no MIG geometry");
  invalid(Mig("bad3", "VC1", 0, "2g.20gb", 1, {"A100"}), "has no MIG profile `2g.20gb`");
  GroupRequest mixed = Mig("bad4", "VC1", 0, "1g.5gb");
  mixed.members[0].gpu_milli = 300;
  invalid(mixed, "group bad4, pod 0 (member 0)");
  GroupRequest two = Mig("bad5", "VC1", 0, "1g.5gb", 2);
  GroupMember frac;
  frac.pod_number = 1;
  frac.leaf_cell_number = 1;
  frac.gpu_milli = 200;
  two.members.push_back(frac);
  invalid(two, "group bad5, pod 2 (member 1): a MIG member");
  GroupRequest whole = Mig("bad6", "VC1", 0, "1g.5gb");
  whole.members.push_back({1, 1});
  invalid(whole, "pod 1 (member 1)");
  GroupRequest leaves = Mig("bad7", "VC1", 0, "1g.5gb");
  leaves.members[0].leaf_cell_number = 2;
  invalid(leaves, "leafCellNumber 1");
  GroupRequest memory = Mig("bad8", "VC1", 0, "1g.5gb");
  memory.members[0].gpu_memory_mib = 100;
  invalid(memory, "gpu_memory_mib 0");
  CHECK(s->Groups().empty());
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("MIG placement: allowed starts, packing by placeability across GPUs, reuse", "[mig]") {
  auto s = MakeMig();
  // 3g goes to 4 (at 0 it would make the 4g unplaceable); the 4g then fills 0-3 of the
  // same GPU (no loss there) instead of opening another.
  REQUIRE(Run(*s, Mig("g1", "VC1", 0, "3g.20gb")) == Outcome::kPlaced);
  const std::string gpu = GpuOf(*s, "g1");
  REQUIRE(Run(*s, Mig("g2", "VC1", 0, "4g.20gb")) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "g2") == gpu);
  CHECK(MigInstances(*s) == V{gpu + ":4g.20gb@0=g2", gpu + ":3g.20gb@4=g1"});
  // The GPU is full (7 compute slices): a 1g.5gb opens the VC's other GPU, at 6.
  REQUIRE(Run(*s, Mig("g3", "VC1", 0, "1g.5gb")) == Outcome::kPlaced);
  const std::string other = GpuOf(*s, "g3");
  CHECK(other != gpu);
  REQUIRE(s->Release("g2").ok());
  // g2's 4g stays configured, free; the first GPU is busy (g1) and has no unconfigured
  // slice, so a 2g goes to the other GPU, at 4 (it keeps the 4g@0 there).
  REQUIRE(Run(*s, Mig("g4", "VC1", 0, "2g.10gb")) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "g4") == other);
  // A 4g reuses the free instance: nothing created, nothing reconfigured.
  REQUIRE(Run(*s, Mig("g5", "VC1", 0, "4g.20gb")) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "g5") == gpu);
  CHECK(MigInstances(*s) == V{gpu + ":4g.20gb@0=g5", gpu + ":3g.20gb@4=g1", other + ":2g.10gb@4=g4",
                              other + ":1g.5gb@6=g3"});
  int64_t created = 0;
  for (const ChainSummary& c : s->ChainSummaries()) created += c.mig_instances_created;
  CHECK(created == 4);
  CHECK(Reconfigurations(*s) == 0);
  // The other GPU still has 0-3 unconfigured and 4 compute slices: a 4g fits there.
  REQUIRE(Run(*s, Mig("g6", "VC1", 0, "4g.20gb")) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "g6") == other);
  // Both of VC1's A100 are full and it has no third: a 1g.5gb waits (a normal wait result).
  ScheduleResult waiting;
  CHECK(Run(*s, Mig("g7", "VC1", 0, "1g.5gb"), &waiting) == Outcome::kWaiting);
  CHECK(waiting.code == ReasonCode::kInsufficientCapacity);
  CHECK(s->GetGroup("g7").state == GroupState::kAbsent);
}

TEST_CASE("MIG placement: a GPU holding fractional shares takes no MIG instance", "[mig]") {
  auto s = MakeMig();
  REQUIRE(Run(*s, Frac("f", "VC1", 0, 300, {"A100"})) == Outcome::kPlaced);
  REQUIRE(Run(*s, Mig("m", "VC1", 0, "1g.5gb")) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "m") != GpuOf(*s, "f"));  // a fresh GPU, not the open fractional one
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("MIG placement: an opportunistic pod packs onto the GPU where it costs least", "[mig]") {
  auto s = MakeMig();
  REQUIRE(Run(*s, Mig("a", "VC1", 0, "3g.20gb")) == Outcome::kPlaced);  // VC1's GPU, 3g@4
  REQUIRE(Run(*s, Mig("b", "VC2", 0, "3g.20gb")) == Outcome::kPlaced);  // VC2's GPU, 3g@4
  REQUIRE(Run(*s, Mig("c", "VC2", 0, "2g.10gb")) == Outcome::kPlaced);  // VC2's GPU, 2g@0
  CHECK(GpuOf(*s, "c") == GpuOf(*s, "b"));
  // `protected`: the opportunistic pod may use either guaranteed GPU. On VC1's (3g@4) any
  // start kills the 4g@0; on VC2's (2g@0, 3g@4) the 4g is gone already and 2 loses only a
  // 2g, a 1g.10gb and a 1g.5gb: it goes there, the more used GPU.
  REQUIRE(Run(*s, Mig("o", "VC1", -1, "1g.5gb")) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "o") == GpuOf(*s, "b"));
  CHECK(s->GetGroup("o").state == GroupState::kOpportunistic);
  const V inst = MigInstances(*s);
  CHECK(std::find(inst.begin(), inst.end(), GpuOf(*s, "b") + ":1g.5gb@2=o") != inst.end());
}

TEST_CASE("MIG guarantees: own VC's GPUs only, opportunistic victims whole", "[mig]") {
  auto s = MakeMig();
  // VC2's guaranteed pods never use VC1's GPUs: three 4g need three GPUs, VC2 has two.
  REQUIRE(Run(*s, Mig("v1", "VC2", 0, "4g.20gb")) == Outcome::kPlaced);
  REQUIRE(Run(*s, Mig("v2", "VC2", 0, "4g.20gb")) == Outcome::kPlaced);
  CHECK(Run(*s, Mig("v3", "VC2", 0, "4g.20gb")) == Outcome::kWaiting);
  // An opportunistic gang of VC2 opens VC1's idle GPUs.
  REQUIRE(Run(*s, Mig("opp", "VC2", -1, "7g.40gb", 2)) == Outcome::kPlaced);
  CHECK(s->GetGroup("opp").state == GroupState::kOpportunistic);
  // VC1 takes its two A100 back as a whole group: the opportunistic group is the victim.
  ScheduleResult res;
  REQUIRE(Run(*s, Whole("w", "VC1", 0, 2, "A100"), &res) == Outcome::kPreempting);
  CHECK(res.victims == V{"opp"});
  CHECK(s->GetGroup("opp").state == GroupState::kBeingPreempted);
  REQUIRE(s->Release("opp").ok());
  CHECK(Run(*s, Whole("w", "VC1", 0, 2, "A100")) == Outcome::kPlaced);
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("MIG reconfiguration: only on an idle GPU, counted", "[mig]") {
  auto s = MakeMig();
  REQUIRE(Run(*s, Mig("f1", "VC1", 0, "7g.40gb")) == Outcome::kPlaced);
  REQUIRE(Run(*s, Mig("f2", "VC1", 0, "7g.40gb")) == Outcome::kPlaced);
  REQUIRE(s->Release("f1").ok());
  REQUIRE(s->Release("f2").ok());
  // Both of VC1's A100 keep a free 7g layout (the hardware keeps it): the next 1g.5gb has
  // no room on whichever GPU it gets, and that GPU is idle: reconfigured, counted once.
  CHECK(Reconfigurations(*s) == 0);
  REQUIRE(Run(*s, Mig("g", "VC1", 0, "1g.5gb")) == Outcome::kPlaced);
  CHECK(Reconfigurations(*s) == 1);
  const V inst = MigInstances(*s);
  CHECK(std::find(inst.begin(), inst.end(), GpuOf(*s, "g") + ":1g.5gb@6=g") != inst.end());
  // A 7g now: the busy GPU is not reconfigured; the other one's free 7g is reused.
  REQUIRE(Run(*s, Mig("h", "VC1", 0, "7g.40gb")) == Outcome::kPlaced);
  CHECK(GpuOf(*s, "h") != GpuOf(*s, "g"));
  CHECK(Reconfigurations(*s) == 1);
  // A fractional share never joins a GPU with MIG instances: it opens... none is left.
  CHECK(Run(*s, Frac("fr", "VC1", 0, 100, {"A100"})) == Outcome::kWaiting);
}

TEST_CASE("MIG reservations, strict Recover and SaveState", "[mig]") {
  auto s = MakeMig();
  GroupRequest r = Mig("r", "VC1", 0, "3g.20gb");
  absl::StatusOr<ScheduleResult> res = s->Schedule(r, Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  CHECK(s->GetGroup("r").state == GroupState::kReserved);
  CHECK(s->CheckInvariants().ok());
  GroupRequest other = r;
  other.members[0].mig_profile = "4g.20gb";
  CHECK(s->Allocate(other, res->placement).status().code() ==
        absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->Allocate(r, res->placement).ok());
  const std::string gpu = GpuOf(*s, "r");
  // A reservation on the open GPU holds its instance; Unreserve frees it (configured).
  GroupRequest q = Mig("q", "VC1", 0, "4g.20gb");
  res = s->Schedule(q, Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  CHECK(MigInstances(*s) == V{gpu + ":4g.20gb@0=q", gpu + ":3g.20gb@4=r"});
  REQUIRE(s->Unreserve("q").ok());
  CHECK(MigInstances(*s) == V{gpu + ":4g.20gb@0=-", gpu + ":3g.20gb@4=r"});
  CHECK(s->CheckInvariants().ok());
  // SaveState and GetGroupRecord record MIG groups (state format 3,
  // tests/unit/persistence/mig_host_state_test.cc): the record names r's instance.
  absl::StatusOr<std::string> saved = s->SaveState();
  REQUIRE(saved.ok());
  absl::StatusOr<GroupRecord> rec = s->GetGroupRecord("r");
  REQUIRE(rec.ok());
  CHECK(rec->placement.pods[0].mig_profile == "3g.20gb");
  CHECK(rec->placement.pods[0].mig_start == 4);
  // Recover: a 4g on the same GPU fits (reuses the free 4g@0); a 1g.5gb does not (no room,
  // busy); a fractional share cannot join MIG instances.
  Placement at;
  at.chain = res->placement.chain;
  at.pods = {res->placement.pods[0]};
  REQUIRE(s->Recover(Mig("rq", "VC1", 0, "4g.20gb"), at).ok());
  CHECK(MigInstances(*s) == V{gpu + ":4g.20gb@0=rq", gpu + ":3g.20gb@4=r"});
  auto refused = [&](const GroupRequest& g, const std::string& what) {
    absl::StatusOr<AllocateInfo> info = s->Recover(g, at);
    REQUIRE(!info.ok());
    INFO(info.status().message());
    CHECK(info.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(std::string(info.status().message()).find(what) != std::string::npos);
  };
  refused(Mig("r1", "VC1", 0, "1g.5gb"), "group r1: pod 0");
  REQUIRE(s->Release("rq").ok());
  refused(Frac("r2", "VC1", 0, 100, {"A100"}), "holds MIG instances");
  CHECK(s->GetGroup("r1").state == GroupState::kAbsent);
  CHECK(s->GetGroup("r2").state == GroupState::kAbsent);
  REQUIRE(s->Release("r").ok());
  CHECK(s->Groups().empty());
  CHECK(s->SaveState().ok());
  CHECK(s->CheckInvariants().ok());
}

// A MIG pod that also asks node CPU or host memory is a MIG pod (it once went down the
// whole-GPU host path: a whole GPU, no instance): the MIG path picks its instance, and its
// CPU and memory are counted on its node from Allocate to Release, as a fractional pod's.
TEST_CASE("MIG pods with CPU and host memory get an instance and count on their node",
          "[mig][hosts]") {
  absl::StatusOr<std::unique_ptr<Scheduler>> made = Scheduler::Create(MigHostSpec());
  REQUIRE(made.ok());
  Scheduler& s = **made;
  GroupRequest a = Mig("a", "VC1", 0, "1g.5gb");
  a.members[0].cpu_milli = 6000;
  a.members[0].memory_mib = 1000;
  REQUIRE(Run(s, a) == Outcome::kPlaced);
  const std::string gpu = GpuOf(s, "a");
  CHECK(MigInstances(s) == V{gpu + ":1g.5gb@6=a"});
  const GroupStatus st = s.GetGroup("a");
  REQUIRE(st.placement.pods.size() == 1);
  CHECK(st.placement.pods[0].mig_profile == "1g.5gb");
  CHECK(st.placement.pods[0].mig_start == 6);
  const std::string node = st.placement.pods[0].node;
  // VC1's A100 cells are one node (8000 CPU milli): 6000 are a's, 3000 more do not fit.
  GroupRequest b = Mig("b", "VC1", 0, "1g.5gb");
  b.members[0].cpu_milli = 3000;
  CHECK(Run(s, b) == Outcome::kWaiting);
  CHECK(s.GetGroup("b").state == GroupState::kAbsent);
  b.members[0].cpu_milli = 2000;
  REQUIRE(Run(s, b) == Outcome::kPlaced);
  CHECK(s.GetGroup("b").placement.pods[0].node == node);
  CHECK(s.GetGroup("b").placement.pods[0].mig_profile == "1g.5gb");
  // Host memory too: 64000 MiB on the node, 1000 are a's.
  GroupRequest m = Mig("m", "VC1", 0, "1g.5gb");
  m.members[0].memory_mib = 63500;
  CHECK(Run(s, m) == Outcome::kWaiting);
  m.members[0].memory_mib = 63000;
  REQUIRE(Run(s, m) == Outcome::kPlaced);
  CHECK(s.GetGroup("m").placement.pods[0].node == node);
  REQUIRE(s.Release("m").ok());
  // The record keeps the CPU and memory; Release gives them back.
  absl::StatusOr<GroupRecord> rec = s.GetGroupRecord("a");
  REQUIRE(rec.ok());
  CHECK(rec->request.members[0].cpu_milli == 6000);
  CHECK(rec->request.members[0].memory_mib == 1000);
  CHECK(rec->placement.pods[0].mig_start == 6);
  REQUIRE(s.Release("a").ok());
  GroupRequest c = Mig("c", "VC1", 0, "1g.5gb");
  c.members[0].cpu_milli = 6000;
  REQUIRE(Run(s, c) == Outcome::kPlaced);
  CHECK(s.GetGroup("c").placement.pods[0].node == node);
  CHECK(s.GetGroup("c").placement.pods[0].mig_profile == "1g.5gb");
  CHECK(s.CheckInvariants().ok());
}

// Recover and AllocateRecord take the instance a placement names (`mig_start`, as records
// and GetGroup give it), as Restore does; without one the rule chooses. Here the rule would
// put a lone 1g.5gb at 6, the record says 0.
TEST_CASE("MIG Recover and AllocateRecord take the recorded instance", "[mig]") {
  auto s = MakeMig();
  REQUIRE(Run(*s, Mig("a", "VC1", 0, "3g.20gb")) == Outcome::kPlaced);  // 3g@4
  REQUIRE(Run(*s, Mig("b", "VC1", 0, "1g.5gb")) == Outcome::kPlaced);   // 1g@0 beside it
  const std::string gpu = GpuOf(*s, "a");
  REQUIRE(MigInstances(*s) == V{gpu + ":1g.5gb@0=b", gpu + ":3g.20gb@4=a"});
  absl::StatusOr<GroupRecord> a = s->GetGroupRecord("a");
  absl::StatusOr<GroupRecord> b = s->GetGroupRecord("b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(b->placement.pods[0].mig_start == 0);
  // A fresh scheduler, b first: by the rule it would take 6 on the empty GPU.
  auto fresh = MakeMig();
  REQUIRE(fresh->AllocateRecord(*b).ok());
  CHECK(MigInstances(*fresh) == V{gpu + ":1g.5gb@0=b"});
  CHECK(fresh->GetGroup("b").placement.pods[0].mig_start == 0);
  REQUIRE(fresh->AllocateRecord(*a).ok());
  CHECK(MigInstances(*fresh) == V{gpu + ":1g.5gb@0=b", gpu + ":3g.20gb@4=a"});
  CHECK(fresh->CheckInvariants().ok());
  // Recover with a named instance: a free one is taken; a used one, a start the profile does
  // not allow, or an instance overlapping a configured one is refused naming the group and
  // pod (nothing changes); a profile other than the request's is kInvalidArgument.
  Placement at = b->placement;
  at.pods[0].mig_start = 1;
  REQUIRE(fresh->Recover(Mig("c", "VC1", 0, "1g.5gb"), at).ok());
  CHECK(fresh->GetGroup("c").placement.pods[0].mig_start == 1);
  auto refused = [&](const GroupRequest& g, int32_t start, absl::StatusCode code,
                     const std::string& what) {
    Placement p = b->placement;
    p.pods[0].mig_start = start;
    p.pods[0].mig_profile = g.members[0].mig_profile;
    if (code == absl::StatusCode::kInvalidArgument) p.pods[0].mig_profile = "2g.10gb";
    absl::StatusOr<AllocateInfo> info = fresh->Recover(g, p);
    REQUIRE(!info.ok());
    INFO(info.status().message());
    CHECK(info.status().code() == code);
    CHECK(std::string(info.status().message()).find("group " + g.name + ": pod 0") !=
          std::string::npos);
    CHECK(std::string(info.status().message()).find(what) != std::string::npos);
    CHECK(fresh->GetGroup(g.name).state == GroupState::kAbsent);
  };
  refused(Mig("d", "VC1", 0, "1g.5gb"), 0, absl::StatusCode::kFailedPrecondition,
          "the 1g.5gb instance at 0 is used by b");
  refused(Mig("e", "VC1", 0, "2g.10gb"), 3, absl::StatusCode::kFailedPrecondition,
          "3 is not an allowed start of profile 2g.10gb");
  refused(Mig("h", "VC1", 0, "1g.5gb"), 5, absl::StatusCode::kFailedPrecondition,
          "overlaps the GPU's configured instances");
  refused(Mig("f", "VC1", 0, "1g.5gb"), 4, absl::StatusCode::kFailedPrecondition,
          "is a 3g.20gb, not a 1g.5gb");
  refused(Mig("g", "VC1", 0, "1g.5gb"), 2, absl::StatusCode::kInvalidArgument,
          "names a 2g.10gb instance, the request 1g.5gb");
  CHECK(MigInstances(*fresh) == V{gpu + ":1g.5gb@0=b", gpu + ":1g.5gb@1=c", gpu + ":3g.20gb@4=a"});
  CHECK(fresh->CheckInvariants().ok());
}

}  // namespace
}  // namespace hived::testdata
