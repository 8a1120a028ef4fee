// SchedulerOptions (hived/scheduler.h): the change log's capacity chosen at creation, its
// bounds, and `Changes(since)` with the feed off (0), a ring of 1 and a small ring wrapping.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived {
namespace {

ClusterSpec Spec() {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  return *std::move(spec);
}

std::unique_ptr<Scheduler> Make(int64_t capacity) {
  SchedulerOptions options;
  options.change_log_capacity = capacity;
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(Spec(), options);
  REQUIRE(s.ok());
  return *std::move(s);
}

// A node's health flipped: one mutation noting that node only (no group runs on it).
void Flip(Scheduler& s, const std::string& node, bool healthy) {
  const uint64_t before = s.version();
  REQUIRE(s.SetNodeHealthy(node, healthy).ok());
  REQUIRE(s.version() == before + 1);
}

TEST_CASE("SchedulerOptions: out-of-bounds capacities are kInvalidArgument", "[scheduler][unit]") {
  const ClusterSpec spec = Spec();
  for (const int64_t bad : {int64_t{-1}, INT64_MIN, kMaxChangeLogCapacity + 1, INT64_MAX}) {
    CAPTURE(bad);
    SchedulerOptions options;
    options.change_log_capacity = bad;
    absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(spec, options);
    REQUIRE(s.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(s.status().message().find("change_log_capacity") != std::string_view::npos);
    // Restore refuses it as Create does.
    absl::StatusOr<std::unique_ptr<Scheduler>> saved = Scheduler::Create(spec);
    REQUIRE(saved.ok());
    absl::StatusOr<std::string> state = (*saved)->SaveState();
    REQUIRE(state.ok());
    s = Scheduler::Restore(spec, *state, nullptr, {}, options);
    REQUIRE(s.status().code() == absl::StatusCode::kInvalidArgument);
  }
  // The bounds themselves are accepted.
  for (const int64_t good : {int64_t{0}, int64_t{1}, kMaxChangeLogCapacity}) {
    SchedulerOptions options;
    options.change_log_capacity = good;
    CHECK(Scheduler::Create(spec, options).ok());
  }
}

TEST_CASE("SchedulerOptions: capacity 0 turns the change feed off", "[scheduler][unit]") {
  std::unique_ptr<Scheduler> s = Make(0);
  absl::StatusOr<StateChanges> ch = s->Changes(0);
  REQUIRE(ch.ok());  // nothing changed since version 0: nothing to tell
  CHECK(ch->version == 0);
  Flip(*s, "r0n0", false);
  Flip(*s, "r0n0", true);
  CHECK(s->version() == 2);
  for (const uint64_t since : {uint64_t{0}, uint64_t{1}}) {
    ch = s->Changes(since);
    REQUIRE(ch.status().code() == absl::StatusCode::kOutOfRange);
    CHECK(ch.status().message().find("feed is off") != std::string_view::npos);
  }
  ch = s->Changes(2);
  REQUIRE(ch.ok());
  CHECK(ch->groups.empty());
  CHECK(ch->nodes.empty());
  CHECK(s->Changes(3).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("SchedulerOptions: capacity 1 keeps the last one-entry change", "[scheduler][unit]") {
  std::unique_ptr<Scheduler> s = Make(1);
  Flip(*s, "r0n0", false);
  Flip(*s, "r0n1", false);
  absl::StatusOr<StateChanges> ch = s->Changes(1);
  REQUIRE(ch.ok());
  CHECK(ch->nodes == std::vector<std::string>{"r0n1"});
  CHECK(s->Changes(0).status().code() == absl::StatusCode::kOutOfRange);
}

TEST_CASE("SchedulerOptions: a small ring keeps the newest changes after wrapping",
          "[scheduler][unit]") {
  std::unique_ptr<Scheduler> s = Make(3);
  const std::vector<std::string> nodes = {"r0n0", "r0n1", "r0n2", "r0n3", "r1n0", "r1n1", "r1n2"};
  for (const std::string& n : nodes) Flip(*s, n, false);  // versions 1..7, one entry each
  REQUIRE(s->version() == 7);
  // The ring of 3 holds versions 5, 6 and 7: the oldest change kept follows version 4.
  absl::StatusOr<StateChanges> ch = s->Changes(4);
  REQUIRE(ch.ok());
  CHECK(ch->version == 7);
  CHECK(ch->nodes == std::vector<std::string>{"r1n0", "r1n1", "r1n2"});
  ch = s->Changes(3);
  REQUIRE(ch.status().code() == absl::StatusCode::kOutOfRange);
  CHECK(ch.status().message().find("no longer kept") != std::string_view::npos);
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("SchedulerOptions: ApplyConfig keeps the scheduler's capacity", "[scheduler][unit]") {
  for (const int64_t capacity : {int64_t{0}, int64_t{1 << 16}}) {
    CAPTURE(capacity);
    std::unique_ptr<Scheduler> s = Make(capacity);
    const ClusterSpec spec = s->spec();
    REQUIRE(s->ApplyConfig(spec).ok());
    const uint64_t base = s->version();
    Flip(*s, "r0n0", false);
    absl::StatusOr<StateChanges> ch = s->Changes(base);
    if (capacity == 0) {
      CHECK(ch.status().code() == absl::StatusCode::kOutOfRange);
    } else {
      REQUIRE(ch.ok());
      CHECK(ch->nodes == std::vector<std::string>{"r0n0"});
    }
  }
}

}  // namespace
}  // namespace hived
