// sim/engine/job_slots.h: a job index's place in a table of the jobs that hold one now (the
// replay's live jobs, a backend's runs), stored for the span of indices between the lowest
// and the highest job holding one, not for the whole trace (issue 28 item 3).
//
// Jobs enter a replay in index order and mostly leave in about that order, so the span
// follows the jobs in flight: a 10M-job trace with thousands of jobs in flight holds
// thousands of entries, not 40 MB per table. (A job that stays for the whole replay keeps the
// span open from its index on: at most 4 bytes a job, as a table sized by the trace.)
//
// Invariants (`CheckInvariants`): every entry in the span is -1 or a place >= 0; the span is
// empty or its first and last entries are places (trimmed at both ends).
//
// Example:
//   JobSlots slots;
//   slots.Set(7, 0);     // job 7 holds place 0
//   slots.Get(7);        // 0; Get(6) == -1
//   slots.Set(7, -1);    // job 7 holds none; the span is empty again
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_ENGINE_JOB_SLOTS_H_
#define HIVED_SIM_ENGINE_JOB_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <deque>

namespace hived::sim {

class JobSlots {
 public:
  // Job j's place, or -1 when it holds none. REQUIRES: j >= 0.
  int32_t Get(int64_t j) const {
    const int64_t k = j - base_;
    return k >= 0 && k < static_cast<int64_t>(span_.size()) ? span_[static_cast<size_t>(k)] : -1;
  }
  // Sets job j's place (-1: none). REQUIRES: j >= 0, place >= -1.
  void Set(int64_t j, int32_t place) {
    if (place < 0) {
      const int64_t k = j - base_;
      if (k < 0 || k >= static_cast<int64_t>(span_.size())) return;
      span_[static_cast<size_t>(k)] = -1;
      while (!span_.empty() && span_.front() < 0) {
        span_.pop_front();
        ++base_;
      }
      while (!span_.empty() && span_.back() < 0) span_.pop_back();
      return;
    }
    if (span_.empty()) base_ = j;
    for (; j < base_; --base_) span_.push_front(-1);
    const size_t k = static_cast<size_t>(j - base_);
    if (k >= span_.size()) span_.resize(k + 1, -1);
    span_[k] = place;
  }
  // `f(j, place)` for each job holding a place, ascending j.
  template <typename F>
  void ForEach(F f) const {
    for (size_t k = 0; k < span_.size(); ++k) {
      if (span_[k] >= 0) f(base_ + static_cast<int64_t>(k), span_[k]);
    }
  }
  // Entries stored (for tests): the span from the lowest to the highest job holding a place.
  size_t span() const { return span_.size(); }
  bool CheckInvariants() const {
    for (int32_t p : span_) {
      if (p < -1) return false;
    }
    return span_.empty() || (span_.front() >= 0 && span_.back() >= 0);
  }

 private:
  int64_t base_ = 0;  // the job index of span_[0]
  std::deque<int32_t> span_;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_JOB_SLOTS_H_
