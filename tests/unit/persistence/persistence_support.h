// Helpers of the persistence unit tests (persistence_test.cc, persistence_restore_test.cc):
// the two-rack cluster, requests, and saving and restoring through the public API.
#ifndef HIVED_TESTS_UNIT_PERSISTENCE_PERSISTENCE_SUPPORT_H_
#define HIVED_TESTS_UNIT_PERSISTENCE_PERSISTENCE_SUPPORT_H_

#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "unit/persistence/mutate.h"

namespace hived::persistence_test {

using hived::GroupRecord;
using hived::GroupRequest;
using hived::GroupState;
using hived::Outcome;
using hived::Phase;
using hived::RestoreOutcome;
using hived::RestoreReport;
using hived::Scheduler;

// 2 racks x 4 nodes x 8 GPUs; v1 a rack, v2 two nodes, v3 a pinned node + a socket, v4 a
// socket (tests/testdata/sched-two-racks-4vc.yaml).
inline std::string TwoRacksPath() {
  return std::string(HIVED_SOURCE_DIR) + "/tests/testdata/sched-two-racks-4vc.yaml";
}

inline hived::ClusterSpec TwoRacks() {
  auto spec = hived::LoadClusterSpecFile(TwoRacksPath());
  REQUIRE(spec.ok());
  return *spec;
}

inline std::unique_ptr<Scheduler> New(const hived::ClusterSpec& spec) {
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  return std::move(*s);
}

inline GroupRequest Req(const std::string& name, const std::string& vc, int priority, int pods,
                        int leaves) {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.priority = priority;
  r.members = {{pods, leaves}};
  return r;
}

// A group in v3's pinned node.
inline GroupRequest PinnedReq(int priority, int pods, int leaves) {
  GroupRequest r = Req("pinned", "v3", priority, pods, leaves);
  r.pinned_cell_id = "v3-pin";
  return r;
}

// Schedules and allocates; REQUIREs kPlaced.
inline void Run(Scheduler& s, const GroupRequest& r) {
  auto res = s.Schedule(r, Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  REQUIRE(s.Allocate(r, res->placement).ok());
}

// Two whole nodes of v2, the first released: `b` runs on v2's second virtual node, where
// HiveD's recovery rule alone (without the recorded virtual cells) would bind the first.
inline void RunOnSecondNode(Scheduler& s) {
  Run(s, Req("a", "v2", 0, 1, 8));
  Run(s, Req("b", "v2", 0, 1, 8));
  REQUIRE(s.Release("a").ok());
}

inline std::string Save(const Scheduler& s) {
  absl::StatusOr<std::string> state = s.SaveState();
  REQUIRE(state.ok());
  return *state;
}

inline std::string ErrorOf(const hived::ClusterSpec& spec, const std::string& state) {
  auto restored = Scheduler::Restore(spec, state);
  REQUIRE_FALSE(restored.ok());
  CHECK(restored.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(restored.status().message());
}

inline GroupRecord FullRecord() {
  GroupRecord rec;
  rec.request.name = "job-7";
  rec.request.vc = "v3";
  rec.request.priority = 5;
  rec.request.leaf_cell_type = "GPU";
  rec.request.pinned_cell_id = "v3-pin";
  rec.request.lazy_preemption = true;
  rec.request.members = {{1, 2}, {2, 1}};
  rec.state = GroupState::kOpportunistic;
  rec.downgrade_reason = "lazily preempted by group big \"one\"";
  rec.preemptor = "big";
  rec.placement.chain = "GRACK";
  rec.placement.pods = {{1, "r0n2", {0}, {"GSOCKET"}},
                        {1, "r0n2", {1}, {"GSOCKET"}},
                        {2, "r0n2", {2, 3}, {"GSOCKET", ""}}};
  rec.virtual_leaf_cells = {"v3/1/0", "v3/1/1", "v3/1/2", ""};
  return rec;
}
}  // namespace hived::persistence_test

#endif  // HIVED_TESTS_UNIT_PERSISTENCE_PERSISTENCE_SUPPORT_H_
