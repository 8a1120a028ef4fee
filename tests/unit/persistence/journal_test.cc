// The journal (issue 29, item 4): the record codec and its reader's checks, the sinks, the
// scheduler's hook (sequence, sink errors) and recovery from a checkpoint plus the journal.
#include "hived/journal.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "journal_frame.h"
#include "support/catch.h"
#include "support/example_spec.h"

namespace hived {
namespace {

ClusterSpec TwoRacks() { return testing::ExampleSpec("two-racks.yaml"); }

GroupRequest Gang(const std::string& name, const std::string& vc, int32_t pods, int32_t leaves) {
  GroupRequest r;
  r.name = name;
  r.vc = vc;
  r.members = {{pods, leaves}};
  return r;
}

// One record of each op, with every field set.
std::vector<JournalRecord> EveryOp() {
  std::vector<JournalRecord> out;
  GroupRequest req = Gang("g1", "prod", 2, 4);
  req.priority = 7;
  req.leaf_cell_type = "V100";
  req.lazy_preemption = true;
  req.suggested_nodes = std::vector<std::string>{"rack0-node0", "rack0-node1"};
  req.members.push_back({1, 1, 0, 0, 500, 1024, ""});
  Placement p;
  p.chain = "V100-RACK";
  p.pods = {{4, "rack0-node0", {0, 1, 2, 3}, {"V100-NODE", "V100-NODE", "", ""}, "", -1},
            {1, "rack0-node1", {7}, {}, "1g.5gb", 6}};
  uint64_t seq = 1;
  for (JournalOp op :
       {JournalOp::kSchedule, JournalOp::kAllocate, JournalOp::kRecover, JournalOp::kAllocateRecord,
        JournalOp::kRelease, JournalOp::kUnreserve, JournalOp::kCancelPreemption,
        JournalOp::kSetNodeHealthy, JournalOp::kApplyConfig}) {
    JournalRecord r;
    r.sequence = seq++ * 1000003;
    r.fingerprint = 0x954b6b5e5aa5ac8aULL;
    r.op = op;
    switch (op) {
      case JournalOp::kSchedule:
        r.request = req;
        break;
      case JournalOp::kAllocate:
      case JournalOp::kRecover:
        r.request = req;
        r.placement = p;
        break;
      case JournalOp::kAllocateRecord:
        r.record.request = req;
        r.record.placement = p;
        r.record.state = GroupState::kOpportunistic;
        r.record.downgrade_reason = "lazily preempted";
        r.record.preemptor = "g0";
        r.record.virtual_leaf_cells = {"prod/0/1/2", "", "", "", ""};
        break;
      case JournalOp::kSetNodeHealthy:
        r.name = "rack1-node3";
        r.healthy = true;
        break;
      case JournalOp::kApplyConfig:
        r.spec = TwoRacks();
        r.apply_stranded = true;
        break;
      default:
        r.name = "g1";
    }
    out.push_back(r);
  }
  return out;
}

std::string Encode(const std::vector<JournalRecord>& records) {
  std::string out;
  for (const JournalRecord& r : records) AppendJournalRecord(r, &out);
  return out;
}

TEST_CASE("Journal: every op's record reads back to the same bytes", "[journal][unit]") {
  const std::string bytes = Encode(EveryOp());
  absl::StatusOr<JournalContents> read = ReadJournal(bytes);
  REQUIRE(read.ok());
  REQUIRE(read->records.size() == EveryOp().size());
  CHECK(read->torn_tail_bytes == 0);
  CHECK(Encode(read->records) == bytes);
  CHECK(read->records[0].request.suggested_nodes->size() == 2);
  CHECK(read->records[1].placement.pods[1].mig_start == 6);
  CHECK(read->records[3].record.state == GroupState::kOpportunistic);
  CHECK(read->records[7].healthy);
  CHECK(read->records[8].apply_stranded);
  CHECK(ClusterSpecToYaml(read->records[8].spec) == ClusterSpecToYaml(TwoRacks()));
  CHECK(ReadJournal("")->records.empty());
}

TEST_CASE("Journal: a torn last record is ignored and counted", "[journal][unit]") {
  const std::vector<JournalRecord> all = EveryOp();
  const std::string bytes = Encode(all);
  std::vector<size_t> ends;
  std::string prefix;
  for (const JournalRecord& r : all) {
    AppendJournalRecord(r, &prefix);
    ends.push_back(prefix.size());
  }
  for (size_t cut = 0; cut <= bytes.size(); ++cut) {
    CAPTURE(cut);
    absl::StatusOr<JournalContents> read = ReadJournal(std::string_view(bytes).substr(0, cut));
    REQUIRE(read.ok());
    size_t whole = 0;
    while (whole < ends.size() && ends[whole] <= cut) ++whole;
    CHECK(read->records.size() == whole);
    CHECK(static_cast<size_t>(read->torn_tail_bytes) == cut - (whole == 0 ? 0 : ends[whole - 1]));
  }
}

TEST_CASE("Journal: a changed byte is refused, naming the record", "[journal][unit]") {
  const std::string bytes = Encode(EveryOp());
  int refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    absl::StatusOr<JournalContents> read = ReadJournal(bad);
    CAPTURE(i);
    if (read.ok()) {
      // Only a size field made larger reads as a torn tail: never as other records.
      CHECK(read->torn_tail_bytes > 0);
      CHECK(read->records.size() < EveryOp().size());
      continue;
    }
    ++refused;
    CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(read.status().message().rfind("journal record ", 0) == 0);
    CHECK(read.status().message().size() < 300);
  }
  CHECK(refused > static_cast<int>(bytes.size()) * 9 / 10);
}

using testing::Frame;

TEST_CASE("Journal: bad fields are refused with what and where", "[journal][unit]") {
  JournalRecord rec;
  rec.op = JournalOp::kSetNodeHealthy;
  rec.sequence = 1;
  rec.name = "n";
  std::string good;
  AppendJournalRecord(rec, &good);
  const std::string body = good.substr(8);
  auto error_of = [](const std::string& bytes) {
    absl::StatusOr<JournalContents> read = ReadJournal(bytes);
    REQUIRE(!read.ok());
    CHECK(read.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(read.status().message());
  };
  SECTION("an unknown op") {
    std::string b = body;
    b[0] = 42;
    CHECK(error_of(Frame(b)) == "journal record 0 at byte 0: op: unknown op 42");
  }
  SECTION("a boolean that is neither 0 nor 1") {
    std::string b = body;
    b.back() = 2;
    CHECK(error_of(good + Frame(b)).find("journal record 1 at byte 21: healthy: a boolean") == 0);
  }
  SECTION("bytes after the last field") {
    CHECK(error_of(Frame(body + "x")) ==
          "journal record 0 at byte 0: 1 bytes after the last field");
  }
  SECTION("a name over 253 bytes") {
    rec.name = std::string(254, 'n');
    std::string big;
    AppendJournalRecord(rec, &big);
    CHECK(error_of(big) == "journal record 0 at byte 0: node: 254 bytes, over the limit of 253");
  }
  SECTION("a record over the size limit") {
    std::string huge = good;
    huge[3] = 0x7f;
    CHECK(error_of(huge).find("over the limit of 16777216") != std::string::npos);
  }
  SECTION("a count larger than the bytes left") {
    JournalRecord r;
    r.op = JournalOp::kRelease;
    r.name = "g";
    std::string framed;
    AppendJournalRecord(r, &framed);
    std::string b = framed.substr(8);
    b.back() = 'g';
    b[b.size() - 2] = static_cast<char>(0x7f);  // the name's length: 127, 1 byte left
    CHECK(error_of(Frame(b)).find("name: ends inside a string") != std::string::npos);
  }
  SECTION("a checksum mismatch") {
    std::string b = good;
    b[5] = static_cast<char>(b[5] ^ 1);
    CHECK(error_of(b) == "journal record 0 at byte 0: checksum mismatch");
  }
}

TEST_CASE("Journal: the test's framing matches the codec's", "[journal][unit]") {
  std::string good;
  AppendJournalRecord(EveryOp()[2], &good);
  CHECK(Frame(good.substr(8)) == good);
}

TEST_CASE("Journal: records carry the sequence and the cluster, and recovery replays them",
          "[journal][unit]") {
  const ClusterSpec spec = TwoRacks();
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  MemoryJournalSink sink;
  absl::StatusOr<JournalCheckpoint> cp = (*s)->StartJournal(&sink);
  REQUIRE(cp.ok());
  CHECK(cp->sequence == 0);
  CHECK(cp->fingerprint == (*s)->SpecFingerprint());
  // Reserved then allocated; a Filtering decision allocated; a release; a node marked bad.
  GroupRequest a = Gang("a", "prod", 2, 8);
  auto ra = (*s)->Schedule(a, Phase::kPreempting);
  REQUIRE(ra->outcome == Outcome::kPlaced);
  REQUIRE((*s)->Allocate(a, ra->placement).ok());
  GroupRequest b = Gang("b", "research", 1, 4);
  auto rb = (*s)->Schedule(b, Phase::kFiltering);
  REQUIRE(rb->outcome == Outcome::kPlaced);
  REQUIRE((*s)->Allocate(b, rb->placement).ok());
  GroupRequest c = Gang("c", "dev", 1, 2);
  auto rc = (*s)->Schedule(c, Phase::kPreempting);
  REQUIRE(rc->outcome == Outcome::kPlaced);  // left reserved
  REQUIRE((*s)->SetNodeHealthy("rack1-node1", false).ok());
  REQUIRE((*s)->Release("a").ok());
  CHECK(!(*s)->Release("a").ok());  // a failed call writes nothing
  CHECK((*s)->JournalSequence() == 6);

  absl::StatusOr<JournalContents> read = ReadJournal(sink.data());
  REQUIRE(read.ok());
  REQUIRE(read->records.size() == 6);
  for (size_t i = 0; i < read->records.size(); ++i) {
    CHECK(read->records[i].sequence == i + 1);
    CHECK(absl::StrCat(absl::Hex(read->records[i].fingerprint, absl::kZeroPad16)) ==
          cp->fingerprint);
  }
  CHECK(read->records[2].op == JournalOp::kAllocate);  // the Filtering one: no Schedule record

  JournalRecoveryReport report;
  auto back = Scheduler::RecoverFromJournal(spec, *cp, sink.data(), &report);
  REQUIRE(back.ok());
  CHECK(report.records_applied == 6);
  CHECK(report.last_sequence == 6);
  CHECK(report.failed.empty());
  CHECK(report.restore.spec_match == SpecMatch::kSame);
  CHECK(*(*back)->SaveState() == *(*s)->SaveState());
  CHECK((*back)->GetGroup("c").state == GroupState::kReserved);
  CHECK((*back)->GetGroup("b").state == GroupState::kAllocated);
  CHECK((*back)->JournalSequence() == 6);

  SECTION("a record out of sequence is refused, the state exactly as before") {
    const std::string before = *(*back)->SaveState();
    JournalRecord again = read->records[5];  // sequence 6 again
    absl::Status st = (*back)->ApplyJournalRecord(again);
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(st.message() == "journal record 6 (Release): out of sequence, the next is 7");
    again.sequence = 9;
    CHECK((*back)->ApplyJournalRecord(again).code() == absl::StatusCode::kFailedPrecondition);
    CHECK(*(*back)->SaveState() == before);
    CHECK((*back)->JournalSequence() == 6);
  }
  SECTION("a record for another cluster is refused, the state exactly as before") {
    const std::string before = *(*back)->SaveState();
    JournalRecord other = read->records[5];
    other.sequence = 7;
    other.fingerprint ^= 1;
    absl::Status st = (*back)->ApplyJournalRecord(other);
    CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
    CHECK(st.message().find("for another cluster") != std::string_view::npos);
    CHECK(*(*back)->SaveState() == before);
  }
  SECTION("a replayed call that fails: returned, or reported with call_error") {
    JournalRecord rel = read->records[5];  // Release("a"): "a" is gone already
    rel.sequence = 7;
    CHECK((*back)->ApplyJournalRecord(rel).code() == absl::StatusCode::kNotFound);
    CHECK((*back)->JournalSequence() == 6);
    std::string error;
    REQUIRE((*back)->ApplyJournalRecord(rel, &error).ok());
    CHECK(error.find("journal record 7 (Release): ") == 0);
    CHECK((*back)->JournalSequence() == 7);
  }
  SECTION("a journal with a gap is refused") {
    std::string gapped;
    for (size_t i = 0; i < read->records.size(); ++i) {
      if (i != 3) AppendJournalRecord(read->records[i], &gapped);
    }
    auto bad = Scheduler::RecoverFromJournal(spec, *cp, gapped);
    REQUIRE(bad.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(bad.status().message() ==
          "journal record 5 (SetNodeHealthy): out of sequence, the next is 4");
  }
  SECTION("a journal of another cluster is refused") {
    ClusterSpec other = spec;
    other.virtual_clusters.pop_back();
    auto bad = Scheduler::RecoverFromJournal(other, *cp, sink.data(), nullptr,
                                             RestoreOptions{SpecMismatch::kRestoreAnyway});
    REQUIRE(bad.status().code() == absl::StatusCode::kFailedPrecondition);
    CHECK(bad.status().message().find("for another cluster") != std::string_view::npos);
  }
  SECTION("records before the checkpoint are skipped") {
    absl::StatusOr<JournalCheckpoint> cp2 = (*s)->StartJournal(&sink);
    REQUIRE(cp2.ok());
    CHECK(cp2->sequence == 6);
    REQUIRE((*s)->Release("b").ok());
    JournalRecoveryReport r2;
    auto back2 = Scheduler::RecoverFromJournal(spec, *cp2, sink.data(), &r2);
    REQUIRE(back2.ok());
    CHECK(r2.records_applied == 1);
    CHECK(*(*back2)->SaveState() == *(*s)->SaveState());
    // The reservation made before the checkpoint is not in it (as with Restore).
    CHECK((*back2)->GetGroup("c").state == GroupState::kAbsent);
  }
}

class FailingSink final : public JournalSink {
 public:
  absl::Status Append(std::string_view) override {
    return absl::ResourceExhaustedError("disk full");
  }
};

TEST_CASE("Journal: a sink error stops mutations until the journal starts again",
          "[journal][unit]") {
  auto s = Scheduler::Create(TwoRacks());
  REQUIRE(s.ok());
  FailingSink failing;
  REQUIRE((*s)->StartJournal(&failing).ok());
  CHECK(!(*s)->StartJournal(nullptr).ok());
  REQUIRE((*s)->SetNodeHealthy("rack0-node0", false).ok());  // took effect, record lost
  CHECK((*s)->JournalStatus().code() == absl::StatusCode::kFailedPrecondition);
  CHECK((*s)->JournalStatus().message().find("disk full") != std::string_view::npos);
  const absl::Status refused = (*s)->SetNodeHealthy("rack0-node0", true);
  CHECK(refused.code() == absl::StatusCode::kFailedPrecondition);
  CHECK((*s)->Nodes()[0].healthy == false);  // the state exactly as before
  // Filtering changes nothing and still runs.
  CHECK((*s)->Schedule(Gang("f", "prod", 1, 1), Phase::kFiltering).ok());
  MemoryJournalSink sink;
  REQUIRE((*s)->StartJournal(&sink).ok());
  CHECK((*s)->JournalStatus().ok());
  REQUIRE((*s)->SetNodeHealthy("rack0-node0", true).ok());
  CHECK(ReadJournal(sink.data())->records.size() == 1);
  (*s)->StopJournal();
  REQUIRE((*s)->SetNodeHealthy("rack0-node0", false).ok());
  CHECK(ReadJournal(sink.data())->records.size() == 1);
}

TEST_CASE("Journal: a file sink's records recover the scheduler", "[journal][unit]") {
  const ClusterSpec spec = TwoRacks();
  const std::string path = absl::StrCat("/tmp/hived_journal_test_", ::getpid(), ".journal");
  std::remove(path.c_str());
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  absl::StatusOr<std::unique_ptr<FileJournalSink>> sink = FileJournalSink::Open(path);
  REQUIRE(sink.ok());
  absl::StatusOr<JournalCheckpoint> cp = (*s)->StartJournal(sink->get());
  REQUIRE(cp.ok());
  for (int i = 0; i < 5; ++i) {
    GroupRequest g = Gang(absl::StrCat("g", i), "prod", 1, 2);
    auto r = (*s)->Schedule(g, Phase::kPreempting);
    REQUIRE(r->outcome == Outcome::kPlaced);
    REQUIRE((*s)->Allocate(g, r->placement).ok());
  }
  REQUIRE((*sink)->Sync().ok());
  absl::StatusOr<std::string> bytes = ReadJournalFile(path);
  REQUIRE(bytes.ok());
  auto back = Scheduler::RecoverFromJournal(spec, *cp, *bytes);
  REQUIRE(back.ok());
  CHECK(*(*back)->SaveState() == *(*s)->SaveState());
  (*s)->StopJournal();
  std::remove(path.c_str());
  CHECK(ReadJournalFile(path).status().code() == absl::StatusCode::kUnavailable);
  CHECK(FileJournalSink::Open("/nonexistent-dir/x.journal").status().code() ==
        absl::StatusCode::kUnavailable);
}

}  // namespace
namespace testing {

std::string Frame(const std::string& body) {
  // Re-frame by decoding a record whose body is `body`: the CRC is the codec's own; build
  // it through a record with the same op and fix the body afterwards is not possible, so
  // compute CRC-32 here (the same polynomial as the codec, checked against it below).
  uint32_t c = 0xffffffffu;
  for (char ch : body) {
    c ^= static_cast<unsigned char>(ch);
    for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  c ^= 0xffffffffu;
  std::string out(8, '\0');
  const auto size = static_cast<uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) {
    out[static_cast<size_t>(i)] = static_cast<char>((size >> (8 * i)) & 0xffu);
    out[static_cast<size_t>(4 + i)] = static_cast<char>((c >> (8 * i)) & 0xffu);
  }
  return out + body;
}

}  // namespace testing
}  // namespace hived
