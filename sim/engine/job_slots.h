// sim/engine/job_slots.h: a job index's place in a table of the jobs that hold one now (the
// replay's live jobs, a backend's runs), stored for those jobs only, not for the whole trace
// (issue 28 item 3).
//
// A span of indices (from the oldest job holding a place to the newest) is not enough: one
// long job early in a generated trace keeps it open for nearly the whole trace (measured on
// the 1M-job trace: a span of 999,721 of 1,000,000). So the places live in a hash map of the
// jobs holding one: memory follows the jobs in flight. Nothing iterates the map in its own
// order: `ForEach` visits the jobs by ascending index.
//
// Invariants (`CheckInvariants`): every stored place is >= 0 (a job without one is absent).
//
// Example:
//   JobSlots slots;
//   slots.Set(7, 0);     // job 7 holds place 0
//   slots.Get(7);        // 0; Get(6) == -1
//   slots.Set(7, -1);    // job 7 holds none
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_ENGINE_JOB_SLOTS_H_
#define HIVED_SIM_ENGINE_JOB_SLOTS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace hived::sim {

class JobSlots {
 public:
  // Job j's place, or -1 when it holds none.
  int32_t Get(int64_t j) const {
    auto it = places_.find(j);
    return it == places_.end() ? -1 : it->second;
  }
  // Sets job j's place (-1: none). REQUIRES: place >= -1.
  void Set(int64_t j, int32_t place) {
    if (place < 0) {
      places_.erase(j);
    } else {
      places_[j] = place;
    }
  }
  // `f(j, place)` for each job holding a place, by ascending j.
  template <typename F>
  void ForEach(F f) const {
    std::vector<std::pair<int64_t, int32_t>> sorted(places_.begin(), places_.end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [j, place] : sorted) f(j, place);
  }
  // Jobs holding a place.
  size_t size() const { return places_.size(); }
  bool CheckInvariants() const {
    for (const auto& [j, place] : places_) {
      if (place < 0) return false;
    }
    return true;
  }

 private:
  absl::flat_hash_map<int64_t, int32_t> places_;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_JOB_SLOTS_H_
