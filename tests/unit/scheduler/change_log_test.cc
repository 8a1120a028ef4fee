// ChangeLog (src/change_log.h): versions, batches, the bounded ring and its floor.
#include "src/change_log.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "support/catch.h"

namespace hived {
namespace {

TEST_CASE("ChangeLog: a mutation that notes nothing makes no version", "[scheduler][unit]") {
  ChangeLog log(16);
  CHECK(!log.Commit());
  CHECK(log.version() == 0);
  log.NoteGroup("g");
  log.Discard();
  CHECK(!log.Commit());
  CHECK(log.version() == 0);
  REQUIRE(log.CheckInvariants().ok());
}

TEST_CASE("ChangeLog: changes since a version are the union of the later batches, sorted",
          "[scheduler][unit]") {
  ChangeLog log(16);
  log.NoteGroup("b");
  log.NoteNode(NodeId(2));
  log.NoteGroup("b");
  REQUIRE(log.Commit());  // version 1
  log.NoteGroup("a");
  log.NoteNode(NodeId(1));
  REQUIRE(log.Commit());  // version 2
  log.NoteGroup("c");
  REQUIRE(log.Commit());  // version 3
  REQUIRE(log.CheckInvariants().ok());
  ChangeLog::Since all = log.ChangesSince(0);
  CHECK(all.complete);
  CHECK(all.groups == std::vector<std::string>{"a", "b", "c"});
  CHECK(all.nodes == std::vector<NodeId>{NodeId(1), NodeId(2)});
  ChangeLog::Since later = log.ChangesSince(2);
  CHECK(later.groups == std::vector<std::string>{"c"});
  CHECK(later.nodes.empty());
  CHECK(log.ChangesSince(3).groups.empty());
}

TEST_CASE("ChangeLog: the ring drops the oldest batches past its capacity and says so",
          "[scheduler][unit]") {
  ChangeLog log(4);
  for (int i = 0; i < 5; ++i) {
    log.NoteGroup(std::string(1, static_cast<char>('a' + i)));
    log.NoteNode(NodeId(static_cast<uint32_t>(i)));
    REQUIRE(log.Commit());  // 2 entries per version: 2 versions kept
    REQUIRE(log.CheckInvariants().ok());
  }
  CHECK(log.version() == 5);
  CHECK(log.floor() == 3);
  CHECK(!log.ChangesSince(2).complete);
  CHECK(log.ChangesSince(2).groups.empty());
  ChangeLog::Since s = log.ChangesSince(3);
  CHECK(s.complete);
  CHECK(s.groups == std::vector<std::string>{"d", "e"});
  // A mutation larger than the ring loses its own oldest entries: nothing since the
  // version before it can be told, the current version still can (nothing since).
  for (int i = 0; i < 10; ++i) log.NoteNode(NodeId(static_cast<uint32_t>(i)));
  REQUIRE(log.Commit());
  REQUIRE(log.CheckInvariants().ok());
  CHECK(log.version() == 6);
  CHECK(!log.ChangesSince(5).complete);
  CHECK(log.ChangesSince(6).complete);
  CHECK(log.ChangesSince(6).nodes.empty());
  // Discard drops the pending entries only.
  log.NoteGroup("x");
  log.Discard();
  REQUIRE(log.CheckInvariants().ok());
  CHECK(log.version() == 6);
}

TEST_CASE("ChangeLog: a group noted again in one mutation takes one entry", "[scheduler][unit]") {
  // A ring of 3: "a", node 1, "a" again (skipped), "b" fit one version; "a" noted again in
  // the next mutation takes a new entry (another version), overwriting the oldest.
  ChangeLog log(/*capacity=*/3);
  log.NoteGroup("a");
  log.NoteNode(NodeId(1));
  log.NoteGroup("a");
  log.NoteGroup("a");
  REQUIRE(log.Commit());
  REQUIRE(log.CheckInvariants().ok());
  ChangeLog::Since s = log.ChangesSince(0);
  CHECK(s.complete);  // two entries kept: nothing was overwritten
  CHECK(s.groups == std::vector<std::string>{"a"});
  log.NoteGroup("b");
  log.NoteGroup("a");  // not the last group noted: an entry
  log.NoteGroup("a");  // the last one: skipped
  REQUIRE(log.Commit());
  REQUIRE(log.CheckInvariants().ok());
  CHECK(log.floor() == 1);  // 4 entries in a ring of 3: version 1's first one is gone
  s = log.ChangesSince(1);
  CHECK(s.complete);
  CHECK(s.groups == std::vector<std::string>{"a", "b"});
  // A discarded mutation's group is not "just noted" for the next one.
  log.NoteGroup("c");
  log.Discard();
  log.NoteGroup("c");
  REQUIRE(log.Commit());
  CHECK(log.ChangesSince(2).groups == std::vector<std::string>{"c"});
}

TEST_CASE("ChangeLog: capacity 0 counts versions and keeps no change", "[scheduler][unit]") {
  ChangeLog log(/*capacity=*/0);
  CHECK(log.capacity() == 0);
  CHECK(log.ChangesSince(0).complete);  // nothing changed yet: nothing to tell
  log.NoteGroup("a");
  log.NoteNode(NodeId(1));
  log.NoteGroup("b");
  std::vector<std::string> pending;  // the layer above still reads the last group noted
  log.ForEachPendingGroup([&](std::string_view g) { pending.emplace_back(g); });
  CHECK(pending == std::vector<std::string>{"b"});
  REQUIRE(log.Commit());
  REQUIRE(log.CheckInvariants().ok());
  CHECK(log.version() == 1);
  CHECK(log.floor() == 1);
  CHECK(!log.ChangesSince(0).complete);
  CHECK(log.ChangesSince(1).complete);
  CHECK(log.ChangesSince(1).groups.empty());
  log.NoteGroup("c");
  log.Discard();  // no version, nothing kept
  CHECK(!log.Commit());
  log.NoteNode(NodeId(2));
  REQUIRE(log.Commit());
  REQUIRE(log.CheckInvariants().ok());
  CHECK(log.version() == 2);
  CHECK(log.floor() == 2);
  CHECK(!log.ChangesSince(1).complete);
}

// Regression: with capacity 0 the invariant check required floor == version, which a mutation
// under way that has noted more than the scratch slot holds breaks (floor is version + 1 then),
// so a scheduler whose log starts empty failed CheckInvariants while building or restoring.
TEST_CASE("ChangeLog: capacity 0 keeps its invariants during a mutation of several entries",
          "[scheduler][unit]") {
  ChangeLog log(/*capacity=*/0);
  log.NoteGroup("a");
  log.NoteGroup("b");
  log.NoteNode(NodeId(3));
  REQUIRE(log.CheckInvariants().ok());
  log.Discard();
  REQUIRE(log.CheckInvariants().ok());
  log.NoteGroup("c");
  log.NoteGroup("d");
  REQUIRE(log.Commit());
  REQUIRE(log.CheckInvariants().ok());
  CHECK(log.floor() == log.version());
}

TEST_CASE("ChangeLog: capacity 1 tells a one-entry version and no older one", "[scheduler][unit]") {
  ChangeLog log(/*capacity=*/1);
  log.NoteGroup("a");
  REQUIRE(log.Commit());  // version 1: one entry, kept
  CHECK(log.ChangesSince(0).complete);
  CHECK(log.ChangesSince(0).groups == std::vector<std::string>{"a"});
  log.NoteNode(NodeId(4));
  REQUIRE(log.Commit());  // version 2 overwrites version 1's entry
  REQUIRE(log.CheckInvariants().ok());
  CHECK(log.floor() == 1);
  CHECK(!log.ChangesSince(0).complete);
  ChangeLog::Since s = log.ChangesSince(1);
  CHECK(s.complete);
  CHECK(s.nodes == std::vector<NodeId>{NodeId(4)});
  CHECK(s.groups.empty());
}

// The ring against a plain model: a deque of (version, entry) that drops its oldest entry
// when it holds `capacity`, with the floor the newest version it dropped; the ring wraps
// many times over (capacities that are not powers of two included).
TEST_CASE("ChangeLog: the ring answers as a bounded deque", "[scheduler][unit]") {
  struct Kept {
    uint64_t version;
    std::string group;  // empty: a node entry
    uint32_t node;
  };
  for (const size_t capacity :
       {size_t{1}, size_t{2}, size_t{7}, size_t{300}, size_t{1000}, size_t{4096}}) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      ChangeLog log(capacity);
      std::deque<Kept> model;
      size_t model_pending = 0;
      uint64_t version = 0, floor = 0, names = 0;
      std::mt19937 rng(seed);
      for (int step = 0; step < 400; ++step) {
        const int notes = static_cast<int>(rng() % 40);
        for (int n = 0; n < notes; ++n) {
          if (model.size() == capacity) {
            floor = std::max(floor, model.front().version);
            model.pop_front();
            model_pending = std::min(model_pending, model.size());
          }
          if (rng() % 2 == 0) {
            const std::string name = "g" + std::to_string(names++);  // unique: never merged
            log.NoteGroup(name);
            model.push_back({version + 1, name, 0});
          } else {
            const uint32_t node = static_cast<uint32_t>(rng() % 50);
            log.NoteNode(NodeId(node));
            model.push_back({version + 1, "", node});
          }
          ++model_pending;
        }
        if (rng() % 8 == 0) {
          log.Discard();
          model.resize(model.size() - model_pending);
        } else if (log.Commit()) {
          ++version;
        }
        model_pending = 0;
        REQUIRE(log.CheckInvariants().ok());
        REQUIRE(log.version() == version);
        REQUIRE(log.floor() == floor);
        const uint64_t since = version == 0 ? 0 : rng() % (version + 1);
        ChangeLog::Since got = log.ChangesSince(since);
        ChangeLog::Since want;
        if (since < version && since < floor) {
          want.complete = false;
        } else {
          for (const Kept& k : model) {
            if (k.version <= since) continue;
            if (k.group.empty()) {
              want.nodes.push_back(NodeId(k.node));
            } else {
              want.groups.push_back(k.group);
            }
          }
          std::sort(want.groups.begin(), want.groups.end());
          std::sort(want.nodes.begin(), want.nodes.end());
          want.nodes.erase(std::unique(want.nodes.begin(), want.nodes.end()), want.nodes.end());
        }
        INFO("capacity " << capacity << " seed " << seed << " step " << step << " since " << since);
        REQUIRE(got.complete == want.complete);
        REQUIRE(got.groups == want.groups);
        REQUIRE(got.nodes == want.nodes);
      }
    }
  }
}

}  // namespace
}  // namespace hived
