// A live config change in the journal (issue 29 items 4 and 6): `ApplyConfig` with a journal
// started writes one record (the new spec, the old cluster's fingerprint), only when it
// succeeds; recovery replays it, and the records after it replay against the new spec. A
// config record truncated, out of sequence or for another cluster is refused, the state
// exactly as before.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/journal.h"
#include "hived/scheduler.h"
#include "journal_frame.h"
#include "support/catch.h"
#include "support/example_spec.h"

namespace hived {
namespace {

ClusterSpec TwoRacks() { return testing::ExampleSpec("two-racks.yaml"); }

// Two-racks with a third rack (rack2-*) and prod grown onto it.
ClusterSpec ThreeRacks() {
  ClusterSpec next = TwoRacks();
  PhysicalCellSpec rack = next.physical_cells[0];
  for (auto& node : rack.cell_children) node.cell_address = "rack2-" + node.cell_address;
  next.physical_cells.push_back(rack);
  next.virtual_clusters[0].virtual_cells[0].cell_number = 2;
  return next;
}

GroupRequest Gang(const std::string& name, const std::string& vc, int32_t leaves,
                  int32_t pods = 1) {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.members = {{pods, leaves}};
  return r;
}

std::string Run(Scheduler& s, const GroupRequest& req) {
  absl::StatusOr<ScheduleResult> r = s.Schedule(req, Phase::kPreempting);
  REQUIRE(r.ok());
  if (r->outcome != Outcome::kPlaced) return "not placed";
  REQUIRE(s.Allocate(req, r->placement).ok());
  std::string nodes;
  for (const PodPlacement& p : r->placement.pods) absl::StrAppend(&nodes, p.node, " ");
  return nodes;
}

// What a caller sees: groups with their nodes, node health, VC usage, the spec's fingerprint.
std::string Views(const Scheduler& s) {
  std::string out = s.SpecFingerprint() + "\n";
  for (const GroupStatus& g : s.Groups()) {
    absl::StrAppend(&out, g.name, "|", static_cast<int>(g.state), "|", g.vc, "|");
    for (const PodPlacement& p : g.placement.pods) absl::StrAppend(&out, p.node, " ");
    absl::StrAppend(&out, "\n");
  }
  for (const NodeStatus& n : s.Nodes()) absl::StrAppend(&out, n.name, "|", n.healthy, "\n");
  for (const VcUsage& u : s.VcUsages()) {
    absl::StrAppend(&out, u.vc, "|", u.guaranteed_used_leaf_cells, "\n");
  }
  return out;
}

TEST_CASE("Journal: ApplyConfig is journaled and recovery replays it", "[journal][unit]") {
  auto s = Scheduler::Create(TwoRacks());
  REQUIRE(s.ok());
  Run(**s, Gang("a", "prod", 8));
  MemoryJournalSink sink;
  absl::StatusOr<JournalCheckpoint> cp = (*s)->StartJournal(&sink);
  REQUIRE(cp.ok());
  Run(**s, Gang("b", "research", 4));
  const std::string old_fingerprint = (*s)->SpecFingerprint();

  // A refused change writes nothing and changes nothing.
  ClusterSpec bad = TwoRacks();
  bad.virtual_clusters[0].virtual_cells[0].cell_number = 3;
  CHECK((*s)->ApplyConfig(bad).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK((*s)->JournalSequence() == 4);  // two before the checkpoint, two after
  const size_t before_change = sink.data().size();

  REQUIRE((*s)->ApplyConfig(ThreeRacks()).ok());
  CHECK((*s)->JournalSequence() == 5);
  CHECK((*s)->SpecFingerprint() != old_fingerprint);
  // Four nodes for prod: one of them only the new rack has. Then a release: records for
  // the new spec.
  CHECK(absl::StrContains(Run(**s, Gang("c", "prod", 8, 4)), "rack2-"));
  REQUIRE((*s)->Release("a").ok());
  CHECK(absl::StrContains(Run(**s, Gang("d", "prod", 8)), "node"));

  absl::StatusOr<JournalContents> read = ReadJournal(sink.data());
  REQUIRE(read.ok());
  REQUIRE(read->records.size() == 8);
  const JournalRecord& change = read->records[2];
  CHECK(change.op == JournalOp::kApplyConfig);
  CHECK(change.sequence == 5);
  CHECK(absl::StrCat(absl::Hex(change.fingerprint, absl::kZeroPad16)) == old_fingerprint);
  CHECK(ClusterSpecToYaml(change.spec) == ClusterSpecToYaml(ThreeRacks()));
  CHECK(!change.apply_stranded);
  CHECK(absl::StrCat(absl::Hex(read->records[3].fingerprint, absl::kZeroPad16)) ==
        (*s)->SpecFingerprint());

  // Crash: only the checkpoint and the journal survive.
  JournalRecoveryReport report;
  auto back = Scheduler::RecoverFromJournal(TwoRacks(), *cp, sink.data(), &report);
  REQUIRE(back.ok());
  CHECK(report.records_applied == 8);
  CHECK(report.failed.empty());
  CHECK((*back)->JournalSequence() == 10);
  CHECK(Views(**back) == Views(**s));
  CHECK(*(*back)->SaveState() == *(*s)->SaveState());
  for (int i = 0; i < 6; ++i) {
    const GroupRequest next = Gang(absl::StrCat("n", i), i % 2 == 0 ? "prod" : "research", 4);
    CHECK(Run(**back, next) == Run(**s, next));
  }
  CHECK(*(*back)->SaveState() == *(*s)->SaveState());

  SECTION("a journal cut inside the config record recovers the state before it") {
    const std::string cut = sink.data().substr(0, before_change + 20);
    auto early = Scheduler::RecoverFromJournal(TwoRacks(), *cp, cut, &report);
    REQUIRE(early.ok());
    CHECK(report.torn_tail_bytes == 20);
    CHECK((*early)->JournalSequence() == 4);
    CHECK((*early)->SpecFingerprint() == old_fingerprint);
  }
}

TEST_CASE("Journal: an ApplyConfig whose record would be over the limit is refused",
          "[journal][unit]") {
  auto s = Scheduler::Create(TwoRacks());
  REQUIRE(s.ok());
  MemoryJournalSink sink;
  REQUIRE((*s)->StartJournal(&sink).ok());
  const std::string before = *(*s)->SaveState();
  // Over 16 MiB in one node address: refused before any other check (such as the 253-byte
  // limit on names) and before the YAML is written (the names alone are over).
  ClusterSpec huge = ThreeRacks();
  huge.physical_cells.back().cell_children[0].cell_address =
      std::string(static_cast<size_t>(kMaxJournalRecordBytes), 'x');
  absl::StatusOr<RestoreReport> r = (*s)->ApplyConfig(huge);
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(r.status().message(), "over the limit of 16777216 bytes"));
  CHECK(absl::StrContains(r.status().message(), "names alone"));
  CHECK(sink.data().empty());
  CHECK((*s)->JournalSequence() == 0);
  CHECK(*(*s)->SaveState() == before);
}

TEST_CASE("Journal: a config record truncated or out of place is refused", "[journal][unit]") {
  auto s = Scheduler::Create(TwoRacks());
  REQUIRE(s.ok());
  Run(**s, Gang("a", "prod", 8));
  JournalRecord change;
  change.op = JournalOp::kApplyConfig;
  const uint64_t next = (*s)->JournalSequence() + 1;  // 3: the Schedule and the Allocate
  change.sequence = next;
  change.fingerprint = 0;
  for (char c : (*s)->SpecFingerprint()) {
    change.fingerprint =
        change.fingerprint * 16 + static_cast<uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  change.spec = ThreeRacks();
  std::string good;
  AppendJournalRecord(change, &good);
  const std::string body = good.substr(8);
  const std::string before = *(*s)->SaveState();
  auto unchanged = [&] {
    CHECK(*(*s)->SaveState() == before);
    CHECK((*s)->JournalSequence() == next - 1);
    CHECK((*s)->spec().physical_cells.size() == 2);
  };

  SECTION("a body cut short, with a valid checksum") {
    for (size_t cut : {body.size() - 1, body.size() - 2, body.size() / 2, size_t{20}}) {
      CAPTURE(cut);
      absl::StatusOr<JournalContents> read = ReadJournal(testing::Frame(body.substr(0, cut)));
      REQUIRE(!read.ok());
      CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK(read.status().message().rfind("journal record 0 at byte 0: ", 0) == 0);
      CHECK(read.status().message().size() < 300);
    }
  }
  SECTION("a spec that is not the library's YAML, or not a valid spec") {
    const std::string head = body.substr(0, 10);  // op, sequence 3, fingerprint
    auto with_spec = [&](const std::string& yaml) {
      std::string b = head;
      uint64_t n = yaml.size();
      for (; n >= 0x80; n >>= 7) b.push_back(static_cast<char>((n & 0x7f) | 0x80));
      b.push_back(static_cast<char>(n));
      return testing::Frame(b + yaml + '\0');
    };
    const std::string yaml = ClusterSpecToYaml(ThreeRacks());
    REQUIRE(with_spec(yaml) == good);
    auto error_of = [](const std::string& bytes) {
      absl::StatusOr<JournalContents> read = ReadJournal(bytes);
      REQUIRE(!read.ok());
      CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK(read.status().message().size() < 300);
      return std::string(read.status().message());
    };
    CHECK(error_of(with_spec("# a comment\n" + yaml)) ==
          "journal record 0 at byte 0: spec: not the YAML ClusterSpecToYaml writes for it");
    std::string invalid = yaml;
    const size_t at = invalid.find("cellNumber: 2");
    REQUIRE(at != std::string::npos);
    invalid[at + 12] = '5';
    CHECK(error_of(with_spec(invalid))
              .rfind("journal record 0 at byte 0: spec: not a valid cluster spec: ", 0) == 0);
    CHECK(error_of(with_spec("{"))
              .rfind("journal record 0 at byte 0: spec: not a valid cluster spec: ", 0) == 0);
  }
  SECTION("out of sequence or for another cluster: refused naming the sequence") {
    change.sequence = next + 1;
    absl::Status st = (*s)->ApplyJournalRecord(change);
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(st.message() == "journal record 4 (ApplyConfig): out of sequence, the next is 3");
    unchanged();
    change.sequence = next;
    change.fingerprint ^= 1;
    st = (*s)->ApplyJournalRecord(change);
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(absl::StrContains(st.message(), "journal record 3 (ApplyConfig): for another cluster"));
    unchanged();
  }
  SECTION("a change that fails when replayed is returned even with call_error") {
    ClusterSpec shrunk = TwoRacks();
    shrunk.virtual_clusters.erase(shrunk.virtual_clusters.begin());  // prod, where "a" runs
    change.spec = shrunk;
    std::string error;
    absl::Status st = (*s)->ApplyJournalRecord(change, &error);
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(absl::StrContains(st.message(), "journal record 3 (ApplyConfig): "));
    CHECK(error.empty());
    unchanged();
  }
  SECTION("in sequence: the follower moves onto the new spec") {
    REQUIRE((*s)->ApplyJournalRecord(change).ok());
    CHECK((*s)->JournalSequence() == next);
    CHECK((*s)->spec().physical_cells.size() == 3);
    CHECK(ClusterSpecToYaml((*s)->spec()) == ClusterSpecToYaml(ThreeRacks()));
  }
}

}  // namespace
}  // namespace hived
