// sim/engine/queue_policy.h: the order in which one VC's waiting jobs are tried.
//
// Each VC has its own queue, so one VC's waiting jobs never block another VC's. A queue
// holds jobs keyed by arrival (a requeued, preempted job keeps its original key and so
// returns to the front). Jobs are grouped into buckets of equal (priority, shape): two
// jobs of the same VC, priority and shape get the same answer from the scheduler in the same
// state, so once one waits in a pass, its whole bucket waits — which keeps a pass
// O(buckets + started jobs) instead of O(queue length).
//
// The policies (`--queue`):
//   strict    one line per VC in arrival order regardless of priority; only the head may
//             start; a waiting head blocks the whole VC until the next wake-up.
//   fifo      (default) one line per (VC, priority), served from the highest priority down;
//             within a priority only the head may start, and a waiting head blocks only its
//             priority (opportunistic jobs never block guaranteed ones, and vice versa).
//   backfill  as fifo, but a job may start ahead of earlier waiting jobs of its priority when
//             it fits now (earliest first among those that fit). Big gangs can starve.
//   easy      EASY backfilling: as backfill, but the first waiting job of each guaranteed
//             priority gets a reservation — the earliest time enough GPUs free up for it,
//             from the running jobs' expected ends (the trace's durations: an oracle) — and
//             a later job starts only if it ends by then or fits in the GPUs spare at that
//             time beyond the reserved job's. GPU counts, not topology, decide the estimate.
//             Opportunistic lines (priority -1) backfill freely. Within a bucket of equal
//             shape only its earliest job is tried per pass (as in backfill).
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_ENGINE_QUEUE_POLICY_H_
#define HIVED_SIM_ENGINE_QUEUE_POLICY_H_

#include <cstdint>
#include <memory>
#include <queue>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "sim/trace/job.h"

namespace hived::sim {

enum class TryResult {
  kStarted,  // the job runs now (it leaves the queue)
  kWaiting,  // it cannot start now (it stays)
  kRemoved,  // it leaves the queue without running (rejected)
};

struct QueuedJob {
  uint64_t key = 0;  // arrival order; smaller is earlier
  Priority priority = 0;
  int32_t shape = 0;  // jobs with equal shape ids are interchangeable for the scheduler
  JobIndex job = 0;
};

enum class QueueKind { kFifo, kStrict, kBackfill, kEasy };
absl::StatusOr<QueueKind> ParseQueueKind(std::string_view name);
std::string_view QueueKindName(QueueKind kind);

// What `easy` asks of the engine.
class BackfillOracle {
 public:
  struct Reservation {
    Time shadow = 0;    // when the reserved job is expected to start
    int64_t extra = 0;  // GPUs spare at `shadow` beyond the reserved job's
  };
  virtual ~BackfillOracle() = default;
  virtual Time Now() const = 0;
  // Expected run time of a waiting job (the trace's duration or what is left of it).
  virtual Time Runtime(JobIndex job) const = 0;
  virtual int32_t Gpus(JobIndex job) const = 0;
  // The reservation of waiting job `head`.
  virtual Reservation Reserve(JobIndex head) const = 0;
};

class QueuePolicy {
 public:
  using TryFn = absl::FunctionRef<TryResult(JobIndex)>;
  virtual ~QueuePolicy() = default;
  void Push(const QueuedJob& job);
  // Tries waiting jobs in the policy's order until the policy says stop.
  virtual void Pass(TryFn try_start) = 0;
  int64_t size() const { return size_; }

 protected:
  using Entry = std::pair<uint64_t, JobIndex>;
  struct Bucket {
    Priority priority = 0;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  };
  // The non-empty bucket with the smallest head key among `buckets_` whose priority is
  // `priority` (any when `any_priority`) and not in `blocked`; -1 when none.
  int Earliest(bool any_priority, Priority priority, const std::vector<bool>& blocked) const;
  // Distinct priorities of non-empty buckets, highest first. Valid until the next call
  // (kept in a member: a pass runs per event, so no allocation per pass).
  const std::vector<Priority>& Priorities() const;
  // `buckets_.size()` flags, all false (for policies that block nothing) or cleared (for
  // those that do): reused across passes.
  const std::vector<bool>& NoneBlocked();
  std::vector<bool>& ClearedBlocked();
  // Tries the head of bucket `b`; pops it unless it waits.
  TryResult TryHead(int b, TryFn try_start);

  std::vector<Bucket> buckets_;
  absl::flat_hash_map<std::pair<Priority, int32_t>, int> bucket_of_;
  int64_t size_ = 0;

 private:
  mutable std::vector<Priority> priorities_;
  std::vector<bool> none_;
  std::vector<bool> blocked_;
};

class StrictQueuePolicy : public QueuePolicy {
 public:
  void Pass(TryFn try_start) override;
};

class FifoQueuePolicy : public QueuePolicy {
 public:
  void Pass(TryFn try_start) override;
};

class BackfillQueuePolicy : public QueuePolicy {
 public:
  void Pass(TryFn try_start) override;
};

class EasyQueuePolicy : public QueuePolicy {
 public:
  // `oracle` must outlive the policy.
  explicit EasyQueuePolicy(const BackfillOracle* oracle) : oracle_(oracle) {}
  void Pass(TryFn try_start) override;

 private:
  const BackfillOracle* oracle_;
};

// `oracle` is needed for kEasy only and must outlive the policy.
std::unique_ptr<QueuePolicy> MakeQueuePolicy(QueueKind kind,
                                             const BackfillOracle* oracle = nullptr);

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_QUEUE_POLICY_H_
