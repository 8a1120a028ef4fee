// sim/engine/job_slots.h: a job index's place in a table of the jobs that hold one now (the
// replay's live jobs, a backend's runs), stored for pages of job indices that hold at least
// one place, not for the whole trace (issue 28 item 3).
//
// The indices are split in pages of `kPageJobs`; a page is allocated when a job of it takes a
// place and freed when its last one leaves. Jobs enter a replay in index order and mostly
// leave in about that order, so the pages held follow the jobs in flight; a long job keeps
// only its own page (a span of indices from the oldest to the newest job holding a place
// stayed open for 999,721 of the generated 1M-job trace's jobs: one long job early on; a hash
// map of the jobs took more CPU: 19.4 and 19.6 s against 18.7 and 19.0 s paged, 1M jobs with
// the private baseline, alternated, load 19). A lookup is two array reads.
//
// Invariants (`CheckInvariants`): a page is held iff it counts > 0 places; its count is the
// number of its entries >= 0; entries are >= -1.
//
// Example:
//   JobSlots slots;
//   slots.Set(7, 0);     // job 7 holds place 0
//   slots.Get(7);        // 0; Get(6) == -1
//   slots.Set(7, -1);    // job 7 holds none; its page is freed
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_ENGINE_JOB_SLOTS_H_
#define HIVED_SIM_ENGINE_JOB_SLOTS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace hived::sim {

class JobSlots {
 public:
  static constexpr int64_t kPageJobs = 1024;

  // Job j's place, or -1 when it holds none. REQUIRES: j >= 0.
  int32_t Get(int64_t j) const {
    const size_t p = static_cast<size_t>(j / kPageJobs);
    if (p >= pages_.size() || !pages_[p]) return -1;
    return pages_[p]->places[static_cast<size_t>(j % kPageJobs)];
  }
  // Sets job j's place (-1: none). REQUIRES: j >= 0, place >= -1.
  void Set(int64_t j, int32_t place) {
    const size_t p = static_cast<size_t>(j / kPageJobs);
    const size_t k = static_cast<size_t>(j % kPageJobs);
    if (place < 0) {
      if (p >= pages_.size() || !pages_[p] || pages_[p]->places[k] < 0) return;
      pages_[p]->places[k] = -1;
      --size_;
      if (--pages_[p]->count == 0) {
        pages_[p].reset();
        --held_;
      }
      return;
    }
    if (p >= pages_.size()) pages_.resize(p + 1);
    if (!pages_[p]) {
      pages_[p] = std::make_unique<Page>();
      pages_[p]->places.fill(-1);
      ++held_;
    }
    int32_t& slot = pages_[p]->places[k];
    if (slot < 0) {
      ++pages_[p]->count;
      ++size_;
    }
    slot = place;
  }
  // `f(j, place)` for each job holding a place, by ascending j.
  template <typename F>
  void ForEach(F f) const {
    for (size_t p = 0; p < pages_.size(); ++p) {
      if (!pages_[p]) continue;
      for (size_t k = 0; k < pages_[p]->places.size(); ++k) {
        const int32_t place = pages_[p]->places[k];
        if (place >= 0) f(static_cast<int64_t>(p) * kPageJobs + static_cast<int64_t>(k), place);
      }
    }
  }
  // Jobs holding a place, and pages held (for tests).
  size_t size() const { return size_; }
  size_t pages() const { return held_; }
  bool CheckInvariants() const {
    size_t size = 0, held = 0;
    for (const std::unique_ptr<Page>& page : pages_) {
      if (!page) continue;
      int32_t count = 0;
      for (int32_t place : page->places) {
        if (place < -1) return false;
        if (place >= 0) ++count;
      }
      if (count == 0 || count != page->count) return false;
      size += static_cast<size_t>(count);
      ++held;
    }
    return size == size_ && held == held_;
  }

 private:
  struct Page {
    std::array<int32_t, kPageJobs> places;
    int32_t count = 0;  // entries >= 0
  };
  // By page number (j / kPageJobs): 8 bytes per 1,024 jobs of the trace, null when no job of
  // the page holds a place.
  std::vector<std::unique_ptr<Page>> pages_;
  size_t size_ = 0;
  size_t held_ = 0;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_JOB_SLOTS_H_
