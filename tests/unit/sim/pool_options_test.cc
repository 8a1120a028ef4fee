// Trace jobs naming a pinned cell under every policy, the pool policies' node placement
// (pack, first-fit, spread) and elastic-quota's youngest-first reclaim, on hand-checked
// traces (start times and nodes derived in the comments).
#include <memory>
#include <string>

#include "sim/engine/engine.h"
#include "sim/metrics/metrics.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_transform.h"
#include "support/catch.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

Trace Parse(const std::string& csv) {
  absl::StatusOr<Trace> t = HivedTraceSource({}).Parse(csv, "t.csv");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *t;
}

struct Outcome {
  Trace trace;
  EngineResult result;
  const JobRecord& Job(const std::string& id) const { return testing::JobById(trace, result, id); }
};

// Replays `trace` as `run` does: pinned cells checked, the named ones passed to the policy.
std::unique_ptr<Outcome> Run(PolicyKind policy, const std::string& config, Trace trace,
                             PolicyOptions options = {}) {
  const ClusterSpec spec = testing::LoadSpec(config);
  const SpecInfo info(spec);
  REQUIRE(CheckPinnedCells(info, false, &trace).ok());
  options.named_pinned_cells = NamedPinnedCells(trace);
  auto out = std::make_unique<Outcome>();
  out->result = testing::Replay(policy, spec, info, trace, options);
  out->trace = std::move(trace);
  return out;
}

// pinned.yaml: A = one node anywhere + pinned node n2 (a-pin), B = one node. A submits at 0
// two pinned (priority 1, so the waiting p2 does not block the unpinned jobs' FIFO line) and
// two unpinned node-sized 100 s jobs.
constexpr const char* kPinnedTrace =
    "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration,pinned_cell\n"
    "p1,0,A,1,1,8,,100,a-pin\n"
    "p2,0,A,1,1,8,,100,a-pin\n"
    "u1,0,A,0,1,8,,100,\n"
    "u2,0,A,0,1,8,,100,\n";

TEST_CASE("Pinned trace jobs: the pinned cell serves them under every policy", "[sim][unit]") {
  SECTION("hived, private and quota: one job per pinned node, one per virtual node") {
    for (PolicyKind policy : {PolicyKind::kHived, PolicyKind::kPrivate, PolicyKind::kQuota}) {
      INFO(PolicyKindName(policy));
      auto o = Run(policy, "sim/pinned.yaml", Parse(kPinnedTrace));
      CHECK(o->Job("p1").first_start == 0);
      CHECK(o->Job("p2").first_start == 100);
      CHECK(o->Job("u1").first_start == 0);
      CHECK(o->Job("u2").first_start == 100);  // the pinned node is not the VC's to use
      // A's guarantee counts the pinned node a job names: 8 + 8.
      CHECK(o->result.vc_guaranteed_gpus == std::vector<int64_t>{16, 8});
    }
  }
  SECTION("hived places pinned jobs on the pinned node") {
    auto o = Run(PolicyKind::kHived, "sim/pinned.yaml", Parse(kPinnedTrace));
    CHECK(o->Job("p1").nodes == NodeList{2});
    CHECK(o->Job("p2").nodes == NodeList{2});
    CHECK(o->Job("u1").nodes != NodeList{2});
  }
  SECTION("yarn-cs: unpinned jobs borrow B's idle node; pinned jobs never borrow") {
    auto o = Run(PolicyKind::kYarnCs, "sim/pinned.yaml", Parse(kPinnedTrace));
    CHECK(o->Job("p1").first_start == 0);
    CHECK(o->Job("p2").first_start == 100);
    CHECK(o->Job("u1").first_start == 0);
    CHECK(o->Job("u2").first_start == 0);
  }
  SECTION("a pinned cell no job names counts for no policy") {
    Trace t = Parse(
        "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n"
        "u1,0,A,0,1,8,,100\n");
    for (PolicyKind policy : {PolicyKind::kHived, PolicyKind::kQuota, PolicyKind::kYarnCs}) {
      auto o = Run(policy, "sim/pinned.yaml", t);
      CHECK(o->result.vc_guaranteed_gpus == std::vector<int64_t>{8, 8});
    }
  }
  SECTION("a pinned job larger than its pinned cell is rejected with the reason") {
    auto o = Run(PolicyKind::kHived, "sim/pinned.yaml",
                 Parse("job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration,"
                       "pinned_cell\nbig,0,A,0,2,8,,100,a-pin\n"));
    CHECK(o->Job("big").state == JobState::kRejected);
    CHECK(o->Job("big").reason() == "needs 16 GPUs but pinned cell a-pin has only 8");
  }
}

