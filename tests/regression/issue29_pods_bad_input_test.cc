// Issue 29, "Bad input", for the per-pod calls and their records: unknown pod or group, a
// pod allocated twice, more pods than the gang has slots, a release of a pod never
// allocated, malformed names and pod records. Each is a clear status naming what and
// where, and the state (every view and the saved state) exactly as before.
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "unit/pods/pods_cluster.h"

namespace hived {
namespace {

using testdata::Gang;
using testdata::NamedPod;

bool Has(const absl::Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

// A scheduler with gang "g" ({1 x 2 leaves, 2 x 1 leaf}) running with pods "a" (slot 0) and
// "big" (slot 2), whole gang "w" (2 x 1 leaf) and reservation "r".
struct Fixture {
  std::unique_ptr<Scheduler> s = testdata::MakePods();
  GroupRequest g = Gang("g", {{1, 2}, {2, 1}});
  GroupRequest w = Gang("w", {{2, 1}});
  GroupRequest r = Gang("r", {{1, 1}});
  Placement gp;
  Fixture() {
    gp = testdata::Reserve(*s, g);
    REQUIRE(s->AllocatePod(g, gp, NamedPod("a", 1)).ok());
    REQUIRE(s->AllocatePod(g, gp, NamedPod("big", 2)).ok());
    REQUIRE(s->Allocate(w, testdata::Reserve(*s, w)).ok());
    testdata::Reserve(*s, r);
  }
};

TEST_CASE("issue 29: per-pod calls on bad input change nothing and say what and where",
          "[pods][regression]") {
  Fixture f;
  Scheduler& s = *f.s;
  const std::string before = testdata::Fingerprint(s);
  absl::Status st;

  SECTION("unknown group") {
    st = s.ReleasePod("nope", "a").status();
    CHECK(st.code() == absl::StatusCode::kNotFound);
    CHECK(Has(st, "group nope is not running (pod a)"));
    st = s.GetPod("nope", "a").status();
    CHECK(st.code() == absl::StatusCode::kNotFound);
    // A first pod of a group nobody scheduled: Allocate's own error.
    st = s.AllocatePod(Gang("nope", {{1, 1}}), f.gp, NamedPod("x", 1)).status();
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Has(st, "group nope has no reservation"));
  }
  SECTION("unknown pod, or a pod never allocated") {
    st = s.ReleasePod("g", "zzz").status();
    CHECK(st.code() == absl::StatusCode::kNotFound);
    CHECK(Has(st, "pod zzz of group g is not allocated"));
    st = s.GetPod("g", "zzz").status();
    CHECK(st.code() == absl::StatusCode::kNotFound);
    st = s.ReleasePod("w", "2").status();  // a whole gang of two pods: "0" and "1"
    CHECK(st.code() == absl::StatusCode::kNotFound);
    CHECK(Has(st, "pod 2 of group w is not allocated"));
  }
  SECTION("a pod allocated twice") {
    st = s.AllocatePod(f.g, f.gp, NamedPod("a", 1)).status();
    CHECK(st.code() == absl::StatusCode::kAlreadyExists);
    CHECK(Has(st, "pod a of group g is already allocated"));
    st = s.AllocatePod(f.w, {}, NamedPod("0", 1)).status();
    CHECK(st.code() == absl::StatusCode::kAlreadyExists);
  }
  SECTION("more pods than the gang has slots") {
    st = s.AllocatePod(f.g, f.gp, NamedPod("big2", 2)).status();
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Has(st, "requesting more pods than the configured number for 2 leaf cells (1 pods)"));
    st = s.AllocatePod(f.w, {}, NamedPod("third", 1)).status();
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Has(st, "group w"));
  }
  SECTION("a pod size the gang does not have") {
    st = s.AllocatePod(f.g, f.gp, NamedPod("four", 4)).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(st, "group g has no pod of 4 leaf cells (pod four)"));
    // For a first pod too, checked before the gang runs.
    st = s.AllocatePod(f.r, testdata::Reserve(s, f.r), NamedPod("x", 3)).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("a node and first leaf no slot starts at, or a taken one") {
    Pod pod = NamedPod("x", 1);
    pod.node = "n9";
    pod.first_leaf_index = 0;
    st = s.AllocatePod(f.g, f.gp, pod).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(st, "starting on node n9 at leaf cell 0"));
    pod.node = f.gp.pods[0].node;
    pod.first_leaf_index = f.gp.pods[0].leaf_cell_indices[0];
    st = s.AllocatePod(f.g, f.gp, pod).status();
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Has(st, "is taken by pod a"));
  }
  SECTION("names: empty, too long (quoted at most ~100 bytes)") {
    st = s.AllocatePod(f.g, f.gp, NamedPod("", 1)).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(st, "a pod needs a name"));
    const std::string huge(100000, 'p');
    st = s.AllocatePod(f.g, f.gp, NamedPod(huge, 1)).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(st, "name is longer than 253 bytes"));
    CHECK(st.message().size() < 300);
    st = s.AllocatePod(f.g, f.gp, NamedPod("ok", 1, huge)).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(st, "uid is longer than 253 bytes"));
    CHECK(s.ReleasePod(huge, huge).status().message().size() < 400);
  }
  SECTION("a reservation has no pods to release") {
    st = s.ReleasePod("r", "0").status();
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(Has(st, "group r holds a reservation"));
  }
  SECTION("a pod record that does not fit the gang") {
    absl::StatusOr<GroupRecord> rec = s.GetGroupRecord("g");
    REQUIRE(rec.ok());
    auto t = testdata::MakePods();
    const std::string fresh = testdata::Fingerprint(*t);
    GroupRecord bad = *rec;
    bad.request.name = "g2";
    bad.pods = {{0, "a", ""}, {0, "b", ""}};
    st = t->AllocateRecord(bad).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(st, "pods[1] has slot 0, not ascending in [0, 3)"));
    bad.pods = {{0, "a", ""}, {5, "b", ""}};
    CHECK(t->AllocateRecord(bad).status().code() == absl::StatusCode::kInvalidArgument);
    bad.pods = {{0, "a", ""}, {1, "a", ""}};
    st = t->AllocateRecord(bad).status();
    CHECK(Has(st, "pod a is listed twice"));
    bad.pods = {{0, "", ""}};
    CHECK(t->AllocateRecord(bad).status().code() == absl::StatusCode::kInvalidArgument);
    // RecoverPod of a pod whose node no slot starts at: nothing rebuilt.
    Pod pod = NamedPod("a", 1);
    pod.node = "n9";
    pod.first_leaf_index = 0;
    st = t->RecoverPod(*rec, pod).status();
    CHECK(st.code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(st, "group g has no pod of 1 leaf cells starting on node n9"));
    CHECK(testdata::Fingerprint(*t) == fresh);
  }
  CHECK(testdata::Fingerprint(s) == before);
  testdata::RequireInvariants(s);
}

