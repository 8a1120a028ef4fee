// src/filter_scratch_pool.h: the pool of `Filter`'s per-call scratch (src/filter.cc): filters
// run concurrently under the scheduler's shared lock, each with a scratch of its own. A pool
// under one mutex made every filter lock and write the same cache line twice per call (two
// filtering threads ran slower than one: bench/concurrency_bench.cc, BM_FilterThreads), so
// the pool is `kSlots` atomic pointers, each on its own cache line, and a thread starts at
// the slot its number picks (src/rw_lock.h, `ThisThreadNumber`): a thread finds its own
// scratch where it left it, and touches no other thread's line.
//
// Example:
//   std::unique_ptr<FilterScratch> s = pool.Take();   // nullptr: build a new one
//   ...decide...
//   pool.Give(std::move(s));
//
// Invariants:
//  (1) each scratch is in at most one slot or held by at most one caller;
//  (2) the pool owns what its slots point to (freed with the pool).
//
// Thread safety: thread-safe.
#ifndef HIVED_SRC_FILTER_SCRATCH_POOL_H_
#define HIVED_SRC_FILTER_SCRATCH_POOL_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "src/decision.h"
#include "src/rw_lock.h"

namespace hived {

class FilterScratchPool {
 public:
  using FilterScratch = decision::FilterScratch;

  FilterScratchPool() = default;
  FilterScratchPool(const FilterScratchPool&) = delete;
  FilterScratchPool& operator=(const FilterScratchPool&) = delete;
  ~FilterScratchPool() {
    for (Slot& s : slots_) delete s.scratch.exchange(nullptr);
  }

  // A pooled scratch, this thread's slot first; nullptr when the pool is empty.
  std::unique_ptr<FilterScratch> Take() {
    const uint32_t first = ThisThreadNumber();
    for (uint32_t i = 0; i < kSlots; ++i) {
      FilterScratch* s = slots_[(first + i) % kSlots].scratch.exchange(nullptr);
      if (s != nullptr) return std::unique_ptr<FilterScratch>(s);
    }
    return nullptr;
  }
  // Back into the first empty slot from this thread's; freed when every slot is full.
  void Give(std::unique_ptr<FilterScratch> s) {
    const uint32_t first = ThisThreadNumber();
    for (uint32_t i = 0; i < kSlots && s != nullptr; ++i) {
      FilterScratch* empty = nullptr;
      if (slots_[(first + i) % kSlots].scratch.compare_exchange_strong(empty, s.get())) {
        s.release();  // owned by the slot now
      }
    }
  }
  // `check` on each pooled scratch (taken out while checked, so no filter uses it); the
  // first error.
  template <typename Check>
  absl::Status CheckEach(Check check) {
    absl::Status out;
    for (uint32_t i = 0; i < kSlots; ++i) {
      std::unique_ptr<FilterScratch> s(slots_[i].scratch.exchange(nullptr));
      if (s == nullptr) continue;
      absl::Status st = check(*s);
      if (out.ok()) out = st;
      Give(std::move(s));
    }
    return out;
  }

 private:
  static constexpr uint32_t kSlots = 16;
  struct alignas(64) Slot {
    std::atomic<FilterScratch*> scratch{nullptr};
  };
  std::array<Slot, kSlots> slots_;
};

}  // namespace hived

#endif  // HIVED_SRC_FILTER_SCRATCH_POOL_H_
