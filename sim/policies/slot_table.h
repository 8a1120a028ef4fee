// sim/policies/slot_table.h: per-job values that only some jobs hold at a time, stored for those.
//
// A `SlotTable<T>` maps a job index (0 .. jobs-1) to a `T` that exists only while the job
// needs it (the backends' runs: jobs running or preempting). The jobs' slots are a
// `JobSlots` (sim/engine/job_slots.h): stored for the jobs holding a value only, not for
// the whole trace; the values live in a dense
// array sized by the most jobs holding one at once, and a freed value's place is reused (O(1) free
// list), so a million-job trace with a few thousand jobs running holds a few thousand values, not a
// million.
//
// Invariants (`CheckInvariants`): slot_.Get(j) == -1 or values_[slot_.Get(j)] is job j's value, and
// no two jobs share a slot; free_ holds exactly the slots no job refers to, each once; a freed
// value is reset to `T()` (so `Open` of a job without one gives a fresh `T`).
//
// Example:
//   SlotTable<Run> runs(job_count);
//   runs.Open(7).running = true;   // made on first use
//   if (Run* r = runs.Find(7)) ...
//   runs.Close(7);                 // its slot is reused by the next Open
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_POLICIES_SLOT_TABLE_H_
#define HIVED_SIM_POLICIES_SLOT_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/engine/job_slots.h"

namespace hived::sim {

template <typename T>
class SlotTable {
 public:
  explicit SlotTable(size_t jobs) : jobs_(jobs) {}
  // The number of jobs (valid indices are 0 .. size()-1).
  size_t size() const { return jobs_; }
  // The number of jobs holding a value now.
  size_t live() const { return values_.size() - free_.size(); }
  // Job j's value, made (`T()`) when it has none. REQUIRES: j < size().
  T& Open(int32_t j) {
    int32_t slot = slot_.Get(j);
    if (slot < 0) {
      if (free_.empty()) {
        slot = static_cast<int32_t>(values_.size());
        values_.emplace_back();
      } else {
        slot = free_.back();
        free_.pop_back();
      }
      slot_.Set(j, slot);
    }
    return values_[static_cast<size_t>(slot)];
  }
  // Job j's value, or null when it holds none. REQUIRES: j < size().
  T* Find(int32_t j) {
    const int32_t slot = slot_.Get(j);
    return slot < 0 ? nullptr : &values_[static_cast<size_t>(slot)];
  }
  const T* Find(int32_t j) const {
    const int32_t slot = slot_.Get(j);
    return slot < 0 ? nullptr : &values_[static_cast<size_t>(slot)];
  }
  // Job j's value. REQUIRES: job j holds one.
  const T& operator[](size_t j) const {
    return values_[static_cast<size_t>(slot_.Get(static_cast<int64_t>(j)))];
  }
  // Drops job j's value (nothing when it holds none); its slot is reused.
  void Close(int32_t j) {
    const int32_t slot = slot_.Get(j);
    if (slot < 0) return;
    values_[static_cast<size_t>(slot)] = T();
    free_.push_back(slot);
    slot_.Set(j, -1);
  }
  // Whether the invariants above hold (O(jobs + values); for tests).
  bool CheckInvariants() const {
    std::vector<int8_t> seen(values_.size(), 0);
    bool ok = slot_.CheckInvariants();
    slot_.ForEach([&](int64_t j, int32_t s) {
      if (j >= static_cast<int64_t>(jobs_) || s >= static_cast<int32_t>(values_.size()) ||
          seen[static_cast<size_t>(s)]++ != 0) {
        ok = false;
      }
    });
    if (!ok) return false;
    for (int32_t s : free_) {
      if (s < 0 || s >= static_cast<int32_t>(values_.size())) return false;
      if (seen[static_cast<size_t>(s)]++ != 0) return false;
    }
    for (int8_t x : seen) {
      if (x != 1) return false;
    }
    return true;
  }

 private:
  size_t jobs_;
  JobSlots slot_;  // by job: its value's index, or -1
  std::vector<T> values_;
  std::vector<int32_t> free_;  // indices of values_ no job refers to
};

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_SLOT_TABLE_H_
