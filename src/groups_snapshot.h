// src/groups_snapshot.h: the group list `Scheduler::Groups()` and its pages are served from
// (issue 29 item 3, "views that never stall a decision"). Building the list takes ~20 ms at
// 25k groups (a status per group, sorted by name); under the scheduler's shared lock that
// held every writer out for as long. Instead the façade keeps the last list built as an
// immutable snapshot at a state version and brings it up to date from `Changes(since)`: under
// the shared lock it only re-reads the statuses of the groups that changed (`Update`); the
// merge into a new snapshot, and the copy a caller gets, run outside the lock. Only the first
// call, or one after the change log lost the snapshot's version (hived/scheduler.h,
// `Changes`), builds the whole list under the lock.
//
// Example (the façade, src/scheduler.cc):
//   std::shared_ptr<const GroupList> base = snapshot.Latest();
//   GroupsSnapshot::Update u;
//   { shared lock: u = base at the current version ? nothing : the changed statuses }
//   std::shared_ptr<const GroupList> now = snapshot.Advance(base, std::move(u));
//
// Invariants (checked by tests/property/changes_property_test.cc through the views):
//  (1) a published list is sorted by name, names unique, no kAbsent group; it equals
//      `Groups()` of the state at its version;
//  (2) `Latest()` never goes back to an older version.
//
// Thread safety: thread-safe. Lists are immutable once published and shared by pointer;
// `mu_` guards only which one is the latest.
#ifndef HIVED_SRC_GROUPS_SNAPSHOT_H_
#define HIVED_SRC_GROUPS_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "hived/status_view.h"

namespace hived {

// One published list: every group's status at `version`.
struct GroupList {
  uint64_t version = 0;
  std::vector<std::shared_ptr<const GroupStatus>> groups;  // sorted by name
};

class GroupsSnapshot {
 public:
  // What the shared lock is held for: a whole list (`full`), or the statuses of the groups
  // changed since the base list's version, sorted by name (kAbsent: the group is gone; its
  // `name` set all the same).
  struct Update {
    uint64_t version = 0;
    bool full = false;
    std::vector<GroupStatus> statuses;
  };

  // The latest list published (nullptr before the first).
  std::shared_ptr<const GroupList> Latest() const;
  // `base` brought up to `update` (a new list, or `base` itself when `update` has nothing
  // and the same version), published unless a newer one was meanwhile. REQUIRES: `update`
  // was read at a version no older than `base`'s, with `base` as its base unless `full`.
  std::shared_ptr<const GroupList> Advance(const std::shared_ptr<const GroupList>& base,
                                           Update update);

  // The copies a caller gets: every group, or the first `limit` above `after`.
  static std::vector<GroupStatus> All(const GroupList& list);
  static std::vector<GroupStatus> Page(const GroupList& list, std::string_view after,
                                       int32_t limit);

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const GroupList> latest_;
};

}  // namespace hived

#endif  // HIVED_SRC_GROUPS_SNAPSHOT_H_