TEST_CASE("issue 29: a record's malformed allocatedPods is refused naming its JSON path",
          "[pods][regression]") {
  Fixture f;
  absl::StatusOr<GroupRecord> rec = f.s->GetGroupRecord("g");
  REQUIRE(rec.ok());
  const std::string json = GroupRecordToJson(*rec);
  const std::string key = "\"allocatedPods\":";
  const size_t at = json.find(key);
  REQUIRE(at != std::string::npos);
  const size_t end = json.find(']', at);
  auto with = [&](const std::string& list) {
    return json.substr(0, at + key.size()) + list + json.substr(end + 1);
  };
  struct Case {
    std::string list;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"[]", "$.allocatedPods: an empty list"},
      {"[{\"slot\":2,\"name\":\"a\"},{\"slot\":0,\"name\":\"b\"}]",
       "$.allocatedPods[1].slot: slot 0 after slot 2"},
      {"[{\"slot\":0,\"name\":\"a\"},{\"slot\":1,\"name\":\"a\"}]",
       "$.allocatedPods: pod a is listed twice"},
      {"[{\"slot\":0,\"name\":\"\"}]", "$.allocatedPods[0].name: empty pod name"},
      {"[{\"slot\":3,\"name\":\"a\"}]", "$.allocatedPods: slot 3 of a placement of 3 pods"},
      {"[{\"slot\":-1,\"name\":\"a\"}]", "$.allocatedPods[0].slot"},
      {"[{\"slot\":0,\"name\":\"a\",\"x\":1}]", "$.allocatedPods[0].x: unknown key"},
      {"[{\"slot\":0}]", "$.allocatedPods[0].name"},
      {"{}", "$.allocatedPods: expected a list"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.list);
    absl::StatusOr<GroupRecord> read = GroupRecordFromJson(with(c.list));
    REQUIRE_FALSE(read.ok());
    CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Has(read.status(), c.error));
  }
}

}  // namespace
}  // namespace hived
