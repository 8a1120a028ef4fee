// src/group_table.h: the scheduler's live groups, by dense id and by name.
//
// A group is a gang the scheduler knows: running (possibly lazily downgraded), Reserved
// (a kPlaced result not yet allocated), Preempting (holding a reservation while its victims
// go) or being preempted. Ids are dense and recycled, so per-leaf
// arrays (`PhysicalCells` user and reserver, `VCell::user`) refer to groups by a 32-bit id; a
// recycled slot keeps its strings' and vectors' capacity (no allocation per group in the
// steady state). Slots live in fixed chunks of `kChunk` groups: a growing table never moves
// its groups (a filling cluster would otherwise move every group's strings and vectors at
// each doubling), a `Group&` stays valid across Add, and a filling cluster allocates one
// chunk per `kChunk` groups (a deque's blocks hold one group each).
//
// The name index owns its keys (a short name sits inline in the table's slot, so a lookup
// compares it without touching the group: keys that viewed the groups' names cost a cache
// miss per lookup on a large table). `Find` is const and writes nothing, so readers that
// share a lock (the views, CheckInvariants) may call it at once; a remembered last entry,
// which would save `Remove` its hash, raced between such readers (TSan, tests/stress).
//
// Invariants (CheckInvariants):
//  (1) The name index maps exactly the live groups' names to their ids.
//  (2) The free list holds exactly the dead slots, each once.
//  (3) A dead slot holds no leaves; a live group's physical and virtual leaf arrays have
//      the same length.
//  (4) A dead slot holds no pods; a live group's pods, when tracked, count their allocated
//      slots, at least one, each name once.
//
// Example:
//   GroupTable groups;
//   GroupId g = groups.Add("job-1");
//   groups[g].priority = 3;
//   groups.Remove(groups.Find("job-1"));
//
// Thread safety: const members may run concurrently with each other; anything else needs
// exclusive access.
#ifndef HIVED_SRC_GROUP_TABLE_H_
#define HIVED_SRC_GROUP_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cellalloc/ids.h"
#include "hived/schedule_result.h"
#include "hived/types.h"

namespace hived {

using VCellId = uint32_t;
using GroupId = uint32_t;
inline constexpr uint32_t kNilId = 0xffffffffu;

// kReserved: a kPlaced result held until Allocate or Unreserve (src/reservations.h).
enum class GState : uint8_t { kRunning, kPreempting, kBeingPreempted, kReserved };

// What few groups have, all empty for most: one pointer in `Group`, allocated on the first
// non-empty write; a recycled slot keeps it, emptied.
struct GroupNotes {
  std::string unknown_vc;        // the requested VC, when the config lacks it
  std::string pinned_id;         // the request's pinned cell
  std::string leaf_type;         // the request's leaf cell type
  std::string preemptor;         // the group preempting it, or that downgraded it
  std::string downgrade_reason;  // why it runs opportunistically though guaranteed
};

// A running group's pods once a per-pod call touched it (scheduler.h "Pods"): one slot per
// pod of its placement (placement order), each allocated to a named pod or free.
struct PodSlot {
  std::string name;  // empty: free
  std::string uid;
};
struct GroupPods {
  std::vector<PodSlot> slots;
  int32_t allocated = 0;  // slots with a name; > 0 while the group runs
};

// A reservation's times (scheduler.h "Reservations with time"): `kNoTime` when unset.
inline constexpr int64_t kNoTime = INT64_MIN;

struct Group {
  std::string name;
  // The requested VC's name: the VC's own (`known_vc`: the VCs never change after the
  // scheduler is built) or, for a VC the config lacks, `notes().unknown_vc`.
  const std::string& vc_name() const {
    return known_vc != nullptr ? *known_vc : notes().unknown_vc;
  }
  const std::string* known_vc = nullptr;
  VcId vc;
  Priority priority = 0;  // requested
  Priority running = 0;   // priority it runs at now
  bool lazy = false;
  bool alive = false;
  // Counts the slot's lives (set by Add): with the slot id, a fast-path handle
  // (hived/fast_path.h) that a recycled slot does not match.
  uint32_t generation = 0;
  GState state = GState::kRunning;
  std::vector<GroupMember> members;  // as requested (GroupStatus::request, SaveState)
  // The placement its caller allocated it with, for a group no Schedule decision placed (or
  // one whose placement no longer follows from its leaves: lazily downgraded, or allocated
  // with other preassigned types than decided); null for the rest, whose placement is the
  // decision's, derived again from `chain`, `members`, `pleaves` and `vleaves` when asked
  // (`SchedulerImpl::PlacementOf`): a running group holds no copy of it.
  std::unique_ptr<Placement> given_placement;
  ChainId chain;
  std::vector<CellId> pleaves;   // placement order
  std::vector<VCellId> vleaves;  // kNilId for opportunistic leaves
  int32_t reserved_by_others = 0;
  // Null: every pod of the placement is allocated, named by its index (a gang allocated
  // whole; a running group's pods cost nothing until a per-pod call). Freed by Remove.
  std::unique_ptr<GroupPods> pods;
  // A reservation's times, reset by Add (src/reservation_clock.cc).
  int64_t reserved_at = kNoTime;
  int64_t reservation_deadline = kNoTime;

