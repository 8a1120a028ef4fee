// The three sharing policies through hived::Scheduler on tests/testdata/sim/small.yaml
// (2 racks x 2 nodes x 8 GPUs; A reserves a rack, B two 4-GPU sockets; one node spare), with
// start times derived by hand in the comments.
#include <map>
#include <memory>
#include <string>

#include "sim/engine/engine.h"
#include "sim/metrics/metrics.h"
#include "sim/policies/scheduler_backend.h"
#include "support/catch.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

struct Outcome {
  EngineResult result;
  std::map<std::string, const JobRecord*> by_id;
};

std::unique_ptr<Outcome> Run(PolicyKind policy, const std::string& trace_file,
                             EngineOptions options = {}) {
  const ClusterSpec spec = testing::LoadSpec("sim/small.yaml");
  static Trace trace;  // kept alive for the returned pointers' job ids
  trace = testing::LoadTrace(trace_file);
  SpecInfo info(spec);
  auto backend = MakeSchedulerBackend(policy, spec, static_cast<int32_t>(trace.jobs.size()));
  INFO(backend.status().ToString());
  REQUIRE(backend.ok());
  options.check_invariants_every = 1;
  Engine engine(info, backend->get(), options);
  absl::StatusOr<EngineResult> r = engine.Run(trace, {});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  auto out = std::make_unique<Outcome>();
  out->result = std::move(*r);
  for (size_t j = 0; j < trace.jobs.size(); ++j) {
    out->by_id[trace.jobs[j].id.str()] = &out->result.records[j];
  }
  REQUIRE(Summarize(out->result, info, {}).accounting_ok);
  return out;
}

TEST_CASE("Policies: hived, quota and private on a hand-checked trace", "[sim][unit]") {
  // a1 (A, 2x8) takes A's rack at 0; a2 (A, 1x8) waits for it until 100 under every policy.
  // b1 (B, one 8-GPU pod): B's cells are 4-GPU sockets, so hived and private reject it;
  // quota admits it (8 GPUs = B's quota) on the spare node at 10, and then b2 (4 GPUs) must
  // wait for B's quota until b1 ends at 30; b3 (4 GPUs) follows at 30 (4 + 4 = 8).
  SECTION("hived") {
    auto o = Run(PolicyKind::kHived, "traces/policies.csv");
    CHECK(o->by_id["a1"]->first_start == 0);
    CHECK(o->by_id["a2"]->first_start == 100);
    CHECK(o->by_id["b1"]->state == JobState::kRejected);
    CHECK(o->by_id["b2"]->first_start == 10);
    CHECK(o->by_id["b3"]->first_start == 11);
    CHECK(o->by_id["b3"]->end == 41);
  }
  SECTION("quota") {
    auto o = Run(PolicyKind::kQuota, "traces/policies.csv");
    CHECK(o->by_id["a1"]->first_start == 0);
    CHECK(o->by_id["a2"]->first_start == 100);
    CHECK(o->by_id["b1"]->first_start == 10);
    CHECK(o->by_id["b2"]->first_start == 30);
    CHECK(o->by_id["b3"]->first_start == 30);
  }
  SECTION("private") {
    auto o = Run(PolicyKind::kPrivate, "traces/policies.csv");
    CHECK(o->by_id["a1"]->first_start == 0);
    CHECK(o->by_id["a2"]->first_start == 100);
    CHECK(o->by_id["b1"]->state == JobState::kRejected);
    CHECK(o->by_id["b2"]->first_start == 10);
    CHECK(o->by_id["b3"]->first_start == 11);
  }
}

