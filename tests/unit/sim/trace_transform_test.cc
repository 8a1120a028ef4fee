#include "sim/trace/trace_transform.h"

#include <map>

#include "absl/strings/match.h"
#include "sim_test_util.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

using testing::LoadSpec;

ClusterSpec Small() { return LoadSpec("planning/small.yaml"); }

Trace Jobs(const std::vector<std::pair<std::string, Time>>& vc_and_time) {
  Trace t;
  int n = 0;
  for (const auto& [vc, time] : vc_and_time) {
    TraceJob j;
    j.id = "j" + std::to_string(n++);
    j.vc = t.Intern(vc);
    j.submit_time = time;
    j.pods = 1;
    j.gpus_per_pod = 1;
    j.total_gpus = 1;
    j.duration = 60;
    t.jobs.push_back(j);
  }
  return t;
}

TraceTransforms Parse(TraceTransformFlags flags) {
  absl::StatusOr<TraceTransforms> t = ParseTraceTransforms(flags);
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("TraceTransform: filter, rename/merge and priority apply in order",
          "[sim][planning][unit]") {
  Trace trace = Jobs({{"x", 0}, {"y", 1}, {"z", 2}, {"x", 3}});
  TraceTransformFlags f;
  f.only_vcs = "x,y";
  f.rename_vcs = "x=a,y=a";
  f.vc_priority = "a=7";
  REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 1, &trace).ok());
  REQUIRE(trace.jobs.size() == 3);
  for (const TraceJob& j : trace.jobs) {
    CHECK(j.vc == "a");
    CHECK(j.priority == 7);
  }
  CHECK(TraceTransformArgs(f) ==
        std::vector<std::string>{"--only-vcs=x,y", "--rename-vcs=x=a,y=a", "--vc-priority=a=7"});
}

TEST_CASE("TraceTransform: an added tenant's jobs name the trace's own interned VC",
          "[sim][planning][unit]") {
  Trace trace = Jobs({{"a", 0}, {"a", 5}});
  TraceTransformFlags f;
  f.add_tenant = "b:jobs=20";
  REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 1, &trace).ok());
  REQUIRE(trace.jobs.size() == 22);
  // The generated trace (and its name table) is gone: the tenant's names must be this
  // trace's, equal to the ones it interns (ASan would catch a dangling one).
  int tenant = 0;
  for (const TraceJob& j : trace.jobs) {
    if (!absl::StartsWith(Av(j.id), "b-")) continue;
    ++tenant;
    CHECK(j.vc == "b");
    CHECK(j.vc.data() == trace.Intern("b").data());
  }
  CHECK(tenant == 20);
}

TEST_CASE("TraceTransform: an opportunistic share is deterministic and close to the fraction",
          "[sim][planning][unit]") {
  std::vector<std::pair<std::string, Time>> rows;
  for (int i = 0; i < 2000; ++i) rows.emplace_back(i % 2 ? "a" : "b", i);
  TraceTransformFlags f;
  f.vc_opportunistic = "a=0.3";
  Trace t1 = Jobs(rows), t2 = Jobs(rows);
  REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 5, &t1).ok());
  REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 5, &t2).ok());
  int opportunistic_a = 0, opportunistic_b = 0;
  for (size_t i = 0; i < t1.jobs.size(); ++i) {
    CHECK(t1.jobs[i].priority == t2.jobs[i].priority);
    if (t1.jobs[i].priority == kOpportunisticPriority) {
      (t1.jobs[i].vc == "a" ? opportunistic_a : opportunistic_b)++;
    }
  }
  CHECK(opportunistic_b == 0);
  CHECK(opportunistic_a > 240);  // 30% of 1000, within a few standard deviations (14.5)
  CHECK(opportunistic_a < 360);
}

TEST_CASE("TraceTransform: a synthetic tenant is interleaved by submit time",
          "[sim][planning][unit]") {
  Trace trace = Jobs({{"a", 0}, {"a", 5000}, {"a", 100000}});
  TraceTransformFlags f;
  f.add_tenant = "b:jobs=50,load=0.5";
  REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 3, &trace).ok());
  REQUIRE(trace.jobs.size() == 53);
  int tenant = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    if (i > 0) CHECK(trace.jobs[i - 1].submit_time <= trace.jobs[i].submit_time);
    if (trace.jobs[i].vc == "b") {
      ++tenant;
      CHECK(absl::StartsWith(Av(trace.jobs[i].id), "b-"));
    }
  }
  CHECK(tenant == 50);
  SECTION("the same seed gives the same tenant; another seed another") {
    Trace again = Jobs({{"a", 0}, {"a", 5000}, {"a", 100000}});
    REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 3, &again).ok());
    Trace other = Jobs({{"a", 0}, {"a", 5000}, {"a", 100000}});
    REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 4, &other).ok());
    bool same = true, differs = false;
    for (size_t i = 0; i < trace.jobs.size(); ++i) {
      same &= trace.jobs[i].submit_time == again.jobs[i].submit_time;
      differs |= trace.jobs[i].submit_time != other.jobs[i].submit_time;
    }
    CHECK(same);
    CHECK(differs);
  }
}

TEST_CASE("TraceTransform: bad values and unknown VCs are errors that say what is wrong",
          "[sim][planning][unit]") {
  TraceTransformFlags f;
  f.vc_priority = "a=2000";
  CHECK(!ParseTraceTransforms(f).ok());
  f = {};
  f.vc_opportunistic = "a=1.5";
  CHECK(!ParseTraceTransforms(f).ok());
  f = {};
  f.rename_vcs = "a";
  CHECK(!ParseTraceTransforms(f).ok());
  f = {};
  f.add_tenant = "b:color=red";
  CHECK(!ParseTraceTransforms(f).ok());

  Trace trace = Jobs({{"x", 0}});
  f = {};
  f.only_vcs = "nope";
  absl::Status s = ApplyTraceTransforms(Parse(f), Small(), 1, &trace);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(s.message(), "VCs with jobs: x"));
  f = {};
  f.add_tenant = "ghost";
  s = ApplyTraceTransforms(Parse(f), Small(), 1, &trace);
  CHECK(absl::StrContains(s.message(), "not in the config"));
  f = {};
  f.vc_priority = "x=-1";
  f.only_vcs = "x";
  REQUIRE(ApplyTraceTransforms(Parse(f), Small(), 1, &trace).ok());
  CHECK(trace.jobs[0].priority == kOpportunisticPriority);
}

}  // namespace
}  // namespace hived::sim
