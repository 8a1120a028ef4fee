// src/change_log.h: the state version and the recent changes behind `Scheduler::version()`
// and `Scheduler::Changes(since)` (issue 29 item 3): a cache or an inspect API follows the
// scheduler by re-reading what changed instead of the full views.
//
// During a mutation the scheduler notes what it touches (`NoteGroup`, `NoteNode`: group
// names and node ids; duplicates allowed); `Commit` ends the mutation: when anything was
// noted, the version increases by one and the noted entries carry it. Entries live in a
// ring of `capacity` slots written in place (a slot's name keeps its capacity, so a steady
// state allocates nothing); a slot overwritten takes its old version's completeness with
// it: `floor` is the newest version that lost an entry, and changes since a version older
// than `floor` cannot be told (the caller re-reads the full views). Capacity 0 keeps no
// change (the feed is off): one scratch slot still holds the pending entries (so
// `ForEachPendingGroup` answers), and `Commit` drops them, `floor` following `version`.
//
// Example:
//   ChangeLog log(/*capacity=*/1024);
//   log.NoteGroup("g1");
//   log.NoteNode(NodeId(3));
//   log.Commit();                              // version() == 1
//   ChangeLog::Since s = log.ChangesSince(0);  // complete; groups {"g1"}, nodes {3}
//
// Invariants (CheckInvariants, tests/unit/scheduler/change_log_test.cc):
//  (1) The committed entries, oldest to newest, have non-decreasing versions, each in
//      (floor - 1, version()]; at most `capacity()` entries are kept (none when it is 0,
//      and then floor >= version(): version() + 1 while a
//      mutation under way has noted more than the one scratch slot holds).
//  (2) The pending entries (noted since the last Commit or Discard) follow them.
//
// Thread safety: not thread-safe; the scheduler's exclusive lock serialises the writers
// (Note*, Commit, Discard), the shared lock its readers (version, ChangesSince).
#ifndef HIVED_SRC_CHANGE_LOG_H_
#define HIVED_SRC_CHANGE_LOG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/ids.h"

namespace hived {

class ChangeLog {
 public:
  static constexpr size_t kDefaultCapacity = size_t{1} << 16;
  // The ring is allocated here, never later: a steady state allocates nothing
  // (hived/fast_path.h, contract 6). REQUIRES: capacity <= kMaxChangeLogCapacity
  // (hived/scheduler.h; `Scheduler::Create` refuses more).
  explicit ChangeLog(size_t capacity = kDefaultCapacity);

  uint64_t version() const { return version_; }
  uint64_t floor() const { return floor_; }
  size_t capacity() const { return capacity_; }

  // Pending entries of the mutation under way.
  // A group noted again in the same mutation is skipped when it is the last group noted
  // (a call notes its group at creation, per run of leaves and at its end): one entry,
  // one copy of the name (ChangesSince dedupes within a version anyway).
  void NoteGroup(std::string_view name) {
    if (last_group_ < taken_ && last_group_ + pending_ >= taken_ &&
        ring_[last_group_slot_].name == name) {
      return;
    }
    last_group_slot_ = NextSlot();
    last_group_ = taken_ - 1;
    ring_[last_group_slot_].name.assign(name.data(), name.size());
  }
  void NoteNode(NodeId node) {
    Entry& e = Slot();
    e.name.clear();
    e.node = node;
  }
  bool pending() const { return pending_ > 0; }
  // `f(name)` for each group name noted since the last Commit or Discard, oldest first
  // (duplicates possible): the layer above notes the groups whose status follows a noted one's
  // (sharing/layered.cc, `EndChange`).
  template <typename F>
  void ForEachPendingGroup(F f) const {
    const size_t cap = ring_.size();
    for (size_t i = size_ - pending_; i < size_; ++i) {
      const Entry& e = ring_[Wrap(begin_ + i, cap)];
      if (!e.name.empty()) f(std::string_view(e.name));
    }
  }
  // Ends the mutation: a new version holding the pending entries when there are any (true).
  bool Commit();
  // Ends the mutation without a new version (nothing changed): the pending entries are
  // dropped (the slots they overwrote stay lost: `floor` keeps counting them).
  void Discard();

  // What changed after version `since`: group names and node ids, each sorted and unique.
  // `complete` is false (and the lists empty) when entries after `since` were overwritten.
  // REQUIRES: since <= version().
  struct Since {
    bool complete = true;
    std::vector<std::string> groups;
    std::vector<NodeId> nodes;
  };
  Since ChangesSince(uint64_t since) const;

  absl::Status CheckInvariants() const;

 private:
  struct Entry {
    uint64_t version = 0;
    NodeId node;       // a node entry when `name` is empty
    std::string name;  // a group entry's name
  };
  // The next slot for a pending entry (version() + 1), overwriting the oldest when full;
  // `NextSlot` gives its index.
  Entry& Slot() { return ring_[NextSlot()]; }
  size_t NextSlot();
  // `i mod cap` for i < 2 * cap (a ring index plus an offset below the ring's size): no division.
  static size_t Wrap(size_t i, size_t cap) { return i >= cap ? i - cap : i; }

  size_t capacity_;  // as constructed; the ring has max(capacity_, 1) slots
  std::vector<Entry> ring_;
  size_t begin_ = 0;    // the oldest kept entry
  size_t size_ = 0;     // kept entries, the pending ones included
  size_t pending_ = 0;  // the last `pending_` of them
  uint64_t version_ = 0;
  uint64_t floor_ = 0;
  // Slots taken so far (pending entries are the last `pending_` taken), and the last group
  // entry noted: taken as number `last_group_` (0-based), at `last_group_slot_`. It is a
  // pending entry iff last_group_ < taken_ <= last_group_ + pending_ (kNever: none yet).
  static constexpr uint64_t kNever = UINT64_MAX;
  uint64_t taken_ = 0;
  uint64_t last_group_ = kNever;
  size_t last_group_slot_ = 0;
};

}  // namespace hived

#endif  // HIVED_SRC_CHANGE_LOG_H_