TEST_CASE("Policies: a guaranteed job preempts an opportunistic one, which requeues",
          "[sim][unit]") {
  // o1 (B, opportunistic, 3 x 8) runs on three nodes from 0. a1 (A, 2 x 8) needs a whole rack
  // at 10: every rack holds part of o1, so o1 is preempted and a1 starts at 10. o1 needs 24
  // idle GPUs again, which only exist when a1 ends at 110.
  for (PolicyKind policy : {PolicyKind::kHived, PolicyKind::kQuota}) {
    CAPTURE(PolicyKindName(policy));
    SECTION(std::string("restart from zero: ") + std::string(PolicyKindName(policy))) {
      auto o = Run(policy, "traces/preemption.csv");
      const JobRecord& o1 = *o->by_id["o1"];
      CHECK(o->by_id["a1"]->first_start == 10);
      CHECK(o1.first_start == 0);
      CHECK(o1.preemptions == 1);
      CHECK(o1.last_start == 110);
      CHECK(o1.end == 1110);
      CHECK(o1.gpu_seconds_lost() == 24 * 10);
      CHECK(o1.opportunistic);
    }
    SECTION(std::string("resume: ") + std::string(PolicyKindName(policy))) {
      EngineOptions options;
      options.resume = true;
      auto o = Run(policy, "traces/preemption.csv", options);
      const JobRecord& o1 = *o->by_id["o1"];
      CHECK(o1.preemptions == 1);
      CHECK(o1.end == 1100);
      CHECK(o1.gpu_seconds_lost() == 0);
    }
  }
}

TEST_CASE("Policies: private runs opportunistic jobs inside the VC only", "[sim][unit]") {
  // On B's private 8 GPUs a 24-GPU job can never run.
  auto o = Run(PolicyKind::kPrivate, "traces/preemption.csv");
  CHECK(o->by_id["o1"]->state == JobState::kRejected);
  CHECK(o->by_id["a1"]->first_start == 10);
}

TEST_CASE("Policies: --opportunistic-overflow runs a VC's waiting jobs on idle cells",
          "[sim][unit]") {
  SECTION("without overflow the rack serves one 2x8 job at a time") {
    auto o = Run(PolicyKind::kHived, "traces/overflow.csv");
    CHECK(o->by_id["a1"]->first_start == 0);
    CHECK(o->by_id["a2"]->first_start == 100);
    CHECK(o->by_id["a3"]->first_start == 200);
  }
  SECTION("with overflow a2 runs opportunistically on the other rack at once") {
    EngineOptions options;
    options.opportunistic_overflow = true;
    auto o = Run(PolicyKind::kHived, "traces/overflow.csv", options);
    CHECK(o->by_id["a1"]->first_start == 0);
    CHECK_FALSE(o->by_id["a1"]->opportunistic);
    CHECK(o->by_id["a2"]->first_start == 0);
    CHECK(o->by_id["a2"]->opportunistic);
    CHECK(o->by_id["a3"]->first_start == 100);
    CHECK_FALSE(o->by_id["a3"]->opportunistic);
  }
}

TEST_CASE("Policies: a node going down kills its jobs, which requeue, node up brings it back",
          "[sim][unit]") {
  const ClusterSpec spec = testing::LoadSpec("sim/small.yaml");
  const Trace trace = testing::LoadTrace("traces/overflow.csv");
  SpecInfo info(spec);
  auto backend = MakeSchedulerBackend(PolicyKind::kHived, spec, 3);
  REQUIRE(backend.ok());
  EngineOptions options;
  options.check_invariants_every = 1;
  Engine engine(info, backend->get(), options);
  // Find a1's first node by replaying without failures first.
  absl::StatusOr<EngineResult> plain = engine.Run(trace, {});
  REQUIRE(plain.ok());
  REQUIRE_FALSE(plain->records[0].nodes.empty());
  const std::string node = (*backend)->nodes()[static_cast<size_t>(plain->records[0].nodes[0])];

  auto fresh = MakeSchedulerBackend(PolicyKind::kHived, spec, 3);
  REQUIRE(fresh.ok());
  Engine engine2(info, fresh->get(), options);
  std::vector<NodeEvent> events = {{50, node, false, 2, ""}, {60, node, true, 3, ""}};
  absl::StatusOr<EngineResult> r = engine2.Run(trace, events);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  const JobRecord& a1 = r->records[0];
  CHECK(a1.failures == 1);
  CHECK(a1.failure_gpu_seconds_lost() == 16 * 50);
  CHECK(r->node_down_events == 1);
  CHECK(Summarize(*r, info, {}).accounting_ok);
  CHECK(Summarize(*r, info, {}).all.completed == 3);
}

}  // namespace
}  // namespace hived::sim
