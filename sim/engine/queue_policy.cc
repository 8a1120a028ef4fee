#include "sim/engine/queue_policy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"

namespace hived::sim {

absl::StatusOr<QueueKind> ParseQueueKind(std::string_view name) {
  if (name == "fifo") return QueueKind::kFifo;
  if (name == "strict") return QueueKind::kStrict;
  if (name == "backfill") return QueueKind::kBackfill;
  if (name == "easy") return QueueKind::kEasy;
  return absl::InvalidArgumentError(absl::StrCat("unknown queue policy '", Av(name),
                                                 "' (expected easy, fifo, strict or backfill)"));
}

std::string_view QueueKindName(QueueKind kind) {
  switch (kind) {
    case QueueKind::kFifo:
      return "fifo";
    case QueueKind::kStrict:
      return "strict";
    case QueueKind::kBackfill:
      return "backfill";
    case QueueKind::kEasy:
      return "easy";
  }
  return "fifo";
}

void QueuePolicy::Push(const QueuedJob& job) {
  auto [it, inserted] = bucket_of_.try_emplace(std::make_pair(job.priority, job.shape),
                                               static_cast<int>(buckets_.size()));
  if (inserted) {
    buckets_.emplace_back();
    buckets_.back().priority = job.priority;
  }
  buckets_[static_cast<size_t>(it->second)].heap.emplace(job.key, job.job);
  ++size_;
}

int QueuePolicy::Earliest(bool any_priority, Priority priority,
                          const std::vector<bool>& blocked) const {
  int best = -1;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket& bucket = buckets_[b];
    if (bucket.heap.empty() || blocked[b]) continue;
    if (!any_priority && bucket.priority != priority) continue;
    if (best < 0 || bucket.heap.top() < buckets_[static_cast<size_t>(best)].heap.top()) {
      best = static_cast<int>(b);
    }
  }
  return best;
}

const std::vector<Priority>& QueuePolicy::Priorities() const {
  std::vector<Priority>& out = priorities_;
  out.clear();
  for (const Bucket& b : buckets_) {
    if (!b.heap.empty()) out.push_back(b.priority);
  }
  std::sort(out.begin(), out.end(), std::greater<Priority>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const std::vector<bool>& QueuePolicy::NoneBlocked() {
  none_.resize(buckets_.size(), false);  // never set: only grows with new buckets
  return none_;
}

std::vector<bool>& QueuePolicy::ClearedBlocked() {
  blocked_.assign(buckets_.size(), false);
  return blocked_;
}

TryResult QueuePolicy::TryHead(int b, TryFn try_start) {
  Bucket& bucket = buckets_[static_cast<size_t>(b)];
  const JobIndex job = bucket.heap.top().second;
  TryResult r = try_start(job);
  if (r != TryResult::kWaiting) {
    bucket.heap.pop();
    --size_;
  }
  return r;
}

void StrictQueuePolicy::Pass(TryFn try_start) {
  const std::vector<bool>& none = NoneBlocked();
  while (true) {
    const int b = Earliest(/*any_priority=*/true, 0, none);
    if (b < 0 || TryHead(b, try_start) == TryResult::kWaiting) return;
  }
}

void FifoQueuePolicy::Pass(TryFn try_start) {
  const std::vector<bool>& none = NoneBlocked();
  for (Priority p : Priorities()) {
    while (true) {
      const int b = Earliest(/*any_priority=*/false, p, none);
      if (b < 0 || TryHead(b, try_start) == TryResult::kWaiting) break;
    }
  }
}

void BackfillQueuePolicy::Pass(TryFn try_start) {
  std::vector<bool>& blocked = ClearedBlocked();
  for (Priority p : Priorities()) {
    while (true) {
      const int b = Earliest(/*any_priority=*/false, p, blocked);
      if (b < 0) break;
      if (TryHead(b, try_start) == TryResult::kWaiting) blocked[static_cast<size_t>(b)] = true;
    }
  }
}

void EasyQueuePolicy::Pass(TryFn try_start) {
  std::vector<bool>& blocked = ClearedBlocked();
  for (Priority p : Priorities()) {
    bool reserved = false;
    BackfillOracle::Reservation r;
    while (true) {
      const int b = Earliest(/*any_priority=*/false, p, blocked);
      if (b < 0) break;
      const JobIndex job = buckets_[static_cast<size_t>(b)].heap.top().second;
      bool ends_before_shadow = false;
      if (reserved) {
        ends_before_shadow = oracle_->Now() + oracle_->Runtime(job) <= r.shadow;
        if (!ends_before_shadow && oracle_->Gpus(job) > r.extra) {
          blocked[static_cast<size_t>(b)] = true;  // it would delay the reserved job
          continue;
        }
      }
      const TryResult result = TryHead(b, try_start);
      if (result == TryResult::kWaiting) {
        blocked[static_cast<size_t>(b)] = true;
        if (!reserved && p >= 0) {
          r = oracle_->Reserve(job);
          reserved = true;
        }
      } else if (result == TryResult::kStarted && reserved && !ends_before_shadow) {
        r.extra -= oracle_->Gpus(job);
      }
    }
  }
}

std::unique_ptr<QueuePolicy> MakeQueuePolicy(QueueKind kind, const BackfillOracle* oracle) {
  switch (kind) {
    case QueueKind::kEasy:
      return std::make_unique<EasyQueuePolicy>(oracle);
    case QueueKind::kStrict:
      return std::make_unique<StrictQueuePolicy>();
    case QueueKind::kBackfill:
      return std::make_unique<BackfillQueuePolicy>();
    case QueueKind::kFifo:
      break;
  }
  return std::make_unique<FifoQueuePolicy>();
}

}  // namespace hived::sim