  const GroupNotes& notes() const {
    static const GroupNotes* const kNone = new GroupNotes();
    return notes_ != nullptr ? *notes_ : *kNone;
  }
  // Sets one note (`&GroupNotes::preemptor`, ...); empty text allocates nothing.
  void SetNote(std::string GroupNotes::*note, std::string_view text) {
    if (text.empty() && notes_ == nullptr) return;
    if (notes_ == nullptr) notes_ = std::make_unique<GroupNotes>();
    ((*notes_).*note).assign(text.data(), text.size());
  }
  // Empties every note, keeping the strings' capacity.
  void ClearNotes() {
    if (notes_ == nullptr) return;
    for (std::string GroupNotes::*n :
         {&GroupNotes::unknown_vc, &GroupNotes::pinned_id, &GroupNotes::leaf_type,
          &GroupNotes::preemptor, &GroupNotes::downgrade_reason}) {
      ((*notes_).*n).clear();
    }
  }

 private:
  std::unique_ptr<GroupNotes> notes_;
};

class GroupTable {
 public:
  // The live group named `name`, or kNilId. One hash of `name`.
  GroupId Find(std::string_view name) const;
  // A slot for a new live group named `name` (a recycled one first); its other fields
  // are the caller's to set, except `name`. REQUIRES: Find(name) == kNilId.
  GroupId Add(std::string_view name);
  // Ends group `g`: unindexed, not alive, no leaves, slot free for reuse. One hash of its
  // name. REQUIRES: g is live.
  void Remove(GroupId g);

  Group& operator[](GroupId g) { return chunks_[g / kChunk][g % kChunk]; }
  const Group& operator[](GroupId g) const { return chunks_[g / kChunk][g % kChunk]; }

  // Every slot, live or dead (`alive`), in id order: `size()`, `[id]`, range-for.
  class Slots {
   public:
    class Iterator {
     public:
      Iterator(const GroupTable* t, GroupId g) : t_(t), g_(g) {}
      const Group& operator*() const { return (*t_)[g_]; }
      Iterator& operator++() {
        ++g_;
        return *this;
      }
      bool operator!=(const Iterator& o) const { return g_ != o.g_; }

     private:
      const GroupTable* t_;
      GroupId g_;
    };
    explicit Slots(const GroupTable* t) : t_(t) {}
    size_t size() const { return t_->size_; }
    const Group& operator[](size_t g) const { return (*t_)[static_cast<GroupId>(g)]; }
    Iterator begin() const { return Iterator(t_, 0); }
    Iterator end() const { return Iterator(t_, t_->size_); }

   private:
    const GroupTable* t_;
  };
  Slots slots() const { return Slots(this); }

  absl::Status CheckInvariants() const;

 private:
  static constexpr GroupId kChunk = 64;

  std::vector<std::unique_ptr<Group[]>> chunks_;  // slot g: chunks_[g / kChunk][g % kChunk]
  GroupId size_ = 0;                              // slots in use (live or dead)
  std::vector<GroupId> free_;
  using NameIndex = absl::flat_hash_map<std::string, GroupId>;
  NameIndex by_name_;  // the live groups' names (invariant 1)
};

}  // namespace hived

#endif  // HIVED_SRC_GROUP_TABLE_H_
