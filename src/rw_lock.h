// src/rw_lock.h: the reader/writer lock behind `Scheduler`'s thread safety (hived/scheduler.h,
// "Thread safety"): writer-preferring, and a reader that meets no writer touches no shared
// cache line and no mutex.
//
// Why not std::shared_mutex: glibc's rwlock prefers readers (a stream of status polls starves
// a writer), and every reader writes its one reader count, so two filtering threads bounce
// that line on every call. absl::Mutex prefers writers, but Debian's Abseil is not built with
// ThreadSanitizer's annotations (TSan would not see it synchronise). Built here on
// std::atomic (sequentially consistent), std::mutex and std::condition_variable, which TSan
// understands.
//
// How: readers count themselves in one of `kSlots` counters, each on its own cache line,
// chosen per thread (a thread keeps its slot, so its lock and unlock touch the same one). A
// writer takes `writers_` (one writer at a time), raises `writer_`, then waits until every
// slot is zero. A reader increments its slot and then reads `writer_`: if a writer is there
// it steps back (decrements, wakes the writer) and waits until the writer is gone. Both sides
// write, then read the other's flag (Dekker, sequentially consistent), so either the reader
// sees the writer or the writer sees the reader; a reader leaving while a writer waits wakes
// it under `mu_`, so no wake-up is lost.
//
// Example:
//   RwLock lock;
//   { RwLock::Shared hold(lock); /* read */ }
//   { RwLock::Exclusive hold(lock); /* write */ }
//
// Invariants:
//  (1) while `writer_` is set by the writer holding `writers_` and every slot reads zero, no
//      reader is inside (the writer holds the lock);
//  (2) a reader is inside only while its slot counts it and it read `writer_` as zero after
//      counting itself.
//
// Thread safety: thread-safe (that is its purpose). A thread unlocks what it locked (the
// scoped holders below); neither side is recursive.
#ifndef HIVED_SRC_RW_LOCK_H_
#define HIVED_SRC_RW_LOCK_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace hived {

// This thread's number: threads are numbered in the order they first ask. Per-thread slots
// (RwLock's reader counts, the filter scratch pool) are chosen by it modulo their count.
inline uint32_t ThisThreadNumber() {
  static std::atomic<uint32_t> next{0};
  thread_local const uint32_t mine = next.fetch_add(1);
  return mine;
}

class RwLock {
 public:
  void LockShared() {
    std::atomic<int64_t>& slot = MySlot();
    while (true) {
      slot.fetch_add(1);
      if (writer_.load() == 0) return;
      slot.fetch_sub(1);  // a writer holds or wants the lock: let it in first
      WakeWriter();
      WaitForNoWriter();
    }
  }
  void UnlockShared() {
    MySlot().fetch_sub(1);
    if (writer_.load() != 0) WakeWriter();
  }
  void LockExclusive() {
    writers_.lock();
    writer_.store(1);
    // Readers hold the lock for microseconds (views are served from snapshots): spin a
    // little before sleeping.
    for (int i = 0; i < 64; ++i) {
      if (NoReaders()) return;
    }
    std::unique_lock<std::mutex> guard(mu_);
    writer_cv_.wait(guard, [this] { return NoReaders(); });
  }
  void UnlockExclusive() {
    writer_.store(0);
    bool readers;
    {
      std::lock_guard<std::mutex> guard(mu_);
      readers = waiting_readers_ > 0;
    }
    if (readers) reader_cv_.notify_all();
    writers_.unlock();
  }

  // Holds the lock exclusively (mutations) or shared (views) for a scope.
  class Exclusive {
   public:
    explicit Exclusive(RwLock& lock) : lock_(lock) { lock_.LockExclusive(); }
    ~Exclusive() { lock_.UnlockExclusive(); }
    Exclusive(const Exclusive&) = delete;
    Exclusive& operator=(const Exclusive&) = delete;

   private:
    RwLock& lock_;
  };
  class Shared {
   public:
    explicit Shared(RwLock& lock) : lock_(lock) { lock_.LockShared(); }
    ~Shared() { lock_.UnlockShared(); }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

   private:
    RwLock& lock_;
  };

 private:
  static constexpr uint32_t kSlots = 16;
  struct alignas(64) Slot {
    std::atomic<int64_t> readers{0};
  };

  std::atomic<int64_t>& MySlot() { return slots_[ThisThreadNumber() % kSlots].readers; }
  bool NoReaders() const {
    for (const Slot& s : slots_) {
      if (s.readers.load() != 0) return false;
    }
    return true;
  }
  void WakeWriter() {
    std::lock_guard<std::mutex> guard(mu_);
    writer_cv_.notify_one();
  }
  void WaitForNoWriter() {
    std::unique_lock<std::mutex> guard(mu_);
    ++waiting_readers_;
    reader_cv_.wait(guard, [this] { return writer_.load() == 0; });
    --waiting_readers_;
  }

  std::array<Slot, kSlots> slots_;
  alignas(64) std::atomic<int32_t> writer_{0};  // a writer holds or waits for the lock
  std::mutex writers_;                          // held by the writer from lock to unlock
  std::mutex mu_;                               // the waits below
  std::condition_variable writer_cv_;
  std::condition_variable reader_cv_;
  int32_t waiting_readers_ = 0;  // under `mu_`
};

}  // namespace hived

#endif  // HIVED_SRC_RW_LOCK_H_