TEST_CASE("Pinned trace jobs: bad pinned cells are located row errors", "[sim][unit]") {
  const SpecInfo info(testing::LoadSpec("sim/pinned.yaml"));
  const std::string csv =
      "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration,pinned_cell\n"
      "ok,0,A,0,1,8,,100,a-pin\n"
      "nope,0,A,0,1,8,,100,b-pin\n"
      "other,0,B,0,1,8,,100,a-pin\n"
      "gone,0,Z,0,1,8,,100,a-pin\n";
  SECTION("without --skip-bad-rows: every bad row, file:line:column") {
    Trace t = Parse(csv);
    absl::Status s = CheckPinnedCells(info, false, &t);
    REQUIRE(!s.ok());
    CHECK(absl::IsInvalidArgument(s));
    const std::string m(s.message());
    INFO(m);
    CHECK(m.find("t.csv:3:21: pinned cell 'b-pin' is not in the config") != std::string::npos);
    CHECK(m.find("t.csv:4:22: pinned cell 'a-pin' belongs to VC A, not to the job's VC B") !=
          std::string::npos);
    // A job of a VC the config lacks is rejected at submission, not here.
    CHECK(m.find(":5:") == std::string::npos);
  }
  SECTION("with --skip-bad-rows: the bad rows are dropped and counted") {
    TraceReadOptions skip;
    skip.skip_bad_rows = true;
    absl::StatusOr<Trace> t = HivedTraceSource(skip).Parse(csv, "t.csv");
    REQUIRE(t.ok());
    REQUIRE(CheckPinnedCells(info, true, &*t).ok());
    REQUIRE(t->jobs.size() == 2);
    CHECK(t->jobs[0].id == "ok");
    CHECK(t->jobs[1].id == "gone");
    CHECK(t->skipped_rows == 2);
  }
}

TEST_CASE("Trace reader: the optional pinned_cell column", "[sim][unit]") {
  Trace t = Parse(kPinnedTrace);
  REQUIRE(t.jobs.size() == 4);
  CHECK(t.jobs[0].pinned_cell == "a-pin");
  CHECK(t.jobs[0].line == 2);
  CHECK(t.jobs[2].pinned_cell.empty());
  CHECK(NamedPinnedCells(t) == std::vector<std::string>{"a-pin"});
  // Written back with the column, and read back the same.
  Trace again = Parse(TraceToCsv(t));
  CHECK(again.jobs[0].pinned_cell == "a-pin");
  CHECK(again.jobs[3].pinned_cell.empty());
  // Without pins the eight-column format is kept.
  CHECK(TraceToCsv(Parse("job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n"
                         "a,0,A,0,1,8,,100\n")) ==
        "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\na,0,A,0,1,8,,100\n");
  // A pinned cell name gets the same checks as other names.
  absl::StatusOr<Trace> bad = HivedTraceSource({}).Parse(
      "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration,pinned_cell\n"
      "a,0,A,0,1,8,,100, a-pin\n",
      "t.csv");
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.status().message()).find("t.csv:2:") != std::string::npos);
}

// one-rack.yaml: X reserves the rack of three 8-GPU nodes n0, n1, n2. Four-GPU jobs j1 (at 0)
// and j2 (at 1), a node-sized j3 (at 2) and j4 (at 3), all 1,000 s.
constexpr const char* kPlacementTrace =
    "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n"
    "j1,0,X,0,1,4,,1000\n"
    "j2,1,X,0,1,4,,1000\n"
    "j3,2,X,0,1,8,,1000\n"
    "j4,3,X,0,1,8,,1000\n";

