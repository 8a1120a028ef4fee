// Strict restore (issue 29, item 5): a saved state names its cluster (the spec fingerprint);
// a state of another cluster is refused unless asked for, and then reported; no mode ever
// leaves a group on a node that does not exist; old documents without one still restore.
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"

namespace hived {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TwoRacksYaml() {
  return ReadFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
}

ClusterSpec Load(const std::string& yaml) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(yaml, "test.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

// Every node of two-racks.yaml renamed ("rack0-node0" -> "rack0-node0-new").
std::string RenameEveryNode(const std::string& yaml) {
  std::string out = yaml;
  for (int rack = 0; rack < 2; ++rack) {
    for (int node = 0; node < 4; ++node) {
      const std::string name = absl::StrCat("rack", rack, "-node", node);
      out = absl::StrReplaceAll(out, {{absl::StrCat("cellAddress: ", name),
                                       absl::StrCat("cellAddress: ", name, "-new")}});
    }
  }
  return out;
}

// A state with running gangs of every VC of two-racks.yaml.
std::string SavedWithGroups(const ClusterSpec& spec, uint32_t seed) {
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  std::mt19937 rng(seed);
  const std::vector<std::string> vcs = {"prod", "research", "dev", "test"};
  for (int32_t i = 0; i < 16; ++i) {
    GroupRequest req;
    req.name = absl::StrCat("g", i);
    req.vc = vcs[rng() % vcs.size()];
    req.priority = static_cast<Priority>(rng() % 2);
    req.members = {{static_cast<int32_t>(1 + rng() % 2), static_cast<int32_t>(1 << (rng() % 3))}};
    absl::StatusOr<ScheduleResult> r = (*s)->Schedule(req, Phase::kPreempting);
    REQUIRE(r.ok());
    if (r->outcome == Outcome::kPlaced) {
      REQUIRE((*s)->Allocate(req, r->placement).ok());
    } else if (r->outcome == Outcome::kPreempting) {
      REQUIRE((*s)->Unreserve(req.name).ok());
    }
  }
  REQUIRE((*s)->SetNodeHealthy("rack0-node1", /*healthy=*/false).ok());
  absl::StatusOr<std::string> saved = (*s)->SaveState();
  REQUIRE(saved.ok());
  REQUIRE(!(*s)->Groups().empty());
  return *saved;
}

// No group runs on nodes the scheduler does not have: each holds leaves on a node it has
// (a partial group keeps its whole placement in its record, for a later restore into a
// cluster that has the nodes again, but holds only the leaves this one has).
void RequireNoGhosts(const Scheduler& s) {
  std::set<std::string> nodes;
  for (const NodeStatus& n : s.Nodes()) nodes.insert(n.name);
  for (const GroupStatus& g : s.Groups()) {
    int32_t known = 0;
    for (const PodPlacement& pod : g.placement.pods) known += nodes.count(pod.node) == 1;
    CAPTURE(g.name);
    CHECK(known > 0);
  }
  REQUIRE(s.CheckInvariants().ok());
}

TEST_CASE("SpecFingerprint: is deterministic and changes with the nodes and the VCs",
          "[persistence][unit]") {
  const std::string yaml = TwoRacksYaml();
  auto a = Scheduler::Create(Load(yaml));
  auto b = Scheduler::Create(Load(yaml));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const std::string fp = (*a)->SpecFingerprint();
  CHECK(fp.size() == 16);
  CHECK(fp == (*b)->SpecFingerprint());
  // Comments do not count; a node's name and a VC's reservation do.
  auto commented = Scheduler::Create(Load(absl::StrCat("# a comment\n", yaml)));
  REQUIRE(commented.ok());
  CHECK((*commented)->SpecFingerprint() == fp);
  auto renamed = Scheduler::Create(Load(
      absl::StrReplaceAll(yaml, {{"cellAddress: rack0-node2", "cellAddress: rack0-node2-new"}})));
  REQUIRE(renamed.ok());
  CHECK((*renamed)->SpecFingerprint() != fp);
  auto resized = Scheduler::Create(Load(
      absl::StrReplaceAll(yaml, {{"    - cellType: V100-RACK.V100-NODE\n      cellNumber: 2",
                                  "    - cellType: V100-RACK.V100-NODE\n      cellNumber: 1"}})));
  REQUIRE(resized.ok());
  CHECK((*resized)->SpecFingerprint() != fp);
  // The saved state names it.
  absl::StatusOr<std::string> saved = (*a)->SaveState();
  REQUIRE(saved.ok());
  CHECK(saved->find(absl::StrCat("\"config\":\"", fp, "\"")) != std::string::npos);
}

TEST_CASE("Restore: the same cluster's state is reported as such", "[persistence][unit]") {
  const ClusterSpec spec = Load(TwoRacksYaml());
  const std::string saved = SavedWithGroups(spec, 1);
  RestoreReport report;
  auto s = Scheduler::Restore(spec, saved, &report);
  REQUIRE(s.ok());
  CHECK(report.spec_match == SpecMatch::kSame);
  CHECK(report.saved_fingerprint == (*s)->SpecFingerprint());
  CHECK(report.cluster_fingerprint == (*s)->SpecFingerprint());
  CHECK(report.notes.empty());
}

TEST_CASE("Restore: a state with every node renamed is refused, or restored without ghosts",
          "[persistence][unit]") {
  const std::string yaml = TwoRacksYaml();
  const ClusterSpec original = Load(yaml);
  const ClusterSpec renamed = Load(RenameEveryNode(yaml));
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const std::string saved = SavedWithGroups(original, seed);
    RestoreReport report;
    auto refused = Scheduler::Restore(renamed, saved, &report);
    REQUIRE(refused.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(refused.status().message().find("$.config: the state was saved on another cluster") !=
          std::string::npos);
    CHECK(refused.status().message().find("kRestoreAnyway") != std::string::npos);

    auto s =
        Scheduler::Restore(renamed, saved, &report, RestoreOptions{SpecMismatch::kRestoreAnyway});
    REQUIRE(s.ok());
    CHECK(report.spec_match == SpecMatch::kDifferent);
    CHECK(report.saved_fingerprint != report.cluster_fingerprint);
    REQUIRE(!report.notes.empty());
    CHECK(report.notes[0].find("$.config: saved on another cluster") != std::string::npos);
    // Every group ran only on renamed nodes: all dropped, none left on a node that is gone.
    REQUIRE(!report.groups.empty());
    for (const RestoreReport::Group& g : report.groups) {
      CAPTURE(g.name, g.reason);
      CHECK(g.outcome == RestoreOutcome::kDropped);
      CHECK(g.reason.find("none of its leaf cells is in the cluster") != std::string::npos);
    }
    CHECK((*s)->Groups().empty());
    CHECK(report.unknown_nodes == std::vector<std::string>{"rack0-node1"});
    RequireNoGhosts(**s);
    // A fixed point after one restart.
    absl::StatusOr<std::string> once = (*s)->SaveState();
    REQUIRE(once.ok());
    auto again = Scheduler::Restore(renamed, *once);
    REQUIRE(again.ok());
    CHECK(*(*again)->SaveState() == *once);
  }
}

TEST_CASE("Restore: a state saved on another cluster is refused, or restored without ghosts",
          "[persistence][unit]") {
  const ClusterSpec two_racks = Load(TwoRacksYaml());
  const ClusterSpec other =
      Load(ReadFile(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-hetero-2types.yaml"));
  const std::string saved = SavedWithGroups(two_racks, 3);
  auto refused = Scheduler::Restore(other, saved);
  REQUIRE(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  RestoreReport report;
  auto s = Scheduler::Restore(other, saved, &report, RestoreOptions{SpecMismatch::kRestoreAnyway});
  REQUIRE(s.ok());
  CHECK(report.spec_match == SpecMatch::kDifferent);
  for (const RestoreReport::Group& g : report.groups) {
    CAPTURE(g.name, g.reason);
    CHECK(g.outcome == RestoreOutcome::kDropped);
  }
  RequireNoGhosts(**s);
}

TEST_CASE("Restore: a group partly on renamed nodes keeps only the leaves the cluster has",
          "[persistence][unit]") {
  const std::string yaml = TwoRacksYaml();
  const ClusterSpec original = Load(yaml);
  const ClusterSpec renamed = Load(
      absl::StrReplaceAll(yaml, {{"cellAddress: rack0-node0", "cellAddress: rack0-node0-new"}}));
  auto s = Scheduler::Create(original);
  REQUIRE(s.ok());
  GroupRequest req;
  req.name = "wide";
  req.vc = "prod";
  req.members = {{/*pod_number=*/2, /*leaf_cell_number=*/8}};
  auto r = (*s)->Schedule(req, Phase::kPreempting);
  REQUIRE(r.ok());
  REQUIRE(r->outcome == Outcome::kPlaced);
  REQUIRE((*s)->Allocate(req, r->placement).ok());
  absl::StatusOr<std::string> saved = (*s)->SaveState();
  REQUIRE(saved.ok());
  RestoreReport report;
  auto restored =
      Scheduler::Restore(renamed, *saved, &report, RestoreOptions{SpecMismatch::kRestoreAnyway});
  REQUIRE(restored.ok());
  REQUIRE(report.groups.size() == 1);
  const bool on_node0 =
      r->placement.pods[0].node == "rack0-node0" || r->placement.pods[1].node == "rack0-node0";
  CHECK(report.groups[0].outcome == (on_node0 ? RestoreOutcome::kPartial : RestoreOutcome::kKept));
  RequireNoGhosts(**restored);
}

TEST_CASE("Restore: an old document without a fingerprint restores, reported unknown",
          "[persistence][unit]") {
  const ClusterSpec spec = Load(TwoRacksYaml());
  const std::string saved = SavedWithGroups(spec, 2);
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  const std::string old = absl::StrReplaceAll(
      saved, {{absl::StrCat("\"config\":\"", (*s)->SpecFingerprint(), "\","), ""}});
  REQUIRE(old != saved);
  RestoreReport report;
  auto restored = Scheduler::Restore(spec, old, &report);
  REQUIRE(restored.ok());
  CHECK(report.spec_match == SpecMatch::kUnknown);
  CHECK(report.saved_fingerprint.empty());
  REQUIRE(!report.notes.empty());
  CHECK(report.notes[0].find("names no cluster") != std::string::npos);
  RequireNoGhosts(**restored);
  CHECK((*restored)->Groups().size() == (*Scheduler::Restore(spec, saved))->Groups().size());
}

TEST_CASE("Restore: a refused state quotes at most 100 bytes of a huge fingerprint",
          "[persistence][unit]") {
  const ClusterSpec spec = Load(TwoRacksYaml());
  const std::string saved = SavedWithGroups(spec, 4);
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  const std::string huge(50000, 'f');
  const std::string forged =
      absl::StrReplaceAll(saved, {{absl::StrCat("\"config\":\"", (*s)->SpecFingerprint(), "\""),
                                   absl::StrCat("\"config\":\"", huge, "\"")}});
  auto refused = Scheduler::Restore(spec, forged);
  REQUIRE(!refused.ok());
  CHECK(refused.status().message().size() < 400);
  const std::string long_fp(200, 'f');
  auto refused2 = Scheduler::Restore(
      spec,
      absl::StrReplaceAll(saved, {{absl::StrCat("\"config\":\"", (*s)->SpecFingerprint(), "\""),
                                   absl::StrCat("\"config\":\"", long_fp, "\"")}}));
  REQUIRE(refused2.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(refused2.status().message().size() < 400);
}

}  // namespace
}  // namespace hived
