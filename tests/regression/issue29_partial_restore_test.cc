// Regression (issue 29, "A restored state does not always survive the next restart"):
// restoring a state into the same cluster with one node renamed brings a group back
// partial (its leaves on the old node name are skipped). Its saved record then omitted the
// group's virtual leaves (they no longer lined up with the placement, which keeps every
// pod), so restoring that second save re-derived them by HiveD's rule, onto virtual cells
// other than the ones the saved bindings named (skipped as "bound already"), and the third
// save differed from the second. Whatever `Restore` accepts must be a fixed point after one
// restart: SaveState(Restore(SaveState(Restore(s)))) == SaveState(Restore(s)).
#include <cstdint>
#include <fstream>
#include <memory>
#include <random>
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

ClusterSpec Load(const std::string& yaml) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(yaml, "two-racks.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

// Random gangs of the example cluster's VCs, some released again.
std::string SavedAfterRandomGroups(const ClusterSpec& spec, uint32_t seed) {
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  std::mt19937 rng(seed);
  const std::vector<std::string> vcs = {"prod", "research", "dev", "test"};
  const std::vector<int32_t> sizes = {1, 2, 4, 8};
  std::vector<std::string> running;
  for (int32_t i = 0; i < 24; ++i) {
    GroupRequest req;
    req.name = absl::StrCat("g", i);
    req.vc = vcs[rng() % vcs.size()];
    req.priority = static_cast<Priority>(rng() % 3) - 1;  // -1, 0 or 1
    req.members = {{static_cast<int32_t>(1 + rng() % 3), sizes[rng() % sizes.size()]}};
    absl::StatusOr<ScheduleResult> r = (*s)->Schedule(req, Phase::kPreempting);
    REQUIRE(r.ok());
    if (r->outcome == Outcome::kPlaced) {
      REQUIRE((*s)->Allocate(req, r->placement).ok());
      running.push_back(req.name);
    } else if (r->outcome == Outcome::kPreempting) {
      REQUIRE((*s)->Unreserve(req.name).ok());
    }
    if (!running.empty() && rng() % 4 == 0) {
      const size_t k = rng() % running.size();
      REQUIRE((*s)->Release(running[k]).ok());
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  absl::StatusOr<std::string> saved = (*s)->SaveState();
  REQUIRE(saved.ok());
  return *saved;
}

std::string RestoreAndSave(const ClusterSpec& spec, const std::string& state,
                           RestoreReport* report = nullptr) {
  absl::StatusOr<std::unique_ptr<Scheduler>> s =
      Scheduler::Restore(spec, state, report, RestoreOptions{SpecMismatch::kRestoreAnyway});
  REQUIRE(s.ok());
  REQUIRE((*s)->CheckInvariants().ok());
  absl::StatusOr<std::string> saved = (*s)->SaveState();
  REQUIRE(saved.ok());
  return *saved;
}

TEST_CASE("Regression: a state restored with a node renamed is a fixed point after one restart",
          "[persistence][regression]") {
  const std::string yaml =
      ReadFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  const ClusterSpec original = Load(yaml);
  int32_t partial_groups = 0;
  for (const char* node : {"rack0-node0", "rack0-node1", "rack1-node0", "rack1-node2"}) {
    const ClusterSpec renamed = Load(absl::StrReplaceAll(
        yaml,
        {{absl::StrCat("cellAddress: ", node), absl::StrCat("cellAddress: ", node, "-new")}}));
    for (uint32_t seed = 1; seed <= 12; ++seed) {
      CAPTURE(node, seed);
      const std::string s0 = SavedAfterRandomGroups(original, seed);
      RestoreReport report;
      const std::string s1 = RestoreAndSave(renamed, s0, &report);
      for (const RestoreReport::Group& g : report.groups) {
        if (g.outcome == RestoreOutcome::kPartial) ++partial_groups;
      }
      const std::string s2 = RestoreAndSave(renamed, s1);
      REQUIRE(s2 == s1);
      // And back into the original cluster: every saved pod is there again.
      const std::string back = RestoreAndSave(original, s1);
      REQUIRE(RestoreAndSave(original, back) == back);
    }
  }
  CHECK(partial_groups > 0);  // the case the test is about happened
}

// Found by tests/fuzz/state_fuzz.cc: a record saved downgraded (opportunistic at a priority
// >= 0) whose leaves the cluster lacks was reported partial with no reason: the recorded
// downgrade reason replaced the note naming the skipped leaves.
TEST_CASE("Regression: a downgraded group restored partially is reported with the leaves skipped",
          "[persistence][regression]") {
  const ClusterSpec spec =
      Load(ReadFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml"));
  const std::string reason = GENERATE(std::string(), std::string("lazily preempted by group x"));
  CAPTURE(reason);
  const std::string state = absl::StrCat(
      R"({"schema":"hived.scheduler-state","version":2,"badNodes":[],"doomedCells":[],)",
      R"("groups":[{"name":"g","virtualCluster":"prod","priority":0,"members":[{"podNumber":2,)",
      R"("leafCellNumber":2}],"state":"opportunistic",)",
      reason.empty() ? "" : absl::StrCat(R"("downgradeReason":")", reason, R"(",)"),
      R"("placement":{"cellChain":"V100-RACK","pods":[{"leafCellNumber":2,)",
      R"("physicalNode":"rack0-node0","physicalLeafCellIndices":[0,1]},{"leafCellNumber":2,)",
      R"("physicalNode":"gone","physicalLeafCellIndices":[6,7]}]}}],"bindings":[]})");
  RestoreReport report;
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Restore(spec, state, &report);
  REQUIRE(s.ok());
  REQUIRE(report.groups.size() == 1);
  CHECK(report.groups[0].outcome == RestoreOutcome::kPartial);
  CHECK(report.groups[0].reason.find("leaf cells not in the cluster are ignored: gone:6, gone:7") !=
        std::string::npos);
  CHECK(report.groups[0].reason.find(reason) != std::string::npos);
  // The group still runs downgraded with its recorded reason, as saved.
  CHECK((*s)->GetGroup("g").downgrade_reason == reason);
  const std::string saved = RestoreAndSave(spec, state);
  CHECK(RestoreAndSave(spec, saved) == saved);
}

}  // namespace
}  // namespace hived