std::unique_ptr<Outcome> RunPlacement(PolicyKind policy, NodePlacement placement) {
  PolicyOptions o;
  o.placement = placement;
  return Run(policy, "sim/one-rack.yaml", Parse(kPlacementTrace), o);
}

TEST_CASE("Pool placement: pack, first-fit and spread choose different nodes", "[sim][unit]") {
  for (PolicyKind policy : {PolicyKind::kYarnCs, PolicyKind::kElasticQuota, PolicyKind::kQuota}) {
    INFO(PolicyKindName(policy));
    SECTION("first-fit: j1, j2 share n0; j3 on n1, j4 on n2, all at once") {
      auto o = RunPlacement(policy, NodePlacement::kFirstFit);
      CHECK(o->Job("j1").nodes == NodeList{0});
      CHECK(o->Job("j2").nodes == NodeList{0});
      CHECK(o->Job("j3").nodes == NodeList{1});
      CHECK(o->Job("j4").nodes == NodeList{2});
      CHECK(o->Job("j4").first_start == 3);
    }
    SECTION("spread: j1 on n0, j2 on the emptiest n1, j3 on n2; j4 waits for j1 and j2") {
      auto o = RunPlacement(policy, NodePlacement::kSpread);
      CHECK(o->Job("j1").nodes == NodeList{0});
      CHECK(o->Job("j2").nodes == NodeList{1});
      CHECK(o->Job("j3").nodes == NodeList{2});
      // n0 and n1 each have 4 free GPUs: no node for 8 until j1 ends at 1000.
      CHECK(o->Job("j4").first_start == 1000);
    }
    SECTION("pack (HiveD's): j2 joins j1's node, so j4 starts at once") {
      auto o = RunPlacement(policy, NodePlacement::kPack);
      CHECK(o->Job("j2").nodes == o->Job("j1").nodes);
      CHECK(o->Job("j4").first_start == 3);
    }
  }
  SECTION("placement names") {
    CHECK(*ParseNodePlacement("first-fit") == NodePlacement::kFirstFit);
    CHECK(!ParseNodePlacement("best-fit").ok());
  }
}

// two-tenants.yaml: T1 and T2 each reserve a rack of two 8-GPU nodes (n0, n1 | n2, n3). T1's
// t1a, t1b (at 0) fill its guarantee; t1c (8 GPUs, at 5) borrows a node, t1d and t1e (4 GPUs
// each, at 6 and 7) share the last node. T2 then asks for one node at 10.
constexpr const char* kReclaimTrace =
    "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n"
    "t1a,0,T1,0,1,8,,1000\n"
    "t1b,0,T1,0,1,8,,1000\n"
    "t1c,5,T1,0,1,8,,1000\n"
    "t1d,6,T1,0,1,4,,1000\n"
    "t1e,7,T1,0,1,4,,1000\n"
    "t2a,10,T2,0,1,8,,100\n";

TEST_CASE("elastic-quota reclaims from the youngest borrowers first", "[sim][unit]") {
  auto o = Run(PolicyKind::kElasticQuota, "sim/two-tenants.yaml", Parse(kReclaimTrace));
  REQUIRE(o->Job("t1d").nodes == o->Job("t1e").nodes);
  // Youngest first: t1e (started 7) does not free a node alone (t1d, older, shares it), so
  // t1d (6) goes too; t1c (5) keeps running. Lost: 4 x 4 + 4 x 3 = 28 GPU-s, not t1c's 40.
  CHECK(o->Job("t2a").first_start == 10);
  CHECK(o->Job("t1c").preemptions == 0);
  CHECK(o->Job("t1d").preemptions == 1);
  CHECK(o->Job("t1e").preemptions == 1);
  CHECK(o->Job("t1d").gpu_seconds_lost() + o->Job("t1e").gpu_seconds_lost() == 28);
  CHECK(o->Job("t2a").nodes == o->Job("t1e").nodes);
  // They restart once t2a ends at 110.
  CHECK(o->Job("t1d").last_start == 110);
  CHECK(o->Job("t1e").last_start == 110);
}

}  // namespace
}  // namespace hived::sim
